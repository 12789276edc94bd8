// Forms with data-confirm="question" ask before they submit (instead of inline onsubmit handlers, which the
// Content-Security-Policy forbids).
document.addEventListener("submit", (e) => {
  const form = e.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) e.preventDefault();
});
