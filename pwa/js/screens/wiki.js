// A project's knowledge base as a wiki: the page tree (lazy, one directory level per request, each
// page with its type, status, trust in words and a stale mark; a breadcrumb on phones), the page
// view (parts/wikipage.js), a page's history (parts/wikihistory.js), lint findings linked to their
// pages and the needs-review queue from stats. Params: id, path (/fs/... a page), view
// (history | lint | review), dir (a directory the phone's breadcrumb opened).
import { h, fill } from "../dom.js";
import { ago } from "../format.js";
import { errorBox, errorText, loading, retitle, rowKeys } from "./parts/common.js";
import { historyView } from "./parts/wikihistory.js";
import { tabBar } from "./project.js";
import { kbBase, leaf, pageView, parentDir, trustBadges, wikiHash, TRUST_WORDS } from "./parts/wikipage.js";

const NEEDS_REVIEW = ["unverified", "machine_confirmed", "edited_since_review"];

// The listing rows (trust, type...) of the pages under a directory, by path (the first 500).
function rowsUnder(app, projectId, prefix) {
  return app.api.get(`${kbBase(projectId)}/pages`, { prefix, meta: 1 })
    .then((got) => new Map(got.entries.map((r) => [r.path, r])));
}

function pageItem(projectId, entry, row, current) {
  return h("li", { class: "tree-leaf" },
    h("a", {
      class: ["tree-item", "wiki-leaf", entry.path === current && "on"], "data-row": "",
      href: wikiHash(projectId, { path: entry.path }), "aria-current": entry.path === current ? "page" : null,
    },
    h("span", { class: "tree-name" }, (row && row.title) || leaf(entry.path)),
    h("span", { class: "wiki-badges small" }, row ? trustBadges(row) : h("span", { class: "muted" }, leaf(entry.path)))));
}

// One directory: a disclosure button whose level (and its pages' rows) is read when it opens.
// ctx: {current: the page shown, open: the directory to unfold down to}.
function folder(app, projectId, path, label, ctx, open = false) {
  const children = h("ul", { class: "tree-children", hidden: true });
  let loaded = false;
  const btn = h("button", { type: "button", class: "tree-item dir", "data-row": "", "aria-expanded": "false" },
    h("span", { class: "tree-name" }, label));
  async function toggle() {
    const opening = btn.getAttribute("aria-expanded") !== "true";
    btn.setAttribute("aria-expanded", opening ? "true" : "false");
    children.hidden = !opening;
    if (!opening || loaded) return;
    loaded = true;
    fill(children, h("li", { class: "muted" }, "Loading…"));
    try {
      const [level, rows] = await Promise.all([
        app.api.get(`${kbBase(projectId)}/pages`, { prefix: path }), rowsUnder(app, projectId, path)]);
      fill(children, level.entries.length ? level.entries.map((e) => e.type === "dir"
        ? folder(app, projectId, `${e.path.replace(/\/$/, "")}/`, leaf(e.path), ctx,
          ctx.open.startsWith(`${e.path.replace(/\/$/, "")}/`)).node
        : pageItem(projectId, e, rows.get(e.path), ctx.current)) : h("li", { class: "muted" }, "No pages yet"),
      level.truncated ? h("li", { class: "muted small" }, "More entries than one level lists") : null);
    } catch (err) {
      loaded = false;
      fill(children, h("li", { class: "error-text" }, err.status === 404 ? "No pages yet" : errorText(err)));
    }
  }
  btn.addEventListener("click", toggle);
  const node = h("li", { class: "tree-dir" }, btn, children);
  return { node, ready: open ? toggle() : Promise.resolve() };
}

