// Inbox: waiting on you, unread, earlier; each list with its true total, paged by the hub's cursor
// ("Load more", never a silent cut). Waiting and unread items come deadline first, then oldest
// waiting (or newest first, a remembered choice); earlier items newest first. Optional grouping by
// project. Filters by project and status, unread only; answers, decisions, read and unread, mark
// all read (within the chosen project when one is chosen). Compact rows below 1000 px: the answer
// form folds behind Answer or Decide, as on Home.
import { h, fill } from "../dom.js";
import { count } from "../format.js";
import { itemRow, isWaiting, isDecidable, tickCountdowns, keepDrafts } from "../items.js";
import { ApiError } from "../api.js";
import { link } from "../routes.js";

const PAGE = 50;
const MAX = 500; // the hub's page limit
const WIDE = "(min-width: 1000px)";
const PREFS_KEY = "agent-hub.inbox";
const STATUSES = [["", "Any status"], ["waiting", "Waiting on you"], ["unread", "Unread"], ["read", "Read"],
  ["resolved", "Resolved"]];

function loadPrefs() {
  try {
    const raw = JSON.parse(localStorage.getItem(PREFS_KEY) || "{}");
    return { newest: !!(raw && raw.newest), group: !!(raw && raw.group) };
  } catch { return { newest: false, group: false }; }
}

function savePrefs(prefs) {
  try { localStorage.setItem(PREFS_KEY, JSON.stringify(prefs)); } catch { /* storage blocked: kept for this visit */ }
}

// The lists the filters ask for: {id, title, empty, query}; the query's order follows the choice.
function listsFor(filters, prefs) {
  const pending = prefs.newest ? "newest" : "deadline";
  if (filters.unread || filters.status) {
    const status = filters.unread ? "unread" : filters.status;
    const title = filters.unread ? "Unread" : STATUSES.find(([v]) => v === status)[1];
    const order = status === "waiting" || status === "unread" ? pending : "newest";
    const query = filters.unread ? { unread_only: "true" } : { status };
    return [{ id: "sec-only", title, empty: "Nothing here.", query: { ...query, order } }];
  }
  return [
    { id: "sec-waiting", title: "Waiting on you", empty: "Nothing is waiting on you.", query: { status: "waiting", order: pending } },
    { id: "sec-unread", title: "Unread", empty: "Nothing unread.", query: { status: "unread", order: pending } },
    { id: "sec-earlier", title: "Earlier", empty: "Nothing earlier.", query: { settled: "true", order: "newest" } },
  ];
}

// At least `want` items of one list (page after page), with its total and the cursor after them.
async function fetchList(app, list, project, want) {
  const items = [];
  let cursor = null;
  let total = 0;
  do {
    const page = await app.api.get("/inbox", { ...list.query, project: project || undefined, cursor: cursor || undefined,
      limit: Math.min(MAX, Math.max(PAGE, want - items.length)) });
    items.push(...page.items);
    total = page.total;
    cursor = page.next_cursor;
  } while (cursor && items.length < want);
  return { items, total, cursor };
}

