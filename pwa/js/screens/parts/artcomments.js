// An artifact's comment threads: each anchored to nothing, a quote from the version's text or a point
// on it (fractions of the page's width and height), with resolve, reopen and delete; a form to post one
// as the human, which text selected in the frame fills in. Bodies and quotes an agent wrote are text nodes.
import { h, fill } from "../../dom.js";
import { ago, when } from "../../format.js";
import { busy, errorBox, errorText, field } from "./common.js";

const pct = (f) => `${Math.round(f * 100)}%`;

function anchorLine(c) {
  if (!c.anchor) return null;
  if (c.anchor.mode === "text") return h("blockquote", { class: "art-quote" }, c.anchor.quote);
  if (c.anchor.mode === "line") {
    const lines = c.anchor.end_line ? `${c.anchor.line}–${c.anchor.end_line}` : `${c.anchor.line}`;
    return h("p", { class: "muted small art-line" }, `${c.anchor.file}:${lines} (${c.anchor.side} side)`,
      c.outdated ? h("span", { class: "tag outdated" }, " outdated: the line changed in a later version") : null);
  }
  return h("p", { class: "muted small" }, `At a point: ${pct(c.anchor.x)} across, ${pct(c.anchor.y)} down`);
}

function commentItem(app, base, c, reload) {
  const toggle = h("button", { type: "button", class: "btn small" }, c.done ? "Reopen" : "Resolve");
  toggle.addEventListener("click", () => busy(toggle, async () => {
    try {
      await app.api.patch(`${base}/${encodeURIComponent(c.id)}`, { done: !c.done });
      app.toast(c.done ? "Reopened" : "Resolved");
    } catch (err) {
      app.toast(errorText(err), { kind: "error" });
    }
    await reload();
  }));
  const del = h("button", { type: "button", class: "btn small danger" }, "Delete");
  del.addEventListener("click", () => busy(del, async () => {
    const choice = await app.dialog({ title: "Delete this comment?", body: h("p", {}, c.body),
      actions: [{ label: "Cancel", value: null }, { label: "Delete", value: "del", danger: true }], focus: null });
    if (choice !== "del") return;
    try {
      await app.api.del(`${base}/${encodeURIComponent(c.id)}`);
      app.toast("Comment deleted");
    } catch (err) {
      app.toast(errorText(err), { kind: "error" });
    }
    await reload();
  }));
  return h("li", { class: ["art-comment", c.done && "done", c.outdated && "outdated"], dataset: { comment: c.id } },
    h("p", { class: "small" }, h("strong", {}, c.author), " · ",
      h("time", { datetime: c.created_at, title: when(c.created_at) }, ago(c.created_at)),
      ` · on version ${c.anchor_version}`, c.done ? " · resolved" : " · open"),
    anchorLine(c),
    h("p", { class: "art-comment-body" }, c.body),
    h("div", { class: "btn-row" }, toggle, del));
}

// The note under the quote of a protected version: the hub keeps no quote anchor on ciphertext
// (it cannot hold the passage as part of the version), so the quote travels in the comment's text.
const PROTECTED_QUOTE = "This version is protected: the hub keeps no quote on it. The quote is sent at the top of "
  + "your comment, stored as plain text on the hub (clear it to keep the passage off the hub), and the comment is "
  + "anchored to where the passage sits.";

