// Hub-rendered HTML (the hub's one markdown renderer: raw HTML escaped, unsafe links refused) put
// into the app without innerHTML. The HTML is parsed by DOMParser into an inert document (no script
// runs, nothing loads there) and copied node by node into this document through an allow-list:
// unknown elements keep only their text, dangerous ones (script, style, frames, forms, svg...) are
// dropped whole, no attribute is copied unless listed, links must be http(s)/mailto (or resolve to a
// place in the app), and nothing loads from another origin. A second wall behind the hub's own.
//
// richContent(html, {resolve, shift}) -> <div class="rich">
//   resolve(href) -> "#/..." | null: a link the caller maps into the app (a wiki page's link to
//     another page); an unresolved relative link keeps its text and loses its target.
//   shift: heading levels moved down (default 1: the page's "# Title" is an h2 under the screen's h1).
import { h, visible } from "./dom.js";

// Elements copied as themselves (with the attributes ATTRS lists for them).
const KEEP = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code",
  "em", "strong", "s", "del", "ins", "a", "img", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "hr", "br",
  "input", "sup", "sub", "section", "div", "span", "mark", "kbd", "dl", "dt", "dd", "caption"]);
// Elements dropped with everything inside them (their text is not the page's text).
const DROP = new Set(["script", "style", "template", "iframe", "frame", "frameset", "object", "embed", "applet",
  "noscript", "svg", "math", "form", "button", "select", "textarea", "option", "link", "meta", "base", "head",
  "title", "audio", "video", "source", "track", "canvas", "dialog", "portal"]);
const ATTRS = { a: ["href", "title"], img: ["alt", "title"], ol: ["start"], th: ["align"], td: ["align"], "*": ["class"] };
// Class names the renderer gives (code languages, callouts, task lists, footnotes); others go.
const CLASSES = new Set(["markdown-alert", "markdown-alert-title", "markdown-alert-note", "markdown-alert-tip",
  "markdown-alert-important", "markdown-alert-warning", "markdown-alert-caution", "contains-task-list",
  "task-list-item", "task-list-item-checkbox", "footnotes", "footnotes-sep", "footnotes-list", "footnote-item",
  "footnote-ref", "footnote-backref", "mermaid"]);
const LANGUAGE = /^language-[\w+#.-]{1,40}$/;
const ALIGN = /text-align:\s*(left|right|center)/;
const MAX_DEPTH = 120;
const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);

function classes(src) {
  const kept = (src.getAttribute("class") || "").split(/\s+/).filter((c) => CLASSES.has(c) || LANGUAGE.test(c));
  const align = ALIGN.exec(src.getAttribute("style") || "");
  if (align) kept.push(`align-${align[1]}`); // the app's CSP refuses style attributes: a class instead
  return kept.join(" ");
}

// A link's target in the app: an in-page anchor, a resolved app hash, an outside URL, or null.
function target(href, resolve) {
  const raw = (href || "").trim();
  if (!raw) return null;
  if (raw.startsWith("#")) return { anchor: raw.slice(1) };
  const mapped = resolve ? resolve(raw) : null;
  if (mapped) return { hash: mapped };
  let url;
  try { url = new URL(raw); } catch { return null; } // relative and unresolved: no target
  if (!SAFE_PROTOCOLS.has(url.protocol)) return null;
  return { outside: url.href };
}

function link(src, ctx) {
  const to = target(src.getAttribute("href"), ctx.resolve);
  const title = src.getAttribute("title");
  if (!to) return h("span", { class: "rich-deadlink", title: src.getAttribute("href") || null });
  if (to.anchor !== undefined) {
    // Hash routing owns location.hash: an in-page anchor scrolls inside the rendered block instead.
    return h("a", {
      href: location.hash || "#", class: classes(src) || null, title, "data-to": to.anchor,
      onclick: (e) => {
        e.preventDefault();
        const root = e.currentTarget.closest(".rich");
        const dest = root && root.querySelector(`[data-anchor="${CSS.escape(to.anchor)}"]`);
        if (dest) { dest.scrollIntoView({ block: "center" }); dest.tabIndex = -1; dest.focus(); }
      },
    });
  }
  if (to.hash) return h("a", { href: to.hash, title, class: classes(src) || null });
  return h("a", { href: to.outside, title, target: "_blank", rel: "noopener noreferrer nofollow", class: classes(src) || null });
}

