// A knowledge base page in the wiki: its meta line (frontmatter, trust in words, stale, last
// writer), its markdown as rendered by the hub (through rich.js), backlinks, Review, and Edit with
// if_version: a write that lands meanwhile is shown beside the human's text as a conflict, and
// nothing is overwritten unless the human chooses so against the version they were shown.
import { h, fill } from "../../dom.js";
import { ago, when } from "../../format.js";
import { richContent } from "../../rich.js";
import { busy, errorBox, errorText, field, loading } from "./common.js";

export const TRUST_WORDS = {
  unverified: "unverified",
  human_reviewed: "human reviewed",
  machine_confirmed: "machine confirmed",
  edited_since_review: "edited since review",
};

export function kbBase(projectId) {
  return `/projects/${encodeURIComponent(projectId)}/kb`;
}

// "/fs/a/b.md" -> the URL form of the page route: "fs/a/b.md" with each segment encoded.
export function pageUrl(projectId, path) {
  return `${kbBase(projectId)}/pages/${path.replace(/^\//, "").split("/").map(encodeURIComponent).join("/")}`;
}

export function wikiHash(projectId, query = {}) {
  const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v));
  const qs = q.toString();
  return `#/projects/${encodeURIComponent(projectId)}/wiki${qs ? "?" + qs : ""}`;
}

export function leaf(path) {
  const parts = path.replace(/\/$/, "").split("/");
  return parts[parts.length - 1] || path;
}

export function parentDir(path) {
  return path.replace(/\/[^/]*\/?$/, "/") || "/fs/";
}

// A link in a page to another page (relative to the page's directory, or /fs/... absolute) as
// the wiki's own address; anything with a scheme is left to rich.js's outside-link rules.
export function pageLinkResolver(projectId, pagePath) {
  return (href) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith("//")) return null;
    const bare = href.split("#", 1)[0].split("?", 1)[0];
    if (!bare) return null;
    let resolved;
    try {
      const absolute = bare.startsWith("/") ? (bare.startsWith("/fs/") ? bare : `/fs${bare}`) : parentDir(pagePath) + bare;
      resolved = decodeURIComponent(new URL(absolute, "http://kb.invalid").pathname);
    } catch { return null; }
    if (!resolved.startsWith("/fs/")) return null;
    return wikiHash(projectId, { path: resolved });
  };
}

// The words a page row's fields say: type · status · trust · stale.
export function trustBadges(row) {
  if (!row) return [];
  return [
    row.page_type ? h("span", { class: "tag" }, row.page_type) : null,
    row.status ? h("span", { class: "tag" }, row.status) : null,
    row.trust ? h("span", { class: ["trust", `trust-${row.trust}`] }, TRUST_WORDS[row.trust] || row.trust) : null,
    row.stale ? h("span", { class: "stale" }, "stale") : null,
  ];
}

function metaLine(page, row) {
  const bits = [];
  if (row && row.tags && row.tags.length) bits.push(`tags: ${row.tags.join(", ")}`);
  if (row && row.verified_by) bits.push(`verified by ${row.verified_by}${row.verified_at ? ` ${ago(row.verified_at)}` : ""}`);
  if (row && row.stale_after) bits.push(`stale after ${row.stale_after}`);
  bits.push(`last written by ${page.last_write.actor} ${ago(page.last_write.at)}`);
  return h("p", { class: "wiki-meta muted small" },
    h("span", { class: "wiki-badges" }, trustBadges(row)), " ", bits.join(" · "));
}

async function backlinks(app, projectId, path) {
  const box = h("section", { class: "wiki-backlinks", "aria-label": "Backlinks" }, h("h3", {}, "Linked from"), loading());
  app.api.get(`${kbBase(projectId)}/backlinks`, { path }).then((rows) => {
    fill(box, h("h3", {}, "Linked from"), rows.length
      ? h("ul", { class: "plain" }, rows.map((r) => h("li", {},
        h("a", { href: wikiHash(projectId, { path: r.path }) }, r.title || leaf(r.path)), " ",
        h("span", { class: "muted small" }, r.path))))
      : h("p", { class: "muted" }, "No page links here."));
  }).catch((err) => fill(box, h("h3", {}, "Linked from"), errorBox(err)));
  return box;
}

async function review(app, projectId, page, reload) {
  try {
    await app.api.post(`${pageUrl(projectId, page.path)}/review`, { if_version: page.version });
    app.toast("Reviewed");
  } catch (err) {
    app.toast(err.status === 409 ? "The page changed since you read it: read it again before reviewing" : errorText(err),
      { kind: "error" });
  }
  await reload();
}

