// A page's history in the wiki: every version newest first (with whether its bytes are kept), any
// kept version viewable (rendered by the hub, or as its text) and revertable against the version
// held now; and Forget history (admin, behind the page's name typed to confirm).
import { h, fill } from "../../dom.js";
import { ago, bytes, when } from "../../format.js";
import { richContent } from "../../rich.js";
import { busy, errorBox, errorText, loading } from "./common.js";
import { kbBase, leaf, pageLinkResolver, pageUrl, wikiHash } from "./wikipage.js";

function short(version) {
  return version ? version.replace(/^sha256:/, "").slice(0, 10) : "none";
}

async function showVersion(app, projectId, path, row, viewer) {
  viewer.hidden = false;
  fill(viewer, loading(`Opening version ${short(row.version)}`));
  try {
    const page = await app.api.get(pageUrl(projectId, path), { version: row.version, rendered: 1 });
    const title = h("h3", { tabIndex: -1 }, `Version ${short(row.version)} by ${row.actor}, ${when(row.at)}`);
    const asText = h("pre", { class: "entry-content", tabIndex: 0, hidden: true }, page.content);
    const rendered = richContent(page.rendered || "", { resolve: pageLinkResolver(projectId, path), shift: 3 });
    const toggle = h("button", { type: "button", class: "btn", "aria-pressed": "false" }, "Show the text");
    toggle.addEventListener("click", () => {
      const text = asText.hidden;
      asText.hidden = !text;
      rendered.hidden = text;
      toggle.setAttribute("aria-pressed", text ? "true" : "false");
    });
    fill(viewer, title, h("div", { class: "btn-row" }, toggle), rendered, asText);
    title.focus();
  } catch (err) {
    fill(viewer, errorBox(err));
  }
}

async function revert(app, projectId, path, row, current, reload) {
  const choice = await app.dialog({
    title: `Revert ${leaf(path)}?`,
    body: h("p", {}, `The page is written back as version ${short(row.version)} (by ${row.actor}, ${when(row.at)}). `
      + "The version held now stays in the history."),
    actions: [{ label: "Cancel", value: null }, { label: "Revert", value: "revert", primary: true }],
  });
  if (choice !== "revert") return;
  try {
    const done = await app.api.post(`${pageUrl(projectId, path)}/revert`,
      { version: row.version, if_version: current || "absent" });
    app.toast(done.changed ? `Reverted to ${short(row.version)}` : "That version is the one held already");
  } catch (err) {
    app.toast(err.status === 409 ? "The page changed meanwhile: look at the history again" : errorText(err), { kind: "error" });
  }
  await reload();
}

async function forget(app, projectId, path, reload) {
  const ok = await app.confirmTyped({
    title: `Forget the history of ${leaf(path)}?`,
    text: "The kept bytes of every version but the one held now are removed for good; the log keeps their rows.",
    word: leaf(path), action: "Forget history",
  });
  if (!ok) return;
  try {
    const done = await app.api.del(`${kbBase(projectId)}/versions?${new URLSearchParams({ path })}`);
    app.toast(`Forgot ${done.versions_forgotten} versions (${bytes(done.bytes_forgotten)})`);
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
  }
  await reload();
}

function versionRow(app, projectId, path, row, current, viewer, reload) {
  const actions = [];
  if (row.kept && row.version) {
    actions.push(h("button", { type: "button", class: "btn small", "data-row": "",
      onclick: () => showVersion(app, projectId, path, row, viewer) }, "View"));
    if (!row.current) {
      const btn = h("button", { type: "button", class: "btn small" }, "Revert to this");
      btn.addEventListener("click", () => busy(btn, () => revert(app, projectId, path, row, current, reload)));
      actions.push(btn);
    }
  }
  return h("li", { class: ["wiki-version", row.current && "current"] },
    h("span", {}, h("strong", {}, row.op.replace(/^kb\./, "")), ` by ${row.actor} `,
      h("time", { datetime: row.at, title: when(row.at) }, ago(row.at))),
    h("span", { class: "muted small" }, ` ${short(row.version)}`, row.size_bytes !== null ? ` · ${bytes(row.size_bytes)}` : "",
      row.current ? " · held now" : "", !row.kept && row.version ? " · bytes forgotten" : ""),
    row.summary ? h("span", { class: "muted small" }, ` · ${row.summary}`) : null,
    actions.length ? h("span", { class: "btn-row inline" }, actions) : null);
}

export async function historyView(app, projectId, path) {
  const node = h("section", { class: "wiki-history", "aria-label": "History" });
  async function load() {
    fill(node, loading("Reading the history"));
    let got;
    try {
      // The hub's page of versions at its largest (GET /limits), or its default when unread.
      const limit = app.limits ? app.limits.kb_history_page : undefined;
      got = await app.api.get(`${kbBase(projectId)}/versions`, limit ? { path, limit } : { path });
    } catch (err) {
      fill(node, errorBox(err));
      return;
    }
    const viewer = h("section", { class: "panel wiki-version-view", "aria-label": "Version", hidden: true });
    const admin = !app.me || app.me.role === "admin";
    const forgetBtn = admin ? h("button", { type: "button", class: "btn danger" }, "Forget history") : null;
    if (forgetBtn) forgetBtn.addEventListener("click", () => busy(forgetBtn, () => forget(app, projectId, path, load)));
    fill(node,
      h("h2", { tabIndex: -1 }, `History of ${leaf(path)}`),
      h("p", { class: "muted small" }, `${path} · ${got.total} versions`, got.truncated ? ` (newest ${got.versions.length} shown)` : ""),
      h("div", { class: "btn-row" }, h("a", { class: "btn", href: wikiHash(projectId, { path }) }, "Back to the page"), forgetBtn),
      h("ol", { class: "plain wiki-versions" },
        got.versions.map((row) => versionRow(app, projectId, path, row, got.current_version, viewer, load))),
      viewer);
  }
  await load();
  return { node, reload: load };
}
