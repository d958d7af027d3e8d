// One inbox item as a row: what an agent asked or announced, and the human's answer to it.
// Shared by Inbox and Home. Everything the agent wrote goes in as text (dom.h never parses HTML).
import { h, fill } from "./dom.js";
import { ago, when, countdown } from "./format.js";
import { ApiError } from "./api.js";
import { link } from "./routes.js";

const NOTE_WARN = 0.9; // the counter appears at 90% of the hub's limit
const KIND_LABEL = { question: "Question", approval: "Approval", enrol_request: "Enrolment", idea: "Idea" };
const DECIDABLE = new Set(["approval", "enrol_request"]);

export function isWaiting(item) { return item.status === "waiting"; }
export function isDecidable(item) { return DECIDABLE.has(item.kind); }

function projectName(item) {
  return item.project_display_name || item.project_id;
}

function statusTag(item) {
  if (item.status === "waiting") return h("span", { class: "tag waiting" }, "Waiting on you");
  if (item.status === "unread") return h("span", { class: "tag unread" }, "Unread");
  if (item.expired) return h("span", { class: "tag expired" }, "Expired");
  if (item.status === "resolved") return h("span", { class: "tag" }, "Resolved");
  return h("span", { class: "tag" }, "Read");
}

// A refresh redraws every row (Inbox, Home): what the human was typing (an answer, a note) and where
// the caret stood are carried over to the new row's field of the same id, so a live change never
// loses them; a field holding a draft inside a folded reply (narrow screens) is unfolded again.
export function keepDrafts(body) {
  const values = new Map();
  for (const field of body.querySelectorAll("li.row textarea[id]")) if (field.value) values.set(field.id, field.value);
  const active = document.activeElement;
  const focused = active && body.contains(active) && active.id && active.closest("li.row") ? active : null;
  const caret = focused && "selectionStart" in focused ? [focused.selectionStart, focused.selectionEnd] : null;
  return {
    focused,
    restore(root) {
      for (const [id, value] of values) {
        const field = root.querySelector(`#${CSS.escape(id)}`);
        if (!field || field.value) continue;
        field.value = value;
        field.dispatchEvent(new Event("input"));
        const fold = field.closest("details");
        if (fold) fold.open = true;
      }
      if (!focused) return;
      const again = root.querySelector(`#${CSS.escape(focused.id)}`);
      if (!again) return;
      const fold = again.closest("details");
      if (fold) fold.open = true;
      again.focus();
      if (caret && "setSelectionRange" in again) again.setSelectionRange(caret[0], caret[1]);
    },
  };
}

// The hub's decision note limit (GET /limits), or Infinity while unread (the hub still refuses more).
function noteMax(app) {
  return (app && app.limits && app.limits.decision_note_chars) || Infinity;
}

// The note field with its counter, shown from 90% of the hub's limit; over it blocks the decision.
export function noteField(idBase, max = Infinity) {
  const counter = h("p", { class: "counter", id: `${idBase}-count`, "aria-live": "polite", hidden: true });
  const input = h("textarea", { class: "field note", id: `${idBase}-note`, rows: 2,
    "aria-describedby": `${idBase}-count` });
  const update = () => {
    const n = input.value.length;
    counter.hidden = n < NOTE_WARN * max;
    counter.textContent = `${n.toLocaleString()} / ${max.toLocaleString()} characters`;
    counter.className = ["counter", n > max ? "over" : "near"].join(" ");
    input.setAttribute("aria-invalid", String(n > max));
  };
  input.addEventListener("input", update);
  const wrap = h("div", { class: "note-wrap" },
    h("label", { class: "label", htmlFor: `${idBase}-note` }, "Note (optional)"), input, counter);
  return { wrap, input, tooLong: () => input.value.length > max };
}