// The conflict: the human's text (still editable) beside what the hub holds now.
function conflictView(app, projectId, mine, theirs, done) {
  const text = h("textarea", { rows: 14, class: "field wiki-editor", name: "mine", "aria-label": "Your version" });
  text.value = mine;
  const status = h("p", { class: "error-text", role: "alert" },
    `${theirs.last_write.actor} wrote this page ${ago(theirs.last_write.at)}, while you were editing. Nothing was overwritten.`);
  const keep = h("button", { type: "button", class: "btn danger" }, "Save mine over theirs");
  const take = h("button", { type: "button", class: "btn" }, "Discard mine, keep theirs");
  keep.addEventListener("click", () => busy(keep, async () => {
    try {
      await app.api.put(pageUrl(projectId, theirs.path), { content: text.value, if_version: theirs.version });
      app.toast("Saved");
      done();
    } catch (err) {
      if (err.status === 409) { app.toast("It changed again: compare once more", { kind: "error" }); done(true, text.value); }
      else app.toast(errorText(err), { kind: "error" });
    }
  }));
  take.addEventListener("click", () => done());
  return h("section", { class: "wiki-conflict panel", "aria-label": "Conflict" },
    h("h3", { tabIndex: -1 }, "Conflict: the page changed while you edited"), status,
    h("div", { class: "wiki-compare" },
      h("div", { class: "wiki-side" }, h("h4", {}, "Yours"), text),
      h("div", { class: "wiki-side" }, h("h4", {}, `Stored now (by ${theirs.last_write.actor}, ${when(theirs.last_write.at)})`),
        h("pre", { class: "wiki-theirs", tabIndex: 0 }, theirs.content))),
    h("div", { class: "btn-row" }, keep, take));
}

// Edit: the page's text against the version it was read at.
function editor(app, projectId, page, finish) {
  const text = h("textarea", { rows: 18, name: "content" });
  text.value = page.content;
  const save = h("button", { type: "submit", class: "btn primary" }, "Save");
  const cancel = h("button", { type: "button", class: "btn", onclick: () => finish() }, "Cancel");
  const box = h("div", { class: "wiki-edit" });
  const form = h("form", {
    class: "form panel", "aria-label": "Edit page",
    onsubmit: (e) => {
      e.preventDefault();
      busy(save, async () => {
        try {
          await app.api.put(pageUrl(projectId, page.path), { content: text.value, if_version: page.version });
          app.toast("Saved");
          finish();
        } catch (err) {
          if (err.status !== 409) { app.toast(errorText(err), { kind: "error" }); return; }
          await showConflict(text.value);
        }
      });
    },
  }, field(`Edit ${leaf(page.path)}`, text, "Markdown with its frontmatter"), h("div", { class: "btn-row" }, save, cancel));

  async function showConflict(mine) {
    let theirs;
    try { theirs = await app.api.get(pageUrl(projectId, page.path)); } catch (err) { app.toast(errorText(err), { kind: "error" }); return; }
    const view = conflictView(app, projectId, mine, theirs, (again, latest) => again ? showConflict(latest) : finish());
    fill(box, view);
    view.querySelector("h3").focus();
  }
  fill(box, form);
  return box;
}

// The page view; `row` is its listing row (trust, type...) when the listing had it.
export async function pageView(app, projectId, path, findRow) {
  const node = h("article", { class: "wiki-page", "aria-label": "Page" }, loading(`Opening ${path}`));
  async function load() {
    let page;
    try {
      page = await app.api.get(pageUrl(projectId, path), { rendered: 1 });
    } catch (err) {
      fill(node, errorBox(err));
      return;
    }
    const row = await findRow(path).catch(() => null);
    const title = h("h2", { tabIndex: -1, class: "wiki-title" }, (row && row.title) || leaf(path));
    const reviewed = row && row.trust === "human_reviewed";
    const reviewBtn = h("button", { type: "button", class: "btn primary" }, reviewed ? "Review again" : "Review");
    reviewBtn.addEventListener("click", () => busy(reviewBtn, () => review(app, projectId, page, load)));
    const editBtn = h("button", { type: "button", class: "btn" }, "Edit");
    const body = path.endsWith(".md") || path.endsWith(".markdown")
      ? richContent(page.rendered || "", { resolve: pageLinkResolver(projectId, path), shift: 2 })
      : h("pre", { class: "entry-content", tabIndex: 0 }, page.content);
    const main = h("div", {}, body);
    editBtn.addEventListener("click", () => fill(main, editor(app, projectId, page, () => load())));
    fill(node, title, h("p", { class: "muted small wiki-path" }, path), metaLine(page, row),
      row && row.description ? h("p", { class: "wiki-description" }, row.description) : null,
      h("div", { class: "btn-row" }, reviewBtn, editBtn,
        h("a", { class: "btn", href: wikiHash(projectId, { path, view: "history" }) }, "History")),
      main, await backlinks(app, projectId, path));
  }
  await load();
  return { node, reload: load };
}
