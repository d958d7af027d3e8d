// A session's brain as a lazy tree (one directory level per request, fetched when opened) and an
// entry viewer that shows the entry's content as text. As a screen (params.id: the session) it
// draws the tree under its own heading; the session screen embeds it.
import { h, fill } from "../dom.js";
import { bytes, when } from "../format.js";
import { errorBox, errorText } from "./parts/common.js";

const ROOTS = [["/fs/", "Files (/fs/)"], ["/kv/", "Keys (/kv/)"]];

function leaf(path) {
  const parts = path.replace(/\/$/, "").split("/");
  return parts[parts.length - 1] || path;
}

export function brainTree(app, sessionId) {
  const base = `/sessions/${encodeURIComponent(sessionId)}/brain`;
  const viewer = h("section", { class: "entry-viewer panel", "aria-label": "Entry", hidden: true });
  const tree = h("ul", { class: "tree", "aria-label": "Brain" });
  const node = h("div", { class: "brain" }, tree, viewer);

  let opened = 0; // the newest entry asked for wins when answers cross
  let opener = null; // the tree entry the viewer shows, where focus goes back on close

  function close() {
    if (viewer.hidden) return;
    viewer.hidden = true;
    if (opener && document.contains(opener)) opener.focus();
  }

  async function show(path, from = null) {
    const mine = ++opened;
    opener = from;
    viewer.hidden = false;
    fill(viewer, h("p", { class: "muted", role: "status" }, `Opening ${path}…`));
    try {
      const entry = await app.api.get(`${base}/entry`, { path });
      if (mine !== opened) return;
      const title = h("h3", { tabIndex: -1, class: "entry-path" }, entry.path);
      fill(viewer, title,
        h("p", { class: "muted small" }, `${entry.type} · ${bytes(entry.size_bytes)}`,
          entry.written_at ? ` · written ${when(entry.written_at)}` : ""),
        h("pre", { class: "entry-content", tabIndex: 0 }, entry.content),
        h("button", { type: "button", class: "btn", onclick: close }, "Close entry"));
      title.focus();
    } catch (err) {
      if (mine !== opened) return;
      const text = err.status === 422 ? "This entry holds bytes that are not UTF-8 text; it cannot be shown." : errorText(err);
      fill(viewer, h("p", { class: "error-text", role: "alert" }, `${path}: ${text}`));
    }
  }

  function item(entry) {
    if (entry.type !== "dir") {
      return h("li", { class: "tree-leaf" },
        h("button", { type: "button", class: "tree-item", "data-row": "", onclick: (e) => show(entry.path, e.currentTarget) },
          h("span", { class: "tree-name" }, leaf(entry.path)),
          h("span", { class: "muted small" }, ` ${entry.type} · ${bytes(entry.size_bytes)}`)));
    }
    return folder(`${entry.path.replace(/\/$/, "")}/`, leaf(entry.path), entry.size_bytes);
  }

  // A directory: a disclosure button whose level is read from the hub the first time it opens.
  function folder(path, label, size = null) {
    const children = h("ul", { class: "tree-children", hidden: true });
    let loaded = false;
    const btn = h("button", {
      type: "button", class: "tree-item dir", "data-row": "", "aria-expanded": "false",
      onclick: async () => {
        const open = btn.getAttribute("aria-expanded") !== "true";
        btn.setAttribute("aria-expanded", open ? "true" : "false");
        children.hidden = !open;
        if (open && !loaded) {
          loaded = true;
          fill(children, h("li", { class: "muted" }, "Loading…"));
          try {
            const level = await app.api.get(base, { path });
            fill(children, level.entries.length ? level.entries.map(item) : h("li", { class: "muted" }, "Empty"),
              level.truncated ? h("li", { class: "muted small" }, "More entries than one level lists") : null);
          } catch (err) {
            loaded = false;
            const text = err.status === 404 ? "Nothing written yet" : errorText(err);
            fill(children, h("li", { class: "error-text" }, text));
          }
        }
      },
    }, h("span", { class: "tree-name" }, label), size !== null ? h("span", { class: "muted small" }, ` ${bytes(size)}`) : null);
    return h("li", { class: "tree-dir" }, btn, children);
  }

  fill(tree, ROOTS.map(([path, label]) => folder(path, label)));
  return { node, show, close };
}

export default {
  title: () => "Brain",
  async render(root, params, app) {
    const tree = brainTree(app, params.id);
    root.append(tree.node);
    return {};
  },
};
