// In-app notifications: alert messages of the "dashboard" channel arrive on the live connection as
// {type:"notification", message, url, rule, ...} and are shown as toasts (bottom right, newest on top).
import { onMessage } from "./live.js";

const MAX_TOASTS = 4;
const SHOW_MS = 12_000;

function container() {
  let box = document.getElementById("toasts");
  if (!box) {
    box = document.createElement("div");
    box.id = "toasts";
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", "Notifications");
    box.setAttribute("aria-live", "polite");
    Object.assign(box.style, { position: "fixed", right: "16px", bottom: "16px", display: "flex", flexDirection: "column-reverse", gap: "8px", zIndex: "1000", maxWidth: "380px" });
    document.body.append(box);
  }
  return box;
}

function toast(msg) {
  const box = container();
  const el = document.createElement("div");
  el.className = "toast";
  el.dataset.notificationId = String(msg.id ?? "");
  Object.assign(el.style, {
    background: "#111827", color: "#f9fafb", borderRadius: "8px", padding: "10px 12px", boxShadow: "0 6px 20px rgba(0,0,0,.25)",
    fontSize: "13.5px", lineHeight: "1.4", borderLeft: "4px solid #f59e0b",
  });
  const title = document.createElement("div");
  title.style.fontWeight = "600";
  title.textContent = `${msg.test ? "Test · " : "🔔 "}${msg.rule?.name ?? "Alert"}`;
  const body = document.createElement("div");
  body.textContent = msg.message ?? "";
  el.append(title, body);
  if (msg.suppressed_since_last > 0) {
    const more = document.createElement("div");
    more.style.opacity = ".75";
    more.textContent = `+${msg.suppressed_since_last} more during the cooldown`;
    el.append(more);
  }
  if (msg.url) {
    const a = document.createElement("a");
    a.href = new URL(msg.url, location.href).pathname;
    a.textContent = msg.run ? "Open run →" : "Open alerts →";
    Object.assign(a.style, { color: "#a5b4fc", display: "inline-block", marginTop: "4px" });
    el.append(a);
  }
  const close = document.createElement("button");
  close.type = "button";
  close.setAttribute("aria-label", "Dismiss");
  close.textContent = "×";
  Object.assign(close.style, { float: "right", background: "transparent", border: "0", color: "inherit", padding: "0 0 0 8px", cursor: "pointer" });
  close.onclick = () => el.remove();
  el.prepend(close);
  box.prepend(el);
  while (box.children.length > MAX_TOASTS) box.lastElementChild.remove();
  setTimeout(() => el.remove(), SHOW_MS);
}

onMessage((msg) => {
  if (msg && msg.type === "notification") toast(msg);
});