export default {
  title: () => "Inbox",
  async render(root, params, app) {
    const filters = { project: params.project || "", status: params.status || "", unread: params.unread === "1" };
    let opened = params.item || null;
    const prefs = loadPrefs();
    const wide = matchMedia(WIDE);
    let rows = [];
    let selected = -1;
    let state = new Map(); // list id -> {items, total, cursor}
    const asked = new Map(); // list id -> items a Load more under way asked to show (a refresh reads as many)

    const projectSelect = h("select", { class: "field", id: "filter-project" }, h("option", { value: "" }, "All projects"));
    const statusSelect = h("select", { class: "field", id: "filter-status" },
      STATUSES.map(([v, label]) => h("option", { value: v }, label)));
    const unreadBox = h("input", { type: "checkbox", id: "filter-unread" });
    const orderSelect = h("select", { class: "field", id: "filter-order" },
      h("option", { value: "deadline", title: "Items with a deadline first, soonest first; then the oldest waiting" },
        "Deadlines first"),
      h("option", { value: "newest" }, "Newest first"));
    const groupBox = h("input", { type: "checkbox", id: "filter-group" });
    const markAll = h("button", { type: "button", class: "btn" }, "Mark all read");
    const body = h("div", { class: "inbox-lists", "aria-live": "off" }, h("p", { class: "muted" }, "Loading…"));
    const filterBar = h("div", { class: "filters" },
      h("div", { class: "filter" }, h("label", { class: "label", htmlFor: "filter-project" }, "Project"), projectSelect),
      h("div", { class: "filter" }, h("label", { class: "label", htmlFor: "filter-status" }, "Status"), statusSelect),
      h("div", { class: "filter" }, h("label", { class: "label", htmlFor: "filter-order" }, "Order"), orderSelect),
      h("label", { class: "choice filter", htmlFor: "filter-unread" }, unreadBox, "Unread only"),
      h("label", { class: "choice filter", htmlFor: "filter-group" }, groupBox, "Group by project"),
      h("div", { class: "filter" }, markAll));
    root.append(filterBar, body);

    const setControls = () => {
      projectSelect.value = filters.project;
      statusSelect.value = filters.unread ? "" : filters.status;
      statusSelect.disabled = filters.unread; // unread only and a status would contradict each other
      unreadBox.checked = filters.unread;
      orderSelect.value = prefs.newest ? "newest" : "deadline";
      groupBox.checked = prefs.group;
      markAll.textContent = filters.project ? "Mark all read in this project" : "Mark all read";
    };
    const restart = () => {
      state = new Map();
      setControls();
      refresh();
    };
    const pushFilters = () => {
      const q = { project: filters.project, status: filters.unread ? "" : filters.status, unread: filters.unread ? "1" : "" };
      history.replaceState(null, "", link("/inbox", {}, q));
      restart();
    };
    projectSelect.addEventListener("change", () => { filters.project = projectSelect.value; pushFilters(); });
    statusSelect.addEventListener("change", () => { filters.status = statusSelect.value; pushFilters(); });
    unreadBox.addEventListener("change", () => { filters.unread = unreadBox.checked; pushFilters(); });
    orderSelect.addEventListener("change", () => { prefs.newest = orderSelect.value === "newest"; savePrefs(prefs); restart(); });
    groupBox.addEventListener("change", () => { prefs.group = groupBox.checked; savePrefs(prefs); draw(); });
    markAll.addEventListener("click", async () => {
      markAll.disabled = true;
      try {
        const result = await app.api.post("/inbox/read-all", filters.project ? { project_id: filters.project } : {});
        app.toast(result.marked ? `Marked ${count(result.marked, "item")} read.` : "Nothing was unread.");
        refresh();
      } catch (err) {
        app.toast(err instanceof ApiError ? err.message : "Marking failed.", { kind: "error" });
      } finally { markAll.disabled = false; }
    });

    const ctx = () => ({ app, onChanged: () => refresh(), compact: !wide.matches });

    // One list: its heading with the true total, its rows (grouped by project when asked), and
    // "Load more" with how many are left while the hub has more.
    const section = (list, data, rowCtx) => {
      const made = data.items.map((item) => itemRow(item, rowCtx));
      byList.set(list.id, made);
      const heading = h("h2", { id: list.id }, list.title, " ", h("span", { class: "muted count" }, `(${data.total.toLocaleString()})`));
      let content;
      if (!made.length) {
        content = h("p", { class: "empty" }, list.empty);
      } else if (prefs.group) {
        content = groupedRows(list, made);
      } else {
        content = h("ul", { class: "rows", "aria-labelledby": list.id }, made.map((r) => r.node));
      }
      return h("section", { class: "inbox-section", dataset: { list: list.id } }, heading, content, moreButton(list, data));
    };
    const groupedRows = (list, made) => {
      const groups = new Map();
      for (const r of made) {
        const key = r.item.project_id;
        if (!groups.has(key)) groups.set(key, { name: r.item.project_display_name || key, rows: [] });
        groups.get(key).rows.push(r);
      }
      let n = 0;
      return [...groups.values()].map((g) => {
        const gid = `${list.id}-g${n++}`;
        return h("section", { class: "inbox-group" }, h("h3", { id: gid }, g.name, " ",
          h("span", { class: "muted count" }, `(${g.rows.length})`)),
        h("ul", { class: "rows", "aria-labelledby": gid }, g.rows.map((r) => r.node)));
      });
    };
    const moreButton = (list, data) => {
      if (!data.cursor) return null;
      const left = Math.max(data.total - data.items.length, 0);
      return h("div", { class: "btn-row load-more" }, h("button", { type: "button", class: "btn",
        "aria-describedby": list.id, onclick: (e) => loadMore(list, e.currentTarget) }, `Load more (${left.toLocaleString()} more)`));
    };
    const byList = new Map(); // list id -> its rows, in order (rows is their concatenation)

    let seq = 0;
    let stopTick = () => {};
    let lists = [];

    // Redraw every list from `state`, keeping the selection, drafts and focus.
    function draw() {
      const keep = selected >= 0 && rows[selected] ? rows[selected].item.event_id : null;
      const hadFocus = body.contains(document.activeElement) && document.activeElement.closest("li.row");
      const drafts = keepDrafts(body);
      byList.clear();
      const rowCtx = ctx();
      fill(body, lists.map((list) => section(list, state.get(list.id), rowCtx)));
      rows = lists.flatMap((list) => byList.get(list.id) || []);
      selected = keep ? rows.findIndex((r) => r.item.event_id === keep) : -1;
      if (selected >= 0) mark(selected, !!hadFocus && !drafts.focused);
      if (opened) { // a tapped notification (`?item=`): that item, selected and in view, once
        const at = rows.findIndex((r) => r.item.event_id === opened);
        opened = null;
        if (at >= 0) mark(at);
      }
      drafts.restore(body);
      stopTick();
      stopTick = tickCountdowns(body, refresh);
    }

    // Re-read every list, as many items as are shown now, or as a Load more under way asked for (a
    // live change keeps what was loaded, and what is loading: that Load more's answer is dropped).
    async function refresh() {
      const mine = ++seq;
      lists = listsFor(filters, prefs);
      let data;
      try {
        data = await Promise.all(lists.map((list) => {
          const shown = state.has(list.id) ? state.get(list.id).items.length : 0;
          return fetchList(app, list, filters.project, Math.max(PAGE, shown, asked.get(list.id) || 0));
        }));
      } catch (err) {
        if (mine !== seq) return;
        if (err instanceof ApiError && err.status === 401) return;
        fill(body, h("div", { class: "panel error", role: "alert" }, h("p", {}, err.message || "The inbox did not load."),
          h("button", { type: "button", class: "btn", onclick: refresh }, "Try again")));
        return;
      }
      if (mine !== seq) return;
      state = new Map(lists.map((list, i) => [list.id, data[i]]));
      draw();
    }

    // The next page of one list, appended under the rows already drawn (none is drawn again).
    async function loadMore(list, button) {
      const have = state.get(list.id);
      if (!have || !have.cursor) return;
      button.disabled = true;
      const mine = seq;
      asked.set(list.id, have.items.length + PAGE);
      try {
        const page = await app.api.get("/inbox", { ...list.query, project: filters.project || undefined,
          cursor: have.cursor, limit: PAGE });
        if (mine !== seq) return; // a refresh redrew meanwhile, as many rows as this asked for
        const known = new Set(have.items.map((i) => i.event_id));
        const fresh = page.items.filter((i) => !known.has(i.event_id));
        const data = { items: [...have.items, ...fresh], total: page.total, cursor: page.next_cursor };
        state.set(list.id, data);
        const node = body.querySelector(`section.inbox-section[data-list="${list.id}"]`);
        if (!node || prefs.group) { draw(); } else { appendRows(list, node, data, fresh); }
        const next = fresh[0] && rows.find((r) => r.item.event_id === fresh[0].event_id);
        if (next) { next.node.focus({ preventScroll: true }); } // the keyboard carries on from the new rows
      } catch (err) {
        button.disabled = false;
        app.toast(err instanceof ApiError ? err.message : "Loading more failed.", { kind: "error" });
      } finally {
        asked.delete(list.id); // drawn, dropped for a refresh that read as many, or failed
      }
    }

    function appendRows(list, node, data, fresh) {
      const made = fresh.map((item) => itemRow(item, ctx()));
      byList.set(list.id, [...(byList.get(list.id) || []), ...made]);
      rows = lists.flatMap((l) => byList.get(l.id) || []);
      const ul = node.querySelector("ul.rows");
      if (ul) ul.append(...made.map((r) => r.node));
      node.querySelector(".count").textContent = `(${data.total.toLocaleString()})`;
      const old = node.querySelector(".load-more");
      const next = moreButton(list, data);
      if (old && next) old.replaceWith(next); else if (old) old.remove();
    }

    const mark = (i, focus = true) => {
      rows.forEach((r, j) => r.node.setAttribute("aria-selected", String(j === i)));
      selected = i;
      if (focus && rows[i]) { rows[i].node.focus(); rows[i].node.scrollIntoView({ block: "nearest" }); }
    };
    const move = (d) => { if (rows.length) mark(Math.max(0, Math.min(rows.length - 1, (selected < 0 ? (d > 0 ? -1 : rows.length) : selected) + d))); };
    const current = () => rows[selected] || null;

    setControls();
    app.api.get("/projects").then((list) => {
      const items = Array.isArray(list) ? list : list.projects || [];
      for (const p of items) projectSelect.append(h("option", { value: p.id }, p.display_name || p.id));
      projectSelect.value = filters.project;
    }).catch(() => {});
    await refresh(); // the project picker fills in when its list arrives: the keys work from the first draw
    const onWidth = () => { if (state.size) draw(); };
    wide.addEventListener("change", onWidth);

    let liveTimer = null;
    return {
      onLive(change) {
        if (change.type !== "inbox" && change.type !== "refresh") return;
        clearTimeout(liveTimer);
        liveTimer = setTimeout(refresh, 30);
      },
      dispose() { stopTick(); clearTimeout(liveTimer); wide.removeEventListener("change", onWidth); seq += 1; },
      keys: {
        j: () => move(1),
        k: () => move(-1),
        Enter: () => {
          const r = current();
          if (!r) return;
          if (isWaiting(r.item) && r.item.kind === "question") r.focusAnswer();
          else if (isWaiting(r.item) && isDecidable(r.item)) {
            const fold = r.node.querySelector("details.reply");
            if (fold) fold.open = true;
            r.node.querySelector("button.decline").focus();
          } else { const a = r.node.querySelector("a"); if (a) a.focus(); }
        },
        a: () => { const r = current(); if (r && isWaiting(r.item) && isDecidable(r.item)) r.approve(); },
        r: () => { const r = current(); if (r && isWaiting(r.item) && r.item.kind === "question") r.focusAnswer(); },
      },
    };
  },
};
