// Inbox: waiting on you, unread, earlier. Filters by project and status, unread only; answers,
// decisions, read and unread, mark all read (within the chosen project when one is chosen).
import { h, fill } from "../dom.js";
import { count } from "../format.js";
import { itemRow, isWaiting, isDecidable, tickCountdowns, keepDrafts } from "../items.js";
import { ApiError } from "../api.js";
import { link } from "../routes.js";

const PAGE = 100;
const MAX = 500; // the hub's page limit
const STATUSES = [["", "Any status"], ["waiting", "Waiting on you"], ["unread", "Unread"], ["read", "Read"],
  ["resolved", "Resolved"]];

async function load(app, filters, limit) {
  const base = { project: filters.project || undefined, limit };
  if (filters.unread || filters.status) {
    const query = filters.unread ? { ...base, unread_only: "true" } : { ...base, status: filters.status };
    return { only: (await app.api.get("/inbox", query)).items };
  }
  const [waiting, unread, all] = await Promise.all([
    app.api.get("/inbox", { ...base, status: "waiting" }),
    app.api.get("/inbox", { ...base, status: "unread" }),
    app.api.get("/inbox", base),
  ]);
  const earlier = all.items.filter((i) => i.status !== "waiting" && i.status !== "unread");
  return { waiting: waiting.items, unread: unread.items, earlier, full: all.items.length >= limit };
}

