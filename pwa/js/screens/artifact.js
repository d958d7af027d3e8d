// One artifact: the sandboxed frame (or the password gate of a protected version, decrypted here), the
// live band naming the agent writing while a version is live, the version sheet, comment threads, the
// share sheet, copy raw and delete. `?version=N` picks a version. Titles and names are text nodes.
import { h, fill } from "../dom.js";
import { ago, bytes, when } from "../format.js";
import { busy, errorBox, errorText, field, loading, retitle } from "./parts/common.js";
import { artifactFrame, decrypt, frameAddress } from "./parts/artframe.js";
import { commentThreads } from "./parts/artcomments.js";
import { shareSheet } from "./parts/artshare.js";
import { scriptsToggle } from "./parts/artscripts.js";
import { diffView } from "./parts/diffview.js";

const enc = encodeURIComponent;

function liveText(live) {
  if (live.state === "sealed") return "";
  const who = live.actor || "An agent";
  return live.state === "live"
    ? `${who} is writing version ${live.version} now`
    : `${who}'s draft version ${live.version} is open (no change for a while)`;
}

function versionSheet(versions, shown, id) {
  return h("details", { class: "panel art-versions" },
    h("summary", {}, `Versions (${versions.length})`),
    h("ol", { class: "rows" }, versions.slice().reverse().map((v) => h("li", {},
      h("a", { href: `#/artifacts/${enc(id)}?version=${v.version}`, "aria-current": v.version === shown ? "page" : null },
        `Version ${v.version}`), v.label ? h("span", {}, ` · ${v.label}`) : null,
      h("span", { class: "muted small" }, ` · ${v.actor || "human"} · ${bytes(v.size_bytes)} · `,
        h("time", { datetime: v.created_at, title: when(v.created_at) }, ago(v.created_at)),
        v.live ? " · live draft" : "", v.protected ? " · protected" : "")))));
}

// Pick a point on the frame: a layer over it takes one click (Esc or a second tap on Cancel gives up).
function pointPicker(stage) {
  return () => new Promise((resolve) => {
    const layer = h("button", { type: "button", class: "art-pick",
      "aria-label": "Click the point to comment on (Escape cancels)" }, "Click the point to comment on");
    const done = (value) => { layer.remove(); resolve(value); };
    layer.addEventListener("click", (e) => {
      const r = layer.getBoundingClientRect();
      if (e.detail === 0 || !r.width || !r.height) { done({ x: 0.5, y: 0.5 }); return; } // keyboard: the centre
      const clamp = (v) => Math.max(0, Math.min(1, Math.round(v * 1000) / 1000));
      done({ x: clamp((e.clientX - r.left) / r.width), y: clamp((e.clientY - r.top) / r.height) });
    });
    layer.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.stopPropagation(); done(null); } });
    stage.append(layer);
    layer.focus();
  });
}

// An artifact that cannot be shown reads as a sentence, never a code: deleted (or never there), or a
// version that is not kept; anything else is the hub's own message.
function missing(err, id, version) {
  if (!err || err.status !== 404) return errorBox(err);
  if (version !== null) {
    return h("div", { class: "panel", role: "alert" },
      h("p", {}, `Version ${version} of this artifact is not kept, or never existed.`),
      h("p", {}, h("a", { href: `#/artifacts/${enc(id)}` }, "Open its current version")));
  }
  return h("div", { class: "panel", role: "alert" },
    h("p", {}, "This artifact is not here any more: it was deleted, or the link that led here is out of date."),
    h("p", {}, h("a", { href: "#/" }, "Go to Home")));
}

// What the reader selected in the frame, which the frame reports (`{hubSelection: {text, x, y}}`:
// the app cannot read a sandboxed frame's selection itself, docs/decisions.md): the passage shown
// as text with "Comment on this passage", which fills the comment form with it as the quote.
const fraction = (v) => (Number.isFinite(v) ? Math.max(0, Math.min(1, Math.round(v * 1000) / 1000)) : 0.5);

