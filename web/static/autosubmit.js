// A <select data-autosubmit> submits its form when changed (instead of an inline onchange handler, which the
// Content-Security-Policy forbids).
document.addEventListener("change", (e) => {
  const el = e.target;
  if (el instanceof HTMLSelectElement && el.dataset.autosubmit !== undefined && el.form) el.form.requestSubmit();
});