function resolution(item) {
  if (item.kind === "question" && item.answer) {
    const a = item.answer;
    if (item.expired || a.body === null || a.body === undefined) {
      return h("p", { class: "resolution" }, `Expired with no answer: resolved by the hub ${ago(a.answered_at)}.`);
    }
    return h("div", { class: "resolution" },
      h("p", { class: "row-meta" }, `Answered by ${a.actor} ${ago(a.answered_at)}`),
      h("p", { class: "row-body" }, a.body));
  }
  if (item.decision) {
    const d = item.decision;
    const word = d.decision === "approved" ? "Approved" : "Declined";
    const by = item.expired ? `by the hub when the deadline passed (on expiry: ${item.on_expiry || "decline"})` : `by ${d.actor}`;
    return h("div", { class: "resolution" },
      h("p", { class: "row-meta" }, `${word} ${by}, ${ago(d.decided_at)}`),
      d.note ? h("p", { class: "row-body" }, `Note: ${d.note}`) : null);
  }
  return null;
}

// The row. ctx: {app, onChanged(item, result), compact}. Returns {node, item, focusAnswer, approve}.
export function itemRow(item, ctx) {
  const { app } = ctx;
  const idBase = `item-${item.event_id}`;
  const node = h("li", { class: ["row", "item", `kind-${item.kind}`, `status-${item.status}`], tabIndex: -1,
    dataset: { eventId: item.event_id, status: item.status, kind: item.kind }, "aria-labelledby": `${idBase}-title` });
  const error = h("p", { class: "error-text", role: "alert" });
  const meta = h("p", { class: "row-meta" },
    h("a", { href: link("/projects/:id", { id: item.project_id }) }, projectName(item)),
    ` · ${item.actor} · `, h("time", { datetime: item.created_at, title: when(item.created_at) }, ago(item.created_at)));
  const head = h("div", { class: "row-head" },
    h("span", { class: "tag" }, KIND_LABEL[item.kind] || item.kind), statusTag(item),
    item.status === "unread" ? h("span", { class: "dot", "aria-hidden": "true" }) : null);
  const body = item.payload && typeof item.payload.body === "string" && item.payload.body
    ? h("p", { class: "row-body" }, item.payload.body) : null;
  fill(node, head, h("p", { class: "row-title", id: `${idBase}-title` }, item.summary), meta, body);

  const row = { node, item, focusAnswer: () => false, approve: () => false };
  const fail = (err) => {
    error.textContent = err instanceof ApiError ? err.message : "That did not reach the hub.";
    if (err instanceof ApiError && err.status === 409) ctx.onChanged(item, null); // decided elsewhere: re-read
  };
  const done = (result, text) => { app.toast(text); ctx.onChanged(item, result); };

  if (item.expires_at && isWaiting(item)) {
    const clock = h("p", { class: "countdown", dataset: { expires: item.expires_at } }, countdown(item.expires_at));
    node.append(clock);
  }
  if (isWaiting(item) && item.kind === "question") {
    row.focusAnswer = answerControls(row, item, ctx, idBase, error, fail, done);
  } else if (isWaiting(item) && isDecidable(item)) {
    row.approve = decisionControls(row, item, ctx, idBase, error, fail, done);
  } else {
    node.append(resolution(item) || "");
  }
  if (item.status === "unread" || item.status === "read") {
    const next = item.status === "unread" ? "read" : "unread";
    const btn = h("button", { type: "button", class: "btn small", onclick: async () => {
      btn.disabled = true;
      try {
        const result = await app.api.post(`/inbox/${encodeURIComponent(item.event_id)}/${next}`);
        ctx.onChanged(item, result);
      } catch (err) { btn.disabled = false; fail(err); }
    } }, next === "read" ? "Mark read" : "Mark unread");
    node.append(h("div", { class: "btn-row" }, btn));
  }
  node.append(error);
  return row;
}