function selectionBar(stage, onQuote) {
  const shown = h("q", { class: "art-selection-text" });
  const button = h("button", { type: "button", class: "btn primary" }, "Comment on this passage");
  const line = h("p", { class: "small", role: "status" });
  const node = h("div", { class: "art-selection", hidden: true }, line, button);
  let last = null;
  button.addEventListener("click", () => { if (last) onQuote(last); });
  const listen = (event) => {
    if (!document.contains(stage)) { window.removeEventListener("message", listen); return; }
    const frame = stage.querySelector("iframe.art-frame");
    const sel = event.data && event.data.hubSelection;
    if (!frame || event.source !== frame.contentWindow || !sel || typeof sel.text !== "string") return;
    const text = sel.text.slice(0, 8000).replace(/\s+/g, " ").trim(); // the frame cuts at 4000; a forged one may not
    if (!text) { node.hidden = true; last = null; line.textContent = ""; return; }
    last = { text, x: fraction(sel.x), y: fraction(sel.y) };
    shown.textContent = text.length > 160 ? `${text.slice(0, 160)}…` : text;
    fill(line, "Selected: ", shown);
    node.hidden = false;
  };
  window.addEventListener("message", listen);
  node.clear = () => { node.hidden = true; last = null; line.textContent = ""; }; // a new frame: nothing selected
  return node;
}

// The password gate of a protected version: decrypts in this page; the password goes nowhere.
function gate(found, onOpen) {
  const password = h("input", { type: "password", name: "artifact-password", autocomplete: "off", required: true });
  const error = h("p", { class: "error-text", role: "alert", hidden: true });
  const unlock = h("button", { type: "submit", class: "btn primary" }, "Unlock");
  const submit = (e) => {
    e.preventDefault();
    busy(unlock, async () => {
      error.hidden = true;
      try {
        const text = await decrypt(found.envelope, found.content, password.value);
        password.value = "";
        await onOpen(text);
      } catch {
        error.textContent = "Wrong password: this password does not open the artifact.";
        error.hidden = false;
      }
    });
  };
  return h("form", { class: "panel form art-gate", "aria-label": "Password", onsubmit: submit },
    h("p", {}, "This version is protected: the hub holds only its ciphertext. It is decrypted on this device; the password is never sent."),
    field("Password", password), error, h("div", { class: "btn-row" }, unlock));
}

async function copyText(app, text) {
  try {
    await navigator.clipboard.writeText(text);
    app.toast("Raw text copied");
  } catch {
    app.toast("Could not copy: this browser refused the clipboard", { kind: "error" });
  }
}

async function remove(app, found) {
  const choice = await app.dialog({ title: `Delete ${found.title}?`,
    body: h("p", {}, "Every version, its comments and its share link are removed for good."),
    actions: [{ label: "Cancel", value: null }, { label: "Delete artifact", value: "del", danger: true }], focus: null });
  if (choice !== "del") return;
  try {
    await app.api.del(`/artifacts/${enc(found.id)}`);
    app.toast(`Deleted ${found.title}`);
    app.navigate(`#/projects/${enc(found.project_id)}/artifacts`);
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
  }
}

function actions(app, found, raw, reframe) {
  const btn = (label, run, cls = "btn") => {
    const b = h("button", { type: "button", class: cls }, label);
    b.addEventListener("click", () => busy(b, run));
    return b;
  };
  return h("div", { class: "btn-row art-actions" },
    btn("Share", () => shareSheet(app, found)),
    found.kind === "html" ? scriptsToggle(app, found, reframe) : null,
    btn(found.protected ? "Copy raw (ciphertext until unlocked)" : "Copy raw", () => copyText(app, raw())),
    btn("Delete", () => remove(app, found), "btn danger"));
}

// The verdict on an approval that names this diff (from the Inbox, `?approval=ID`, or the newest one
// waiting): Approve or Request changes, with an optional note. The agent's wait gets the verdict
// and the open line comments of the version decided on.
function reviewBar(app, found, approvalId) {
  const node = h("section", { class: "panel diff-verdict", "aria-label": "Review", hidden: true });
  const bar = { node, reviewed: null };
  bar.load = async () => {
    let items = [];
    try {
      ({ items } = await app.api.get("/inbox", { status: "waiting", project: found.project_id, limit: 200 }));
    } catch { return; }
    const mine = items.filter((i) => i.kind === "approval" && i.payload && i.payload.review
      && i.payload.review.artifact_id === found.id);
    const item = mine.find((i) => i.event_id === approvalId) || mine[0];
    if (!item) return;
    bar.reviewed = item.payload.review.version !== found.version ? item.payload.review.version : null;
    const noteId = `verdict-note-${item.event_id}`;
    const note = h("textarea", { id: noteId, rows: 2, maxLength: (app.limits || {}).decision_note_chars });
    const error = h("p", { class: "error-text", role: "alert", hidden: true });
    const decide = async (decision, btn) => busy(btn, async () => {
      try {
        const body = { decision };
        if (note.value.trim()) body.note = note.value;
        await app.api.post(`/approvals/${enc(item.event_id)}/decision`, body);
        app.toast(decision === "approve" ? "Approved" : "Changes requested");
        fill(node, h("p", { role: "status" }, decision === "approve" ? "You approved this change."
          : "You asked for changes: the agent gets your open line comments."));
      } catch (err) {
        error.textContent = errorText(err); error.hidden = false;
      }
    });
    const changes = h("button", { type: "button", class: "btn decline" }, "Request changes");
    const approve = h("button", { type: "button", class: "btn primary approve" }, "Approve");
    changes.addEventListener("click", () => decide("decline", changes));
    approve.addEventListener("click", () => decide("approve", approve));
    fill(node, h("h2", {}, "Review asked: ", item.summary),
      h("p", { class: "muted small" }, `${item.actor} asks for your verdict on version ${item.payload.review.version}.`),
      h("label", { htmlFor: noteId, class: "label" }, "Note (optional)"), note, error,
      h("div", { class: "btn-row" }, changes, approve));
    node.hidden = false;
  };
  return bar;
}