function breadcrumb(projectId, path) {
  const parts = path.replace(/^\/fs\//, "").split("/").filter(Boolean);
  const crumbs = [h("li", {}, h("a", { href: wikiHash(projectId, { dir: "/fs/" }) }, "Pages"))];
  let dir = "/fs/";
  parts.forEach((part, i) => {
    const last = i === parts.length - 1;
    if (!last || path.endsWith("/")) dir += `${part}/`;
    crumbs.push(h("li", {}, last ? h("span", { "aria-current": "page" }, part)
      : h("a", { href: wikiHash(projectId, { dir }) }, part)));
  });
  return h("nav", { class: "wiki-crumbs", "aria-label": "Breadcrumb" }, h("ol", {}, crumbs));
}

function subnav(projectId, view, stats) {
  const needs = stats ? stats.needs_review.total : null;
  const items = [["pages", "Pages"], ["review", needs === null ? "Needs review" : `Needs review (${needs})`], ["lint", "Lint"]];
  return h("nav", { class: "subtabs", "aria-label": "Wiki" }, items.map(([v, label]) => h("a", {
    class: ["subtab", v === view && "on"], href: wikiHash(projectId, v === "pages" ? {} : { view: v }),
    "aria-current": v === view ? "page" : null,
  }, label)));
}

function statsLine(stats) {
  if (!stats) return null;
  return h("p", { class: "muted small wiki-stats" }, `${stats.pages} pages · ${stats.unverified} unverified · ${stats.stale} stale`,
    stats.last_change_at ? ` · last change by ${stats.last_change_by} ${ago(stats.last_change_at)}` : "");
}

async function pagesView(app, projectId, params) {
  const current = params.path || "";
  const open = params.dir || (current ? parentDir(current) : "/fs/");
  const tree = h("ul", { class: "tree", "aria-label": "Pages" });
  const root = folder(app, projectId, "/fs/", "All pages", { current, open }, true);
  tree.append(root.node);
  const nav = h("nav", { class: "wiki-tree", "aria-label": "Knowledge base" }, tree);
  const pane = h("div", { class: "wiki-pane" });
  const node = h("div", { class: ["wiki-layout", current && "has-page"] },
    current || params.dir ? breadcrumb(projectId, current || open) : null, nav, pane);
  await root.ready;
  if (!current) {
    fill(pane, h("p", { class: "muted wiki-hint" }, "Choose a page."));
    return { node, keys: rowKeys(nav) };
  }
  const page = await pageView(app, projectId, current, (p) => rowsUnder(app, projectId, parentDir(p)).then((m) => m.get(p)));
  fill(pane, page.node);
  return { node, keys: rowKeys(nav), focus: pane.querySelector(".wiki-title") };
}

async function lintView(app, projectId) {
  const got = await app.api.get(`${kbBase(projectId)}/lint`);
  const rows = got.findings.map((f) => h("li", { class: "wiki-finding" },
    h("a", { href: wikiHash(projectId, { path: f.path }), "data-row": "" }, f.path),
    f.line ? h("span", { class: "muted small" }, ` line ${f.line}`) : null, " ",
    h("code", {}, f.code), h("span", {}, ` ${f.message}`)));
  return { node: h("section", { class: "wiki-lint", "aria-label": "Lint" },
    h("p", { class: "muted small" }, `Checked ${ago(got.checked_at)} · ${got.findings.length} findings`),
    rows.length ? h("ul", { class: "plain" }, rows) : h("p", { class: "muted" }, "No findings.")) };
}

async function reviewView(app, projectId, stats) {
  const got = await app.api.get(`${kbBase(projectId)}/pages`, { prefix: "/fs/", meta: 1 });
  const queue = got.entries.filter((r) => NEEDS_REVIEW.includes(r.trust));
  const counts = NEEDS_REVIEW.map((t) => `${stats.needs_review[t] ?? 0} ${TRUST_WORDS[t]}`).join(" · ");
  return { node: h("section", { class: "wiki-review", "aria-label": "Needs review" },
    h("p", { class: "muted small" }, counts, got.truncated ? " (the first 500 pages are listed)" : ""),
    queue.length ? h("ul", { class: "plain wiki-queue" }, queue.map((r) => h("li", {},
      h("a", { href: wikiHash(projectId, { path: r.path }), "data-row": "" }, r.title || leaf(r.path)), " ",
      h("span", { class: "wiki-badges small" }, trustBadges(r)),
      h("span", { class: "muted small" }, ` ${r.path}`)))) : h("p", { class: "muted" }, "Nothing needs review.")) };
}

export default {
  title: () => "Wiki",
  async render(root, params, app) {
    const id = params.id;
    retitle(root, `Wiki · ${id}`);
    const view = ["history", "lint", "review"].includes(params.view) ? params.view : "pages";
    const head = h("div", { class: "wiki-head" }, subnav(id, view, null));
    const body = h("div", { class: "wiki" }, loading());
    root.append(tabBar(id, "wiki"), head, body);
    let stats = null;
    try {
      stats = await app.api.get(`${kbBase(id)}/stats`);
    } catch (err) {
      if (err.status !== 404 || err.code !== "not_found") { fill(body, errorBox(err)); return {}; }
    }
    fill(head, subnav(id, view, stats), statsLine(stats));
    try {
      let shown;
      if (view === "history" && params.path) shown = await historyView(app, id, params.path);
      else if (view === "lint") shown = await lintView(app, id);
      else if (view === "review") shown = await reviewView(app, id, stats || { needs_review: {} });
      else shown = await pagesView(app, id, params);
      fill(body, shown.node);
      return { keys: shown.keys || rowKeys(body), onLive: (change) => (change.type === "refresh" && shown.reload ? shown.reload() : null) };
    } catch (err) {
      fill(body, errorBox(err));
      return {};
    }
  },
};
