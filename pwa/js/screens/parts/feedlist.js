// A feed (one project's or the global one): kind chips, day groups, paging back by cursor, new
// events from the stream, and for a project the unseen marks and the human's feed cursor.
//
// Cursor rules (spec, "Feed cursor rules"): the cursor only moves forward, and a client reading a
// filtered page posts the newest id of the whole feed it saw. So the screen always posts an explicit
// event id (never the bare "newest", which could mark an event it never fetched), learned from an
// unfiltered one-event read when chips filter the page.
import { h, fill } from "../../dom.js";
import { ago, when, day } from "../../format.js";
import { errorBox, errorText, rowKeys } from "./common.js";

export const KINDS = ["signal", "finished", "question", "answer", "approval", "artifact", "session", "idea", "system"];
const PAGE = 50;

// What a row shows when opened: the body, options, decision, and where it came from, all as text.
function eventDetail(ev, inProject) {
  const p = ev.payload || {};
  const parts = [];
  if (typeof p.body === "string" && p.body) parts.push(h("p", { class: "body" }, p.body));
  if (Array.isArray(p.options)) {
    parts.push(h("p", {}, "Options: ", p.options.map((o, i) => [i ? ", " : "", h("q", {}, String(o))])));
  }
  if (typeof p.decision === "string") parts.push(h("p", {}, `Decision: ${p.decision}`));
  if (typeof p.note === "string") parts.push(h("p", {}, "Note: ", p.note));
  if (p.expired === true) parts.push(h("p", {}, "Resolved by the hub when its deadline passed"));
  const meta = [h("span", {}, `${ev.kind} by ${ev.actor}`), " · ", h("time", { datetime: ev.created_at }, when(ev.created_at))];
  if (ev.session_id) meta.push(" · ", h("a", { href: `#/sessions/${encodeURIComponent(ev.session_id)}` }, "session"));
  if (!inProject) meta.push(" · ", h("a", { href: `#/projects/${encodeURIComponent(ev.project_id)}` }, "project"));
  parts.push(h("p", { class: "muted small" }, meta));
  return h("div", { class: "feed-detail", hidden: true }, parts);
}

// One event: a button that opens its detail; `fresh` marks it unseen, `names` adds its project.
function eventRow(ev, { fresh, names, inProject }) {
  const more = eventDetail(ev, inProject);
  const btn = h("button", {
    type: "button", class: "feed-item", "data-row": "", "aria-expanded": "false",
    onclick: () => {
      const open = btn.getAttribute("aria-expanded") !== "true";
      btn.setAttribute("aria-expanded", open ? "true" : "false");
      more.hidden = !open;
    },
  },
  h("span", { class: ["kind", `kind-${ev.kind}`] }, ev.kind),
  fresh ? h("span", { class: "new-mark" }, "New") : null,
  h("span", { class: "summary" }, ev.summary),
  h("span", { class: "meta" },
    names ? h("span", { class: "project" }, names.get(ev.project_id) ?? ev.project_id) : null,
    h("span", { class: "actor" }, ev.actor),
    h("time", { datetime: ev.created_at, title: when(ev.created_at) }, ago(ev.created_at))));
  return h("li", { class: ["feed-row", fresh && "unseen"], dataset: { id: ev.id } }, btn, more);
}

// Events (newest first) cut into runs of one local day each.
function byDay(events) {
  const groups = [];
  for (const ev of events) {
    const label = day(ev.created_at);
    if (!groups.length || groups[groups.length - 1].label !== label) groups.push({ label, events: [] });
    groups[groups.length - 1].events.push(ev);
  }
  return groups;
}

const AROUND = 25; // events each side of an event opened from a search hit