function answerControls(row, item, ctx, idBase, error, fail, done) {
  const { app } = ctx;
  const options = Array.isArray(item.payload && item.payload.options) ? item.payload.options : [];
  const buttons = [];
  let sent = false;
  const lock = (on) => { for (const b of buttons) b.disabled = on; };
  const send = async (text, what) => {
    if (sent) return; // an answer is sent once: a second tap while the first is in flight does nothing
    sent = true;
    lock(true);
    error.textContent = "";
    try {
      const result = await app.api.post(`/questions/${encodeURIComponent(item.event_id)}/answer`, { body: text });
      done(result, `Answered: ${what}`);
    } catch (err) {
      sent = false;
      lock(false);
      fail(err);
    }
  };
  if (options.length) {
    const group = h("div", { class: "btn-row options", role: "group", "aria-label": "Answer with an option" });
    for (const opt of options) {
      const b = h("button", { type: "button", class: "btn option", onclick: () => send(String(opt), String(opt)) }, String(opt));
      buttons.push(b);
      group.append(b);
    }
    row.node.append(group);
  }
  const input = h("textarea", { class: "field answer", id: `${idBase}-answer`, rows: 2 });
  const submit = h("button", { type: "submit", class: "btn primary" }, "Send answer");
  buttons.push(submit);
  const form = h("form", { class: "answer-form" },
    h("label", { class: "label", htmlFor: `${idBase}-answer` }, options.length ? "Or answer in your own words" : "Your answer"),
    input, h("div", { class: "btn-row" }, submit));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) { error.textContent = "Write an answer first."; input.focus(); return; }
    send(text, text.length > 60 ? text.slice(0, 57) + "…" : text);
  });
  if (ctx.compact) {
    const details = h("details", { class: "reply" }, h("summary", { class: "btn small" }, "Reply"), form);
    row.node.append(details);
    return () => { details.open = true; input.focus(); return true; };
  }
  row.node.append(form);
  return () => { input.focus(); return true; };
}

function decisionControls(row, item, ctx, idBase, error, fail, done) {
  const { app } = ctx;
  const noteLimit = noteMax(app);
  const note = noteField(idBase, noteLimit);
  let sent = false;
  const decline = h("button", { type: "button", class: "btn decline" }, "Decline");
  const approve = h("button", { type: "button", class: "btn primary approve" }, "Approve");
  const decide = async (decision, noteText) => {
    if (sent) return;
    if ((noteText || "").length > noteLimit) {
      error.textContent = `The note is over ${noteLimit.toLocaleString()} characters.`;
      return;
    }
    sent = true;
    decline.disabled = approve.disabled = true;
    error.textContent = "";
    try {
      const body = { decision };
      if (noteText && noteText.trim()) body.note = noteText;
      const result = await app.api.post(`/approvals/${encodeURIComponent(item.event_id)}/decision`, body);
      done(result, decision === "approve" ? "Approved." : "Declined.");
    } catch (err) {
      sent = false;
      decline.disabled = approve.disabled = false;
      fail(err);
    }
  };
  decline.addEventListener("click", () => decide("decline", note.input.value));
  approve.addEventListener("click", () => decide("approve", note.input.value));
  const controls = h("div", { class: "decision" }, note.wrap, h("div", { class: "btn-row" }, decline, approve));
  if (ctx.compact) {
    const details = h("details", { class: "reply" }, h("summary", { class: "btn small" }, "Decide"), controls);
    details.addEventListener("toggle", () => { if (details.open) decline.focus(); });
    row.node.append(details);
  } else {
    row.node.append(controls);
  }
  // The keyboard's `a`: ask first, in a dialog whose focused button is the safe one.
  return async () => {
    const dn = noteField(`${idBase}-dlg`, noteLimit);
    dn.input.value = note.input.value;
    const choice = await app.dialog({ title: "Approve this?", body: h("div", {}, h("p", {}, item.summary), dn.wrap),
      actions: [{ label: "Decline", value: "decline" }, { label: "Cancel", value: null },
        { label: "Approve", value: "approve", primary: true }], focus: "decline" });
    if (choice) await decide(choice, dn.input.value);
    return true;
  };
}

// Tick every countdown under root once a second; an item whose deadline passed is re-read (the hub
// resolves it). Returns a stop function.
export function tickCountdowns(root, onExpired) {
  let fired = false;
  const timer = setInterval(() => {
    for (const el of root.querySelectorAll(".countdown[data-expires]")) {
      const text = countdown(el.dataset.expires);
      if (text === "expired") {
        el.textContent = "Deadline passed: the hub is resolving it…";
        if (!fired) { fired = true; setTimeout(() => { fired = false; onExpired(); }, 1500); }
      } else if (el.textContent !== text) {
        el.textContent = text;
      }
    }
  }, 1000);
  return () => clearInterval(timer);
}
