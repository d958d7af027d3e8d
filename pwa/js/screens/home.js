// Home, from one `GET /api/v1/home`: waiting items (inline approve and reply on wide screens),
// unread, agents active, recent events, unseen per project, storage against capacity, the node line.
import { h, fill } from "../dom.js";
import { ago, when, bytes, count } from "../format.js";
import { itemRow, isWaiting, isDecidable, tickCountdowns, keepDrafts } from "../items.js";
import { link } from "../routes.js";
import { firstRunPanel } from "./parts/firstrun.js";

const WIDE = "(min-width: 1000px)";
const MODE = { tls: "served over TLS", loopback: "this machine only (loopback)", network: "on the network, plain HTTP" };

function stat(num, what, href) {
  return h("a", { class: "stat", href }, h("span", { class: "num" }, String(num)), h("span", { class: "what" }, what));
}

function storage(home) {
  const s = home.storage || {};
  const used = s.used_bytes;
  const cap = s.capacity_bytes;
  const pct = used !== null && used !== undefined && cap ? Math.min(100, Math.round((used / cap) * 100)) : null;
  const p = home.prunable || {};
  return h("section", { class: "panel", "aria-labelledby": "home-storage" },
    h("h2", { id: "home-storage" }, "Storage"),
    h("p", {}, `${bytes(used)} used of ${bytes(cap)}`, pct !== null ? ` (${pct}%)` : "",
      s.free_bytes !== null && s.free_bytes !== undefined ? ` · ${bytes(s.free_bytes)} free` : ""),
    pct !== null ? h("div", { class: "meter", role: "img", "aria-label": `${pct}% of capacity used` },
      h("span", { style: `width: ${pct}%` })) : null,
    p.sessions ? h("p", {}, `A prune would free ${bytes(p.bytes)} from ${count(p.sessions, "ended session")}. `,
      h("a", { href: "#/storage" }, "Review in Storage"))
      : h("p", { class: "muted" }, "Nothing to prune."));
}

function recent(home) {
  const events = home.recent || [];
  return h("section", { class: "panel", "aria-labelledby": "home-recent" },
    h("h2", { id: "home-recent" }, "Recent events"),
    events.length ? h("ul", { class: "rows" }, events.map((e) => h("li", { class: "row" },
      h("p", { class: "row-title" }, e.summary),
      h("p", { class: "row-meta" }, h("span", { class: "tag" }, e.kind), " ",
        h("a", { href: link("/projects/:id", { id: e.project_id }, { tab: "feed" }) }, e.project_display_name || e.project_id),
        ` · ${e.actor} · `, h("time", { datetime: e.created_at, title: when(e.created_at) }, ago(e.created_at))))))
      : h("p", { class: "empty" }, "No events yet."),
    h("p", {}, h("a", { href: "#/feed" }, "All events in the feed")));
}

function unseen(home) {
  const rows = home.unseen || [];
  return h("section", { class: "panel", "aria-labelledby": "home-unseen" },
    h("h2", { id: "home-unseen" }, "Unseen by project"),
    rows.length ? h("ul", { class: "rows" }, rows.map((r) => h("li", { class: "row" },
      h("a", { href: link("/projects/:id", { id: r.project_id }, { tab: "feed" }) }, r.project_display_name || r.project_id),
      " ", h("span", { class: "tag unread" }, `${r.unseen_events} unseen`))))
      : h("p", { class: "empty" }, "You have seen everything."),
    h("p", {}, h("a", { href: "#/projects" }, "All projects")));
}

export default {
  title: () => "Home",
  async render(root, params, app) {
    const wide = matchMedia(WIDE);
    let rows = [];
    let selected = -1;
    let stopTick = () => {};
    let seq = 0;

    async function draw() {
      const mine = ++seq;
      const home = await app.api.get("/home");
      if (mine !== seq) return;
      const firstRun = home.first_run === true;
      app.setBadge("inbox", home.waiting, `${home.waiting} waiting on you`);
      const ctx = { app, onChanged: () => draw().catch(() => {}), compact: !wide.matches };
      rows = (home.waiting_items || []).map((item) => itemRow(item, ctx));
      const more = home.waiting - rows.length;
      const waiting = h("section", { class: "panel", "aria-labelledby": "home-waiting" },
        h("h2", { id: "home-waiting" }, "Waiting on you"),
        rows.length ? h("ul", { class: "rows" }, rows.map((r) => r.node)) : h("p", { class: "empty" }, "Nothing is waiting on you."),
        more > 0 ? h("p", {}, h("a", { href: "#/inbox" }, `${more} more in the Inbox`)) : null);
      const node = home.node || {};
      const build = app.build;
      const drafts = keepDrafts(root); // a live redraw keeps a half-typed answer (items.js)
      fill(root,
        firstRun ? firstRunPanel(app) : null,
        h("div", { class: "stat-row" },
          stat(home.waiting, "waiting on you", "#/inbox"),
          stat(home.unread, "unread", "#/inbox?unread=1"),
          stat(home.agents_active, "agents active", "#/access"),
          h("div", { class: "stat" }, h("span", { class: "num small" }, home.last_event_at ? ago(home.last_event_at) : "never"),
            h("span", { class: "what" }, "last event"))),
        h("div", { class: "grid two" }, h("div", {}, waiting, unseen(home)), h("div", {}, recent(home), storage(home))),
        h("p", { class: "node-line" }, `Node ${node.host || "unknown"}, ${MODE[node.mode] || node.mode || ""}`,
          build ? ` · Agent Hub ${build.version} (${build.commit})` : ""));
      drafts.restore(root);
      selected = -1;
      stopTick();
      stopTick = tickCountdowns(root, () => draw().catch(() => {}));
    }

    if (!app.build) await app.loadBuild();
    await draw();
    const onWidth = () => draw().catch(() => {});
    wide.addEventListener("change", onWidth);
    let liveTimer = null;
    const mark = (i) => {
      rows.forEach((r, j) => r.node.setAttribute("aria-selected", String(j === i)));
      selected = i;
      if (rows[i]) rows[i].node.focus();
    };
    return {
      onLive() { clearTimeout(liveTimer); liveTimer = setTimeout(() => draw().catch(() => {}), 50); },
      dispose() { stopTick(); clearTimeout(liveTimer); wide.removeEventListener("change", onWidth); seq += 1; },
      keys: {
        j: () => rows.length && mark(Math.min(rows.length - 1, selected + 1)),
        k: () => rows.length && mark(Math.max(0, selected - 1)),
        Enter: () => { if (rows[selected]) app.navigate("#/inbox"); },
        a: () => { const r = rows[selected]; if (r && isWaiting(r.item) && isDecidable(r.item)) r.approve(); },
        r: () => { const r = rows[selected]; if (r && r.item.kind === "question") r.focusAnswer(); },
      },
    };
  },
};