// opts: {path: "/projects/x/feed" | "/feed", project: id | null, names: Map | null, focus: event id
// | null}. With `focus` the feed opens at that event (a search hit): marked, opened, with the events
// around it, and "Show the newest" when newer ones were left out.
export function createFeed(app, { path, project = null, names = null, focus = null }) {
  const state = {
    kinds: new Set(), events: [], nextBefore: null, more: false,
    lastSeen: undefined, posted: null, loading: false, again: false, gen: 0,
  };
  const chips = h("div", { class: "chips", role: "group", "aria-label": "Kinds" });
  const listNode = h("div", { class: "feed-list" });
  const status = h("p", { class: "visually-hidden", role: "status" });
  const olderBtn = h("button", { type: "button", class: "btn", hidden: true, onclick: () => older() }, "Load older");
  const newestBtn = h("button", { type: "button", class: "btn", hidden: true,
    onclick: () => { focus = null; state.gapAbove = false; reload(); } }, "Show the newest events");
  const notice = h("p", { class: "feed-notice", role: "status", hidden: true });
  const node = h("div", { class: "feed" }, chips, status, notice, h("div", { class: "feed-more" }, newestBtn), listNode,
    h("div", { class: "feed-more" }, olderBtn));

  function query(extra = {}) {
    const q = { limit: PAGE, ...extra };
    if (state.kinds.size) q.kind = [...state.kinds].join(",");
    return q;
  }

  function drawChips() {
    const chip = (label, pressed, onclick) => h("button", {
      type: "button", class: ["chip", pressed && "on"], "aria-pressed": pressed ? "true" : "false", onclick,
    }, label);
    fill(chips,
      chip("All", state.kinds.size === 0, () => { state.kinds.clear(); focus = null; reload(); }),
      KINDS.map((k) => chip(k, state.kinds.has(k), () => {
        if (state.kinds.has(k)) state.kinds.delete(k); else state.kinds.add(k);
        focus = null; // a filter starts from the newest again
        reload();
      })));
  }

  function isNew(ev) {
    return project !== null && state.lastSeen !== undefined && (state.lastSeen === null || ev.id > state.lastSeen);
  }

  function draw() {
    if (!state.events.length) {
      fill(listNode, h("p", { class: "empty" }, state.kinds.size ? "No events of these kinds." : "No events yet."));
    } else {
      const row = (ev) => {
        const r = eventRow(ev, { fresh: isNew(ev), names, inProject: project !== null });
        if (focus && ev.id === focus) markTarget(r);
        return r;
      };
      fill(listNode, byDay(state.events).map((g) => h("section", { class: "day" },
        h("h2", { class: "day-title" }, g.label),
        h("ul", { class: "rows" }, g.events.map(row)))));
    }
    olderBtn.hidden = !state.more;
    newestBtn.hidden = !state.gapAbove;
  }

  // The event a search hit pointed at: marked (aria-current), its detail open.
  function markTarget(r) {
    r.classList.add("target");
    r.setAttribute("aria-current", "true");
    const btn = r.querySelector(".feed-item");
    btn.setAttribute("aria-expanded", "true");
    r.querySelector(".feed-detail").hidden = false;
    btn.insertBefore(h("span", { class: "target-mark" }, "Search hit"), btn.children[1] || null);
  }

  // The page around `focus`: up to AROUND newer events (read forward from it), then it and the
  // older ones (read back from the oldest newer one, or from the top when none is newer).
  async function around(gen) {
    const after = await app.api.get(path, query({ since: focus, limit: AROUND }));
    const newer = after.events.slice().sort((a, b) => (a.id < b.id ? 1 : -1));
    const back = newer.length ? query({ before: newer[newer.length - 1].id, limit: AROUND })
      : query({ limit: AROUND });
    const page = await app.api.get(path, back);
    if (gen !== state.gen) return false;
    if (!page.events.length || page.events[0].id !== focus) return false; // not in this feed (or filtered out)
    if (state.lastSeen === undefined && project) state.lastSeen = page.last_seen ?? null;
    state.events = newer.concat(page.events);
    state.nextBefore = page.next_before;
    state.more = page.events.length === AROUND && !!page.next_before;
    state.gapAbove = newer.length === AROUND;
    draw();
    const target = listNode.querySelector("li.feed-row.target");
    if (target) {
      target.scrollIntoView({ block: "center" });
      target.querySelector(".feed-item").focus({ preventScroll: true });
    }
    return true;
  }

  // The newest event id of the whole (unfiltered) feed this screen has seen.
  async function wholeNewest() {
    if (!state.kinds.size) return state.events.length ? state.events[0].id : null;
    const page = await app.api.get(path, { limit: 1 });
    return page.events.length ? page.events[0].id : null;
  }

  // Post the cursor. A failure is not the reader's problem: the next draw or arrival posts again
  // (a refused token is the app's to handle, through the API client).
  async function markSeen() {
    if (!project || document.visibilityState === "hidden") return;
    try {
      const newest = await wholeNewest();
      const floor = [state.posted, state.lastSeen].filter(Boolean).sort().pop();
      if (!newest || (floor && newest <= floor)) return;
      const res = await app.api.post(`/projects/${encodeURIComponent(project)}/feed/seen`, { event_id: newest });
      state.posted = res.last_seen || newest;
    } catch { /* retried on the next draw */ }
  }

  async function reload() {
    const gen = ++state.gen;
    drawChips();
    notice.hidden = true;
    try {
      if (focus) {
        if (await around(gen)) { await markSeen(); return; }
        if (gen !== state.gen) return;
        notice.textContent = "The event the search pointed at is not in this feed now; showing the newest.";
        notice.hidden = false;
        focus = null;
      }
      state.gapAbove = false;
      const page = await app.api.get(path, query());
      if (gen !== state.gen) return;
      if (state.lastSeen === undefined && project) state.lastSeen = page.last_seen ?? null;
      state.events = page.events;
      state.nextBefore = page.next_before;
      state.more = page.events.length === PAGE && !!page.next_before;
      draw();
      await markSeen();
    } catch (err) {
      if (gen === state.gen) fill(listNode, errorBox(err));
    }
  }

  async function older() {
    if (!state.nextBefore) return;
    const gen = state.gen;
    olderBtn.disabled = true;
    try {
      const page = await app.api.get(path, query({ before: state.nextBefore }));
      if (gen !== state.gen) return;
      state.events = state.events.concat(page.events);
      state.nextBefore = page.next_before;
      state.more = page.events.length === PAGE && !!page.next_before;
      draw();
      status.textContent = `${page.events.length} older events loaded`;
    } catch (err) {
      app.toast(errorText(err), { kind: "error" });
    } finally {
      olderBtn.disabled = false;
    }
  }

  // Fetch what arrived after the newest shown event (coalescing stream bursts into one read).
  async function newer() {
    if (state.loading) { state.again = true; return; }
    if (!state.events.length) { await reload(); return; }
    if (state.gapAbove) return; // opened at an older event: newer ones wait behind "Show the newest"
    state.loading = true;
    const gen = state.gen;
    try {
      const page = await app.api.get(path, query({ since: state.events[0].id, limit: 500 }));
      if (gen === state.gen && page.events.length === 500) {
        state.loading = false;
        await reload(); // a burst past one page: start again from the newest
        return;
      }
      // Only what is newer than the newest shown now: a reload (a live "refresh") may have drawn
      // these events while this read was in flight, and they must not be drawn twice.
      const top = state.events.length ? state.events[0].id : null;
      const fresh = page.events.filter((ev) => top === null || ev.id > top);
      if (gen === state.gen && fresh.length) {
        state.events = fresh.slice().reverse().concat(state.events);
        draw();
        status.textContent = `${fresh.length} new events`;
      }
      if (gen === state.gen) await markSeen();
    } catch (err) {
      app.toast(errorText(err), { kind: "error" });
    } finally {
      state.loading = false;
      if (state.again) { state.again = false; newer(); }
    }
  }

  const onVisible = () => { if (document.visibilityState === "visible") markSeen(); };
  document.addEventListener("visibilitychange", onVisible);

  return {
    node,
    load: reload,
    newer,
    keys: rowKeys(listNode),
    onLive(change) {
      if (change.type === "refresh") { reload(); return; }
      if (change.type !== "feed") return;
      if (project && change.data && change.data.project_id !== project) return;
      newer();
    },
    dispose() { document.removeEventListener("visibilitychange", onVisible); state.gen += 1; },
  };
}
