// A project's artifacts as a gallery, grouped by day, agent or kind (`?group=`); a protected one is a
// lock tile (its title only: the hub holds its ciphertext). Every title an agent wrote goes in as text.
import { h, fill } from "../dom.js";
import { ago, when } from "../format.js";
import { badge, errorBox, loading, rowKeys } from "./parts/common.js";
import { tabBar } from "./project.js";

const GROUPS = [["day", "Day"], ["agent", "Agent"], ["kind", "Kind"]];

function groupKey(a, by) {
  if (by === "agent") return a.actor || "human";
  if (by === "kind") return a.kind === "html" ? "HTML" : "Markdown";
  return (a.updated_at || "").slice(0, 10) || "undated";
}

// Groups in first-seen order: the list comes newest updated first, so days run newest first.
export function grouped(artifacts, by) {
  const groups = new Map();
  for (const a of artifacts) {
    const key = groupKey(a, by);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(a);
  }
  return groups;
}

function kindMark(a) {
  const kind = a.kind === "html" ? "HTML" : "Markdown";
  return a.protected ? [h("span", { class: "icon icon-access", "aria-hidden": "true" }), ` Locked ${kind}`] : kind;
}

function tile(a) {
  const meta = [`v${a.version}`, a.actor || "human"].join(" · ");
  return h("li", { class: ["art-tile", a.protected && "locked"] },
    h("a", { class: "art-link", href: `#/artifacts/${encodeURIComponent(a.id)}`, "data-row": "" },
      h("span", { class: "art-kind" }, kindMark(a)),
      h("span", { class: "art-title" }, a.title),
      a.protected ? h("span", { class: "small" }, "Protected: opens with its password") : null,
      h("span", { class: "muted small" }, meta),
      h("span", { class: "muted small" }, h("time", { datetime: a.updated_at, title: when(a.updated_at) }, ago(a.updated_at))),
      h("span", { class: "art-badges" },
        a.live_version !== null ? h("span", { class: "badge live" }, `live draft v${a.live_version}`) : null,
        badge(a.comments_open, a.comments_open === 1 ? "open comment" : "open comments"))));
}

function groupChips(id, by) {
  return h("nav", { class: "chips", "aria-label": "Group by" },
    h("span", { class: "muted small" }, "Group by "),
    GROUPS.map(([g, label]) => h("a", {
      class: ["chip", g === by && "on"], "aria-current": g === by ? "true" : null,
      href: `#/projects/${encodeURIComponent(id)}/artifacts?group=${g}`,
    }, label)));
}

function gallery(artifacts, by) {
  if (!artifacts.length) return h("p", { class: "empty" }, "No artifacts yet: agents publish them with artifact_publish.");
  const sections = [];
  for (const [key, items] of grouped(artifacts, by)) {
    sections.push(h("section", { class: "art-group", "aria-label": key },
      h("h2", {}, key, h("span", { class: "muted small" }, ` · ${items.length}`)),
      h("ul", { class: "art-grid" }, items.map(tile))));
  }
  return sections;
}

export default {
  title: () => "Artifacts",
  async render(root, params, app) {
    const by = GROUPS.some(([g]) => g === params.group) ? params.group : "day";
    const body = h("div", { class: "art-gallery" }, loading());
    root.append(tabBar(params.id, "artifacts"), groupChips(params.id, by), body);
    const load = async () => {
      try {
        const { artifacts } = await app.api.get(`/projects/${encodeURIComponent(params.id)}/artifacts`, { limit: 500 });
        fill(body, gallery(artifacts, by));
      } catch (err) {
        fill(body, errorBox(err));
      }
    };
    await load();
    return {
      onLive(change) {
        if (change.type === "refresh" || change.type === "artifact-live"
          || (change.type === "feed" && change.data.project_id === params.id)) load();
      },
      keys: rowKeys(body),
    };
  },
};