export default {
  title: () => "Inbox",
  async render(root, params, app) {
    const filters = { project: params.project || "", status: params.status || "", unread: params.unread === "1" };
    let limit = PAGE;
    let rows = [];
    let selected = -1;

    const projectSelect = h("select", { class: "field", id: "filter-project" }, h("option", { value: "" }, "All projects"));
    const statusSelect = h("select", { class: "field", id: "filter-status" },
      STATUSES.map(([v, label]) => h("option", { value: v }, label)));
    const unreadBox = h("input", { type: "checkbox", id: "filter-unread" });
    const markAll = h("button", { type: "button", class: "btn" }, "Mark all read");
    const body = h("div", { class: "inbox-lists", "aria-live": "off" }, h("p", { class: "muted" }, "Loading…"));
    const filterBar = h("div", { class: "filters" },
      h("div", { class: "filter" }, h("label", { class: "label", htmlFor: "filter-project" }, "Project"), projectSelect),
      h("div", { class: "filter" }, h("label", { class: "label", htmlFor: "filter-status" }, "Status"), statusSelect),
      h("label", { class: "choice filter", htmlFor: "filter-unread" }, unreadBox, "Unread only"),
      h("div", { class: "filter" }, markAll));
    root.append(filterBar, body);

    const setControls = () => {
      projectSelect.value = filters.project;
      statusSelect.value = filters.unread ? "" : filters.status;
      statusSelect.disabled = filters.unread; // unread only and a status would contradict each other
      unreadBox.checked = filters.unread;
      markAll.textContent = filters.project ? "Mark all read in this project" : "Mark all read";
    };
    const pushFilters = () => {
      const q = { project: filters.project, status: filters.unread ? "" : filters.status, unread: filters.unread ? "1" : "" };
      history.replaceState(null, "", link("/inbox", {}, q));
      limit = PAGE;
      setControls();
      refresh();
    };
    projectSelect.addEventListener("change", () => { filters.project = projectSelect.value; pushFilters(); });
    statusSelect.addEventListener("change", () => { filters.status = statusSelect.value; pushFilters(); });
    unreadBox.addEventListener("change", () => { filters.unread = unreadBox.checked; pushFilters(); });
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

    const ctx = { app, onChanged: () => refresh(), compact: false };
    const section = (title, items, empty, id) => {
      const list = h("ul", { class: "rows", "aria-labelledby": id });
      const made = items.map((item) => itemRow(item, ctx));
      for (const r of made) list.append(r.node);
      rows.push(...made);
      return h("section", { class: "inbox-section" },
        h("h2", { id }, title, " ", h("span", { class: "muted count" }, `(${items.length})`)),
        items.length ? list : h("p", { class: "empty" }, empty));
    };

    let seq = 0;
    let stopTick = () => {};
    async function refresh() {
      const mine = ++seq;
      let data;
      try {
        data = await load(app, filters, limit);
      } catch (err) {
        if (mine !== seq) return;
        if (err instanceof ApiError && err.status === 401) return;
        fill(body, h("div", { class: "panel error", role: "alert" }, h("p", {}, err.message || "The inbox did not load."),
          h("button", { type: "button", class: "btn", onclick: refresh }, "Try again")));
        return;
      }
      if (mine !== seq) return;
      const keep = selected >= 0 && rows[selected] ? rows[selected].item.event_id : null;
      const hadFocus = body.contains(document.activeElement) && document.activeElement.closest("li.row");
      const drafts = keepDrafts(body);
      rows = [];
      const parts = [];
      if (data.only) {
        const label = filters.unread ? "Unread" : STATUSES.find(([v]) => v === filters.status)[1];
        parts.push(section(label, data.only, "Nothing here.", "sec-only"));
        if (data.only.length >= limit && limit < MAX) parts.push(moreButton());
      } else {
        parts.push(section("Waiting on you", data.waiting, "Nothing is waiting on you.", "sec-waiting"));
        parts.push(section("Unread", data.unread, "Nothing unread.", "sec-unread"));
        parts.push(section("Earlier", data.earlier, "Nothing earlier.", "sec-earlier"));
        if (data.full && limit < MAX) parts.push(moreButton());
      }
      fill(body, parts);
      selected = keep ? rows.findIndex((r) => r.item.event_id === keep) : -1;
      if (selected >= 0) mark(selected, !!hadFocus && !drafts.focused);
      drafts.restore(body);
      stopTick();
      stopTick = tickCountdowns(body, refresh);
    }
    const moreButton = () => h("div", { class: "btn-row" }, h("button", { type: "button", class: "btn",
      onclick: () => { limit = Math.min(MAX, limit + PAGE * 2); refresh(); } }, "Show more"));

    const mark = (i, focus = true) => {
      rows.forEach((r, j) => r.node.setAttribute("aria-selected", String(j === i)));
      selected = i;
      if (focus && rows[i]) { rows[i].node.focus(); rows[i].node.scrollIntoView({ block: "nearest" }); }
    };
    const move = (d) => { if (rows.length) mark(Math.max(0, Math.min(rows.length - 1, (selected < 0 ? (d > 0 ? -1 : rows.length) : selected) + d))); };
    const current = () => rows[selected] || null;

    setControls();
    const projects = app.api.get("/projects").then((list) => {
      const items = Array.isArray(list) ? list : list.projects || [];
      for (const p of items) projectSelect.append(h("option", { value: p.id }, p.display_name || p.id));
      projectSelect.value = filters.project;
    }).catch(() => {});
    await Promise.all([refresh(), projects]);

    let liveTimer = null;
    return {
      onLive(change) {
        if (change.type !== "inbox" && change.type !== "refresh") return;
        clearTimeout(liveTimer);
        liveTimer = setTimeout(refresh, 30);
      },
      dispose() { stopTick(); clearTimeout(liveTimer); seq += 1; },
      keys: {
        j: () => move(1),
        k: () => move(-1),
        Enter: () => {
          const r = current();
          if (!r) return;
          if (isWaiting(r.item) && r.item.kind === "question") r.focusAnswer();
          else if (isWaiting(r.item) && isDecidable(r.item)) r.node.querySelector("button.decline").focus();
          else { const a = r.node.querySelector("a"); if (a) a.focus(); }
        },
        a: () => { const r = current(); if (r && isWaiting(r.item) && isDecidable(r.item)) r.approve(); },
        r: () => { const r = current(); if (r && isWaiting(r.item) && r.item.kind === "question") r.focusAnswer(); },
      },
    };
  },
};