// The form: an anchor chooser (none, a quote, a point picked on the frame through `pickPoint()`).
// `form.quote(selection)` fills it from text the reader selected in the frame ({text, x, y}).
function commentForm(app, artifact, base, pickPoint, onPosted) {
  const limits = app.limits || {}; // the hub's own (GET /limits); unread, the hub alone checks
  const body = h("textarea", { name: "comment", rows: 3, maxLength: limits.comment_body_chars, required: true });
  const mode = h("select", { name: "anchor" }, h("option", { value: "none" }, "Nothing (the whole artifact)"),
    h("option", { value: "text" }, "A quote from it"), h("option", { value: "point" }, "A point on it"));
  const quote = h("textarea", { name: "quote", rows: 2, maxLength: limits.comment_quote_chars });
  const quoteRow = field("Quote (select it in the artifact, or copy the words)", quote,
    artifact.protected ? PROTECTED_QUOTE : null);
  const cutNote = h("p", { class: "muted small", hidden: true });
  quoteRow.append(cutNote);
  let point = null;
  let selectedAt = null; // where a quote filled from a selection sits (a protected version's anchor)
  const pointText = h("span", { class: "muted small", role: "status" }, "No point picked yet");
  const pick = h("button", { type: "button", class: "btn" }, "Pick a point on the artifact");
  pick.addEventListener("click", async () => {
    const got = await pickPoint();
    if (got) { point = got; pointText.textContent = `Point: ${pct(got.x)} across, ${pct(got.y)} down`; }
  });
  const pointRow = h("div", { class: "form-row" }, pick, " ", pointText);
  const sync = () => { quoteRow.hidden = mode.value !== "text"; pointRow.hidden = mode.value !== "point"; };
  mode.addEventListener("change", sync);
  sync();
  const error = h("p", { class: "error-text", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "btn primary" }, "Comment");
  const fail = (text) => { error.textContent = text; error.hidden = false; };
  const anchor = () => {
    if (mode.value === "text") {
      if (!quote.value.trim()) return "Write the quote first";
      // Protected: the passage's place as a point (or nothing, for a quote typed in).
      if (artifact.protected) return selectedAt ? { mode: "point", ...selectedAt } : null;
      return { mode: "text", quote: quote.value };
    }
    if (mode.value === "point") return point ? { mode: "point", ...point } : "Pick the point first";
    return null;
  };
  const text = () => (artifact.protected && mode.value === "text"
    ? `\u201c${quote.value.trim()}\u201d\n\n${body.value}` : body.value);
  const send = (e) => {
    e.preventDefault();
    busy(submit, async () => {
      error.hidden = true;
      if (!body.value.trim()) return fail("Write the comment first");
      const a = anchor();
      if (typeof a === "string") return fail(a);
      try {
        await app.api.post(base, { body: text(), anchor: a, anchor_version: artifact.version });
        body.value = ""; quote.value = ""; point = null; selectedAt = null; cutNote.hidden = true;
        pointText.textContent = "No point picked yet";
        app.toast("Comment posted");
        await onPosted();
      } catch (err) {
        fail(errorText(err));
      }
      return undefined;
    });
  };
  const node = h("form", { class: "form art-comment-form", "aria-label": "New comment", onsubmit: send },
    field("Comment", body, limits.comment_body_chars ? `At most ${limits.comment_body_chars} characters` : null), field("Anchored to", mode), quoteRow, pointRow,
    error, h("div", { class: "btn-row" }, submit));
  const fillQuote = (selection) => {
    const max = limits.comment_quote_chars || Infinity;
    const cut = selection.text.length > max;
    quote.value = cut ? selection.text.slice(0, max) : selection.text;
    cutNote.hidden = !cut;
    cutNote.textContent = cut
      ? `The selection was longer than a quote may be: its first ${max} characters are kept.` : "";
    selectedAt = { x: selection.x, y: selection.y };
    mode.value = "text";
    sync();
    node.scrollIntoView({ block: "center" });
    body.focus({ preventScroll: true });
  };
  return { node, fillQuote };
}

export function commentThreads(app, artifact, pickPoint, onLoaded = null) {
  const base = `/artifacts/${encodeURIComponent(artifact.id)}/comments`;
  const list = h("div", {});
  const heading = h("h2", {}, "Comments");
  const load = async () => {
    try {
      const { comments, truncated } = await app.api.get(base, { limit: 200 });
      const open = comments.filter((c) => !c.done).length;
      if (onLoaded) onLoaded(comments);
      heading.textContent = `Comments · ${open} open of ${comments.length}`;
      fill(list, comments.length
        ? h("ol", { class: "rows art-comments" }, comments.map((c) => commentItem(app, base, c, load)))
        : h("p", { class: "empty" }, "No comments yet."),
      truncated ? h("p", { class: "muted small" }, "Older comments beyond these 200 are not shown.") : null);
    } catch (err) {
      fill(list, errorBox(err));
    }
  };
  const form = commentForm(app, artifact, base, pickPoint, load);
  const node = h("section", { class: "panel art-comments-panel", "aria-label": "Comments" }, heading, list, form.node);
  return { node, load, quote: form.fillQuote };
}