export default {
  title: () => "Artifact",
  async render(root, params, app) {
    const body = h("div", {}, loading());
    root.append(body);
    const version = /^[0-9]{1,9}$/.test(params.version || "") ? Number(params.version) : null;
    const id = params.id;
    let found; let versions; let live; let pass;
    try { // the viewer pass read alongside: the frame's address needs it next
      [found, { versions }, live, { pass }] = await Promise.all([
        app.api.get(`/artifacts/${enc(id)}`, { version }), app.api.get(`/artifacts/${enc(id)}/versions`),
        app.api.get(`/artifacts/${enc(id)}/live`), app.api.get(`/artifacts/${enc(id)}/viewer-pass`)]);
    } catch (err) {
      fill(body, missing(err, id, version));
      return {};
    }
    retitle(root, found.title);
    let decrypted = null;
    const stage = h("div", { class: "art-stage" });
    const showFrame = async () => {
      if (selected) selected.clear();
      fill(stage, artifactFrame(await frameAddress(app, found, pass), found, decrypted));
      pass = null; // used once: a later frame (a moved draft, an unlock much later) reads a fresh one
    };
    const band = h("p", { class: "art-live", role: "status" });
    const drawBand = () => {
      band.hidden = live.state === "sealed";
      fill(band, liveText(live), live.state === "sealed" || live.version === found.version ? null
        : [" · ", h("a", { href: `#/artifacts/${enc(id)}?version=${live.version}` }, "Follow the draft")]);
    };
    drawBand();
    const diff = found.kind === "diff" ? diffView(app, found, { onPosted: () => comments.load() }) : null;
    const comments = commentThreads(app, found, pointPicker(stage), diff ? (list) => diff.setComments(list) : null);
    const selected = diff ? null : selectionBar(stage, (selection) => comments.quote(selection));
    const verdict = diff ? reviewBar(app, found, params.approval) : null;
    fill(body,
      h("p", { class: "muted small" }, [found.kind, `version ${found.version} of ${versions.length}`,
        found.label, found.actor || "human", bytes(found.size_bytes), `updated ${ago(found.updated_at)}`]
        .filter(Boolean).join(" · "), " · ",
      h("a", { href: `#/projects/${enc(found.project_id)}/artifacts` }, `${found.project_id} artifacts`)),
      found.description ? h("p", {}, found.description) : null,
      band, verdict ? verdict.node : null, actions(app, found, () => decrypted ?? found.content,
        () => (found.protected && decrypted === null ? null : showFrame())),
      diff ? diff.node : stage, selected, versionSheet(versions, found.version, id), comments.node);
    if (diff) {
      diff.listen();
      if (verdict) await verdict.load();
      diff.offerSince(versions, verdict ? verdict.reviewed : null);
    } else if (found.protected) {
      pass = null; // an unlock may come minutes later, after the pass's window
      fill(stage, gate(found, async (text) => { decrypted = text; await showFrame(); }));
    } else {
      await showFrame();
    }
    await comments.load();
    const relive = async () => {
      live = await app.api.get(`/artifacts/${enc(id)}/live`);
      drawBand();
    };
    return {
      async onLive(change) {
        try {
          if (change.type === "refresh") { await relive(); await comments.load(); return; }
          if (change.type !== "artifact-live" || change.data.artifact_id !== id) return;
          await relive();
          // The draft on view moved: a fresh frame shows its new text (a protected one stays at its gate).
          if (change.data.version === found.version && !found.protected) {
            found = await app.api.get(`/artifacts/${enc(id)}`, { version: found.version });
            await showFrame();
          }
        } catch (err) {
          if (err && err.status === 404) fill(body, missing(err, id, null)); // deleted while open
          else throw err;
        }
      },
    };
  },
};
