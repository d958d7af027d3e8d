// Answers and decisions held a few seconds with Undo before they are sent (the way mail clients undo
// a send), so a mis-tap costs nothing. Never lose one: leaving the screen, hiding the tab or closing
// it sends every held item at once (the request is made `keepalive`, so it outlives the page).
//
// Held items live here, keyed by the inbox item's event id, not in a row: Inbox and Home redraw
// their rows on every live change, and a redrawn row asks `held(id)` to draw the countdown again.

export const HOLD_DEFAULT_S = 5;
const pending = new Map(); // event id -> entry

// hold({id, label, draft, seconds, send(keepalive) -> Promise, onSent(result), onFailed(err)})
// Starts the countdown (seconds 0 sends at once); returns the entry.
export function hold({ id, label, draft = "", seconds = HOLD_DEFAULT_S, send, onSent, onFailed }) {
  if (pending.has(id)) return pending.get(id);
  const entry = { id, label, draft, due: Date.now() + seconds * 1000, timer: null, views: new Set(),
    send, onSent, onFailed, state: "held" };
  pending.set(id, entry);
  if (seconds <= 0) fire(entry, false);
  else entry.timer = setTimeout(() => fire(entry, false), seconds * 1000);
  return entry;
}

export function held(id) {
  return pending.get(id) || null;
}

// Seconds left, rounded up (what the countdown shows).
export function secondsLeft(entry) {
  return Math.max(0, Math.ceil((entry.due - Date.now()) / 1000));
}

// Undo: nothing is sent; true when it was still held.
export function undo(id) {
  const entry = pending.get(id);
  if (!entry || entry.state !== "held") return false;
  clearTimeout(entry.timer);
  pending.delete(id);
  entry.state = "undone";
  for (const v of entry.views) v.undone(entry);
  return true;
}

// Send now (the "Send now" button, or leaving): the countdown is skipped.
export function sendNow(id, keepalive = false) {
  const entry = pending.get(id);
  if (entry && entry.state === "held") fire(entry, keepalive);
}

async function fire(entry, keepalive) {
  if (entry.state !== "held") return;
  clearTimeout(entry.timer);
  entry.state = "sending";
  for (const v of entry.views) v.sending(entry);
  try {
    const result = await entry.send(keepalive);
    pending.delete(entry.id);
    entry.state = "sent";
    entry.onSent(result);
  } catch (err) {
    pending.delete(entry.id);
    entry.state = "failed";
    for (const v of entry.views) v.failed(err);
    entry.onFailed(err, entry);
  }
}

// Everything still held goes now: the screen is left, or the tab hidden or closed.
export function flushAll() {
  for (const entry of [...pending.values()]) if (entry.state === "held") fire(entry, true);
}

// A view of the entry (a row's countdown line) that redraws as it moves; returns its removal.
export function watch(entry, view) {
  entry.views.add(view);
  return () => entry.views.delete(view);
}

addEventListener("pagehide", flushAll);
document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flushAll(); });