// Images load only from the hub itself (the app's CSP says so too); another origin's image would
// tell it the operator read the page, so it becomes a link naming its alt text.
function image(src) {
  const alt = src.getAttribute("alt") || "";
  let url;
  try { url = new URL(src.getAttribute("src") || "", location.href); } catch { return document.createTextNode(visible(alt)); }
  if (url.origin === location.origin && (url.protocol === "http:" || url.protocol === "https:")) {
    return h("img", { src: url.href, alt, title: src.getAttribute("title"), loading: "lazy", referrerpolicy: "no-referrer" });
  }
  if (!SAFE_PROTOCOLS.has(url.protocol)) return document.createTextNode(visible(alt));
  return h("a", { href: url.href, target: "_blank", rel: "noopener noreferrer nofollow", class: "rich-image-link" },
    `Image: ${alt || url.href}`);
}

function element(src, ctx) {
  const tag = src.localName;
  if (tag === "a") return link(src, ctx);
  if (tag === "img") return image(src);
  if (tag === "input") {
    // Task list boxes only, and never editable here.
    if ((src.getAttribute("type") || "").toLowerCase() !== "checkbox") return null;
    return h("input", { type: "checkbox", disabled: true, checked: src.hasAttribute("checked"), class: "task-list-item-checkbox",
      "aria-label": src.hasAttribute("checked") ? "done" : "not done" });
  }
  let name = tag;
  const level = /^h([1-6])$/.exec(tag);
  if (level) name = `h${Math.min(6, Number(level[1]) + ctx.shift)}`;
  const out = document.createElement(name);
  for (const attr of [...(ATTRS[tag] || []), ...ATTRS["*"]]) {
    if (attr === "class") {
      const c = classes(src);
      if (c) out.className = c;
    } else if (attr === "start") {
      const n = Number.parseInt(src.getAttribute("start") || "", 10);
      if (Number.isFinite(n) && n >= 0 && n < 1e9) out.setAttribute("start", String(n));
    } else if (attr === "align") {
      const v = (src.getAttribute("align") || "").toLowerCase();
      if (["left", "right", "center"].includes(v)) out.classList.add(`align-${v}`);
    } else if (src.hasAttribute(attr)) {
      out.setAttribute(attr, src.getAttribute(attr));
    }
  }
  // Footnote targets: ids would clash across blocks and with the app's own; a scoped data mark.
  const id = src.getAttribute("id");
  if (id) out.dataset.anchor = id;
  return out;
}

function copy(src, into, ctx, depth) {
  for (const child of src.childNodes) {
    if (child.nodeType === Node.TEXT_NODE) {
      into.appendChild(document.createTextNode(visible(child.data)));
      continue;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) continue; // comments, processing instructions
    const tag = child.localName;
    if (DROP.has(tag)) continue;
    if (depth >= MAX_DEPTH || !KEEP.has(tag)) {
      copy(child, into, ctx, depth + 1); // unknown: its text only (and its children's)
      continue;
    }
    const made = element(child, ctx);
    if (!made) continue;
    if (tag !== "img" && tag !== "input" && made.nodeType === Node.ELEMENT_NODE) copy(child, made, ctx, depth + 1);
    if (tag === "pre") made.tabIndex = 0; // a wide code block scrolls: keyboard users reach it
    if (tag === "table") {
      // A wide table scrolls sideways on a phone inside a focusable frame.
      into.appendChild(h("div", { class: "rich-table", tabIndex: 0, role: "region", "aria-label": "Table" }, made));
      continue;
    }
    into.appendChild(made);
  }
}

export function richContent(html, { resolve = null, shift = 1 } = {}) {
  const root = h("div", { class: "rich" });
  const inert = new DOMParser().parseFromString(String(html ?? ""), "text/html");
  copy(inert.body, root, { resolve, shift }, 0);
  return root;
}
