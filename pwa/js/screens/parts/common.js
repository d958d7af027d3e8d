// Small pieces the projects, sessions, storage and access screens share: the screen's title,
// loading and error states, j/k row movement, badges, form fields, and the projects' names.
import { h, visible } from "../../dom.js";

// The app draws the screen's h1 from the module's title (and moves focus to it); a screen that
// learns a better name (a project's display name) puts it there and in the document title.
export function retitle(root, text) {
  const h1 = root.parentElement && root.parentElement.querySelector("h1");
  if (h1) h1.textContent = visible(text);
  document.title = `${visible(text)} · Agent Hub`;
}

export function loading(what = "Loading") {
  return h("p", { class: "muted", role: "status" }, `${what}…`);
}

// An error as text (never markup): the hub's message and code.
export function errorText(err) {
  if (!err) return "Something went wrong";
  const code = err.code && !String(err.code).startsWith("http_") ? ` (${err.code})` : "";
  return `${err.message || String(err)}${code}`;
}

export function errorBox(err) {
  return h("p", { class: "error-text", role: "alert" }, errorText(err));
}

// j/k move focus through the visible rows (elements carrying data-row) of container; Enter opens
// the focused row when it is not already a control the browser activates itself.
export function rowKeys(container) {
  const rows = () => Array.from(container.querySelectorAll("[data-row]"))
    .filter((el) => el.getClientRects().length > 0);
  const move = (step) => {
    const all = rows();
    if (!all.length) return;
    const at = all.indexOf(document.activeElement);
    const next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.max(0, Math.min(all.length - 1, at + step));
    all[next].focus();
    all[next].scrollIntoView({ block: "nearest" });
  };
  return {
    j: () => move(1),
    k: () => move(-1),
    Enter: () => {
      const el = document.activeElement;
      if (el && container.contains(el) && el.matches("[data-row]")) el.click();
    },
  };
}

// A small count badge that says what it counts ("3 waiting").
export function badge(n, label, kind = "") {
  if (!n) return null;
  return h("span", { class: ["badge", kind] }, `${n} ${label}`);
}

// project id -> display name, for screens that list rows from many projects.
export async function projectNames(app) {
  const { projects } = await app.api.get("/projects");
  return new Map(projects.map((p) => [p.id, p.display_name]));
}

// A labelled form field: label text, then the control (a fresh id ties them together).
// An id rule from GET /limits (`{pattern, max_chars}`) as an input's attributes. The hub writes a
// JSON Schema pattern; an input's `pattern` is compiled with the `v` flag, where a literal `-` in a
// class must be escaped, and is anchored already. Unread limits: no attributes (the hub checks).
export function idRule(rule) {
  if (!rule) return {};
  const pattern = rule.pattern.replace(/^\^/, "").replace(/\$$/, "").replace(/-\]/g, "\\-]");
  return { pattern, maxLength: rule.max_chars };
}

export function field(labelText, control, hint = null) {
  const id = control.id || `f-${Math.random().toString(36).slice(2)}`;
  control.id = id;
  if (!["checkbox", "radio"].includes(control.type)) control.classList.add("field");
  const hintNode = hint ? h("span", { class: "hint", id: `${id}-hint` }, hint) : null;
  if (hintNode) control.setAttribute("aria-describedby", hintNode.id);
  return h("div", { class: "form-row" }, h("label", { class: "label", htmlFor: id }, labelText), control, hintNode);
}

// Run an async action with its button disabled meanwhile (a double tap sends once).
export async function busy(button, run) {
  if (button.disabled) return undefined;
  button.disabled = true;
  try {
    return await run();
  } finally {
    button.disabled = false;
  }
}
