// /datasets/:name: a file chosen in the import card is sent as it is (POST /datasets/:name/upload, the form's CSRF
// token as a header), up to 32 MiB, instead of pasted into the form; a refused file lists its bad lines.
const input = document.getElementById("dataset-upload");
const status = document.getElementById("upload-status");
const lines = document.getElementById("upload-lines");

function say(text) {
  status.hidden = false;
  status.textContent = text;
}

input?.addEventListener("change", async () => {
  const file = input.files?.[0];
  if (!file) return;
  const csv = /\.csv$/i.test(file.name) || file.type === "text/csv";
  const form = input.closest("form");
  const params = new URLSearchParams();
  if (csv) {
    const cols = (name) => form?.querySelector(`[name=${name}]`)?.value?.trim();
    if (cols("input_columns")) params.set("input", cols("input_columns"));
    if (cols("expected_columns")) params.set("expected_output", cols("expected_columns"));
  }
  lines.hidden = true;
  lines.replaceChildren();
  say(`Uploading ${file.name}…`);
  try {
    const res = await fetch(`${input.dataset.action}${params.size ? `?${params}` : ""}`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": csv ? "text/csv" : "application/x-ndjson", "x-csrf-token": input.dataset.csrf, accept: "application/json" },
      body: file,
    });
    const body = await res.json().catch(() => ({}));
    if (res.status === 201) {
      const flash = body.changed ? `Imported ${body.imported} items from ${file.name} as version ${body.version}.` : "Nothing changed: no new version.";
      location.href = `${location.pathname}?flash=${encodeURIComponent(flash)}`;
      return;
    }
    say(`${file.name} was not imported: ${body.error?.message ?? `HTTP ${res.status}`}`);
    for (const l of body.error?.lines ?? []) {
      const li = document.createElement("li");
      li.textContent = `line ${l.line}: ${l.message}`;
      lines.append(li);
    }
    lines.hidden = lines.childElementCount === 0;
  } catch (err) {
    say(`${file.name} could not be sent: ${err.message}`);
  }
  input.value = "";
});
