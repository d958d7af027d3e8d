// The app's own dialogs and toasts (never alert, confirm or prompt).
import { h, clear } from "./dom.js";

// A modal <dialog>; resolves to the chosen action's value, or null when dismissed (Esc, backdrop).
export function dialog({ title, body, actions = [{ label: "Close", value: null }], focus } = {}) {
  return new Promise((resolve) => {
    const titleId = "dlg-" + Math.random().toString(36).slice(2);
    let done = false;
    const dlg = h("dialog", { class: "dialog", "aria-labelledby": titleId });
    // A modal dialog makes the rest of the page inert (unseen, unannounced): toasts raised while it
    // is open go to a live region of its own, and those still showing move back out when it closes.
    const toasts = h("div", { class: "toasts in-dialog", "aria-live": "polite" });
    const finish = (value) => {
      if (done) return;
      done = true;
      const region = document.getElementById("toasts");
      if (region) region.append(...toasts.children);
      dlg.close();
      dlg.remove();
      if (opener && document.contains(opener)) opener.focus();
      resolve(value);
    };
    const buttons = actions.map((a) => h("button", {
      type: "button",
      class: ["btn", a.primary && "primary", a.danger && "danger"],
      dataset: { value: a.value === null ? "" : String(a.value) },
      onclick: () => finish(a.value),
    }, a.label));
    dlg.append(
      h("h2", { id: titleId }, title || ""),
      body ? h("div", { class: "dialog-body" }, body) : null,
      h("div", { class: "dialog-actions" }, buttons),
      toasts,
    );
    dlg.addEventListener("cancel", (e) => { e.preventDefault(); finish(null); });
    dlg.addEventListener("click", (e) => { if (e.target === dlg) finish(null); });
    const opener = document.activeElement;
    document.body.appendChild(dlg);
    dlg.showModal();
    const i = actions.findIndex((a) => a.value === focus);
    const target = i >= 0 ? buttons[i] : dlg.querySelector("input, textarea, select") || buttons[0];
    if (target) target.focus();
  });
}

// Ask for a word to be typed before a destructive action; resolves true only when it matches.
export async function confirmTyped({ title, text, word, action = "Delete" }) {
  const input = h("input", { type: "text", autocomplete: "off", class: "field", "aria-describedby": "typed-hint" });
  const hint = h("p", { id: "typed-hint" }, "Type ", h("strong", {}, word), " to confirm.");
  const body = h("div", {}, text ? h("p", {}, text) : null, hint, h("label", { class: "label" }, "Confirmation", input));
  const chosen = dialog({ title, body, actions: [
    { label: "Cancel", value: false },
    { label: action, value: true, danger: true },
  ] });
  const confirmBtn = () => document.querySelector("dialog.dialog button.danger");
  queueMicrotask(() => {
    const btn = confirmBtn();
    if (btn) btn.disabled = true;
    input.addEventListener("input", () => { const b = confirmBtn(); if (b) b.disabled = input.value !== word; });
    input.focus();
  });
  return (await chosen) === true && input.value === word;
}

// The live region a toast goes to: the open modal dialog's (the top one), else the page's.
function toastRegion() {
  const open = Array.from(document.querySelectorAll("dialog[open]")).filter((d) => d.matches(":modal"));
  const top = open.length ? open[open.length - 1].querySelector(":scope > .toasts") : null;
  return top || document.getElementById("toasts");
}

// A toast in the live region; {kind: "ok"|"error", action: {label, run}, timeout}.
export function toast(text, { kind = "ok", action = null, timeout } = {}) {
  const region = toastRegion();
  if (!region) return () => {};
  const item = h("div", { class: ["toast", kind], role: kind === "error" ? "alert" : "status" },
    h("span", { class: "toast-text" }, text));
  let timer = null;
  const close = () => { clearTimeout(timer); item.remove(); };
  if (action) {
    item.append(h("button", { type: "button", class: "btn small", onclick: async () => {
      close();
      await action.run();
    } }, action.label));
  }
  item.append(h("button", { type: "button", class: "btn small ghost", "aria-label": "Dismiss", onclick: close }, "×"));
  region.append(item);
  timer = setTimeout(close, timeout ?? (action ? 60000 : kind === "error" ? 8000 : 4000));
  return close;
}

export function clearToasts() {
  for (const region of document.querySelectorAll(".toasts")) clear(region);
}
