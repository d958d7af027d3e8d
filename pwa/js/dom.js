// DOM building without HTML parsing: every string becomes a text node, so nothing an agent wrote
// can ever be read as markup. Never use innerHTML, insertAdjacentHTML or outerHTML in this app.

// The bidirectional embeddings, overrides and isolates: one U+202E turns "gnp.exe" round to look like
// "exe.png". In text and attributes they are shown as visible marks, never applied (the hub's pages do
// the same: hubhttp/pages/templates.py `visible`). Form values are left as they are: what is edited is
// what is saved.
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

export function visible(text) {
  return String(text).replace(BIDI_CONTROLS,
    (c) => `\u27e8U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27e9`);
}

const PROPS = new Set(["value", "checked", "disabled", "hidden", "selected", "type", "id", "tabIndex",
  "readOnly", "required", "open", "htmlFor", "autocomplete", "placeholder", "maxLength", "name"]);

function append(node, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child) append(node, c);
  } else if (child instanceof Node) {
    node.appendChild(child);
  } else {
    node.appendChild(document.createTextNode(visible(child)));
  }
}

// h("button", {class: "primary", onclick: fn, "aria-label": "Close"}, "Close")
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "class") {
      node.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : String(value);
    } else if (key === "style") {
      // Through the CSSOM: the app's CSP refuses inline style attributes, not style properties.
      if (typeof value === "string") node.style.cssText = value; else Object.assign(node.style, value);
    } else if (key === "dataset") {
      Object.assign(node.dataset, value);
    } else if (key === "text") {
      node.textContent = visible(value);
    } else if (PROPS.has(key)) {
      node[key] = value;
    } else {
      node.setAttribute(key, value === true ? "" : visible(value));
    }
  }
  append(node, children);
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// A fragment of renderItem(item, index) for each item.
export function list(items, renderItem) {
  const frag = document.createDocumentFragment();
  items.forEach((item, i) => append(frag, renderItem(item, i)));
  return frag;
}

// Replace node's children with the given ones.
export function fill(node, ...children) {
  clear(node);
  append(node, children);
  return node;
}

// Is the keyboard focus in a field where typing goes (shortcuts must not fire there)?
export function typing(target) {
  const el = target instanceof Element ? target : document.activeElement;
  if (!el) return false;
  if (el.isContentEditable) return true;
  const tag = el.tagName;
  if (tag === "TEXTAREA" || tag === "SELECT") return true;
  if (tag === "INPUT") {
    const t = (el.getAttribute("type") || "text").toLowerCase();
    return !["button", "submit", "checkbox", "radio", "reset"].includes(t);
  }
  return false;
}
