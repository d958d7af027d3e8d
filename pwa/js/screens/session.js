// One session: its detail (owner, status, handoff, lineage), its brain as a lazy tree with an entry
// viewer, its replay (the tool calls it made), and the human's verbs: end, reassign, prune.
import { h, fill } from "../dom.js";
import { ago, bytes, when } from "../format.js";
import { busy, errorBox, errorText, field, loading, retitle, rowKeys } from "./parts/common.js";
import { pruneWithUndo } from "./parts/prune.js";
import { brainTree } from "./brain.js";

function sessionPath(id) {
  return `/sessions/${encodeURIComponent(id)}`;
}

// The hub's one line for the newest event is "<time> <kind>: <summary>"; the time reads better as "5 min ago".
function newest(line) {
  const m = /^(\d{4}-\d\d-\d\dT\S+Z) ([\s\S]*)$/.exec(line);
  return m ? `${m[2]} (${ago(m[1])})` : line;
}

function facts(s) {
  const row = (label, ...value) => [h("dt", {}, label), h("dd", {}, ...value)];
  const lineage = s.lineage
    ? [`${s.lineage.kind} from `, s.lineage.from_session_id
      ? h("a", { href: `#/sessions/${encodeURIComponent(s.lineage.from_session_id)}` }, s.lineage.from_session_id)
      : "a session", s.lineage.from_owner ? ` (owner ${s.lineage.from_owner})` : ""]
    : ["none: started fresh"];
  return h("dl", { class: "facts" },
    row("Project", h("a", { href: `#/projects/${encodeURIComponent(s.project_id)}?tab=sessions` }, s.project_id)),
    row("Owner", s.owner),
    row("Status", s.status, s.ended_at ? ` since ${when(s.ended_at)}` : ""),
    row("Started", when(s.created_at)),
    row("Last activity", ago(s.last_activity_at)),
    row("Brain", s.brain_bytes === null ? "unknown" : bytes(s.brain_bytes)),
    row("Events", String(s.events), s.last_event ? h("span", { class: "muted small" }, ` · newest: ${newest(s.last_event)}`) : ""),
    row("Lineage", ...lineage),
    row("Id", h("code", {}, s.session_id)));
}

async function endSession(app, s, reload) {
  const max = app.limits && app.limits.handoff_chars; // the hub's own limit (GET /limits)
  const note = h("textarea", { rows: 4, name: "handoff", maxLength: max });
  const choice = await app.dialog({
    title: `End session ${s.name}?`,
    body: h("div", {}, h("p", {}, "Its brain stops taking writes and is kept until pruned."),
      field("Handoff note (optional)", note, `For whoever continues${max ? `; at most ${max} characters` : ""}`)),
    actions: [{ label: "Cancel", value: null }, { label: "End session", value: "end", danger: true }],
    focus: null,
  });
  if (choice !== "end") return;
  try {
    await app.api.post(`${sessionPath(s.session_id)}/end`, note.value.trim() ? { handoff: note.value } : {});
    app.toast(`Ended ${s.name}`);
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
  }
  await reload();
}

async function reassign(app, s, reload) {
  let agents;
  try {
    ({ agents } = await app.api.get("/agents"));
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
    return;
  }
  const others = agents.filter((a) => a.id !== s.owner && a.status === "active");
  if (!others.length) { app.toast("No other active agent to give it to", { kind: "error" }); return; }
  const select = h("select", { name: "agent" },
    others.map((a) => h("option", { value: a.id }, `${a.display_name} (${a.id})`)));
  const choice = await app.dialog({
    title: `Reassign ${s.name}`,
    body: h("div", {}, h("p", {}, `Now owned by ${s.owner}.`), field("New owner", select)),
    actions: [{ label: "Cancel", value: null }, { label: "Reassign", value: "go", primary: true }],
  });
  if (choice !== "go") return;
  try {
    await app.api.post(`${sessionPath(s.session_id)}/reassign`, { agent: select.value });
    app.toast(`Reassigned to ${select.value}`);
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
  }
  await reload();
}

function replayPanel(app, id) {
  const out = h("div", { class: "replay-calls" });
  const btn = h("button", { type: "button", class: "btn" }, "Show replay");
  btn.addEventListener("click", () => busy(btn, async () => {
    fill(out, loading("Loading the tool calls"));
    try {
      const { events } = await app.api.get(`${sessionPath(id)}/replay`);
      fill(out, events.length
        ? h("ol", { class: "rows replay" }, events.map((c) => h("li", { class: "replay-call" },
          h("p", {}, h("strong", {}, c.tool), " · ", c.outcome, " · ",
            h("time", { datetime: c.at, title: when(c.at) }, ago(c.at))),
          h("pre", { class: "entry-content" }, c.arguments))))
        : h("p", { class: "empty" }, "No tool calls recorded (or the brain is gone)."));
    } catch (err) {
      fill(out, errorBox(err));
    }
  }));
  return h("section", { class: "panel", "aria-labelledby": "replay-title" },
    h("h2", { id: "replay-title" }, "Replay"), h("p", { class: "muted small" }, "The tool calls this session made, oldest first."),
    btn, out);
}

export default {
  title: () => "Session",
  async render(root, params, app) {
    const detail = h("div", {}, loading("Loading the session"));
    const actions = h("div", { class: "actions" });
    const extras = h("div", {}); // the brain and the replay, hidden while the session reads as gone
    root.append(detail, actions, extras);
    let current = null;
    const reload = async () => {
      try {
        current = await app.api.get(sessionPath(params.id));
      } catch (err) {
        fill(detail, errorBox(err));
        fill(actions);
        extras.hidden = true;
        current = null;
        return;
      }
      extras.hidden = false;
      const s = current;
      retitle(root, `Session ${s.name}`);
      fill(detail, facts(s),
        h("section", { class: "panel handoff", "aria-labelledby": "handoff-title" },
          h("h2", { id: "handoff-title" }, "Handoff"),
          s.handoff ? h("p", { class: "body" }, s.handoff) : h("p", { class: "muted" }, "No handoff note.")));
      const buttons = [];
      if (s.status === "active") {
        buttons.push(h("button", { type: "button", class: "btn", onclick: () => endSession(app, s, reload) }, "End session"),
          h("button", { type: "button", class: "btn", onclick: () => reassign(app, s, reload) }, "Reassign"));
      } else {
        const prune = h("button", { type: "button", class: "btn danger" }, "Prune");
        prune.addEventListener("click", () => busy(prune, () => pruneWithUndo(app, `/storage${sessionPath(s.session_id)}`, reload)));
        buttons.push(prune);
      }
      fill(actions, buttons);
    };
    await reload();
    if (!current) return {};
    const projectId = current.project_id;
    const brain = brainTree(app, params.id);
    fill(extras, h("section", { class: "panel", "aria-labelledby": "brain-title" },
      h("h2", { id: "brain-title" }, "Brain"), brain.node), replayPanel(app, params.id));
    if (params.path) brain.show(params.path); // ?path= (a search hit) opens that entry
    let timer = null;
    return {
      keys: { ...rowKeys(root), Escape: brain.close },
      onLive(change) {
        if (change.type === "refresh" || (change.type === "feed" && change.data?.project_id === projectId)) {
          clearTimeout(timer);
          timer = setTimeout(reload, 300);
        }
      },
      dispose() { clearTimeout(timer); },
    };
  },
};
