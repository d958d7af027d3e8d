// The freshness stream: one `GET /api/v1/stream` per tab, read with fetch so the token rides in the
// Authorization header (EventSource cannot send it). Messages carry ids only; the screen on view
// re-reads what changed. Reconnects with backoff; reports its state for the sync line.

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30000;
// The hub sends a keep-alive comment every 15 s: silence much longer than that means a dead link.
const SILENCE_MS = 40000;

// Split SSE text into messages; returns [messages, rest]. Each message: {event, data}.
export function parseChunk(buffer) {
  const messages = [];
  const blocks = buffer.replace(/\r\n?/g, "\n").split("\n\n");
  const rest = blocks.pop();
  for (const block of blocks) {
    let event = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length || event !== "message") messages.push({ event, data: data.join("\n") });
  }
  return [messages, rest];
}

// start({token, onChange, onState, onUnauthorized}) -> {stop()}.
// onState(state): "connecting" | "live" | "stale" | "failed" | "offline".
export function startLive({ token, onChange, onState, onUnauthorized }) {
  let stopped = false;
  let controller = null;
  let backoff = MIN_BACKOFF_MS;
  let watchdog = null;
  let retryTimer = null;
  let connectedOnce = false;

  const arm = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => { onState("stale"); if (controller) controller.abort(); }, SILENCE_MS);
  };

  async function connect() {
    if (stopped) return;
    controller = new AbortController();
    onState(connectedOnce ? "stale" : "connecting");
    try {
      const res = await fetch("/api/v1/stream", {
        headers: { Authorization: `Bearer ${token()}`, Accept: "text/event-stream" },
        signal: controller.signal, cache: "no-store",
      });
      if (res.status === 401) { stopped = true; onUnauthorized(); return; }
      if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      arm();
      if (connectedOnce) onChange({ type: "refresh", data: {} }); // what was missed while away
      connectedOnce = true;
      onState("live");
      backoff = MIN_BACKOFF_MS;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm();
        buffer += value;
        const [messages, rest] = parseChunk(buffer);
        buffer = rest;
        for (const m of messages) {
          let data = {};
          try { data = m.data ? JSON.parse(m.data) : {}; } catch { data = {}; }
          onChange({ type: m.event, data });
        }
      }
      throw new Error("stream ended");
    } catch (err) {
      clearTimeout(watchdog);
      if (stopped) return;
      onState(navigator.onLine === false ? "offline" : backoff >= 4 * MIN_BACKOFF_MS ? "failed" : "stale");
      const wait = backoff * (0.75 + Math.random() * 0.5);
      backoff = Math.min(MAX_BACKOFF_MS, backoff * 2);
      retryTimer = setTimeout(connect, wait);
    }
  }

  const online = () => { if (!stopped) { clearTimeout(retryTimer); backoff = MIN_BACKOFF_MS; if (controller) controller.abort(); } };
  window.addEventListener("online", online);
  connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(watchdog);
      clearTimeout(retryTimer);
      window.removeEventListener("online", online);
      if (controller) controller.abort();
    },
  };
}
