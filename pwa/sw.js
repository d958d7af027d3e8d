// The service worker: precaches the app shell under a cache named for the shell's digest (the hub
// writes the digest and the file list in as it serves this file), so an upgrade installs a new
// cache and drops the old one. It never caches /api: the hub's data is always read live.

const DIGEST = "__SHELL_DIGEST__";
const FILES = __SHELL_FILES__;
const CACHE = `agent-hub-shell-${DIGEST}`;
const PREFIX = "agent-hub-shell-";

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(FILES.map((f) => new Request(f, { cache: "reload" }))))
    .then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((n) => n.startsWith(PREFIX) && n !== CACHE).map((n) => caches.delete(n))))
    .then(() => self.clients.claim()));
});

function isShell(url) {
  return url.origin === self.location.origin && FILES.includes(url.pathname);
}

self.addEventListener("fetch", (event) => {
  const req = event.request;
  if (req.method !== "GET") return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin || url.pathname.startsWith("/api/")) return; // never cached
  if (!isShell(url)) return;
  // The shell's files: from this release's cache, so the app starts offline and never mixes releases.
  event.respondWith(caches.open(CACHE).then((c) => c.match(url.pathname)).then((hit) => hit || fetch(req)));
});

// -- Web Push (DESIGN section 11) ----------------------------------------------------------------
// The worker holds no token. A push names one item; each button carries its own capability, which
// POST /api/v1/push/act accepts for exactly that item and choice, once. A "close" push (the item
// was resolved elsewhere) closes the item's notification. The app badge follows the waiting count.

function setBadge(count) {
  if (typeof count !== "number" || !self.navigator || !self.navigator.setAppBadge) return Promise.resolve();
  return (count > 0 ? self.navigator.setAppBadge(count) : self.navigator.clearAppBadge()).catch(() => {});
}

async function closeItem(id) {
  const shown = await self.registration.getNotifications({ tag: id });
  shown.forEach((n) => n.close());
}

async function showItem(msg) {
  const max = (self.Notification && self.Notification.maxActions) || 2;
  const actions = Array.isArray(msg.actions) ? msg.actions : [];
  // As many buttons as the platform offers; the rest stay behind a tap (which opens the item).
  await self.registration.showNotification(String(msg.title || "Agent Hub"), {
    body: String(msg.body || ""),
    tag: String(msg.id || "agent-hub"),
    renotify: true,
    icon: "/app/icons/icon-192.png",
    data: { id: msg.id, url: msg.url || "/#/inbox", actions },
    actions: actions.slice(0, max).map((a) => ({ action: String(a.action), title: String(a.title) })),
  });
}

self.addEventListener("push", (event) => {
  let msg = null;
  try { msg = event.data ? event.data.json() : null; } catch { msg = null; }
  if (!msg || msg.v !== 1) return;
  const work = msg.type === "close" ? closeItem(String(msg.id)) : showItem(msg);
  event.waitUntil(Promise.all([work, setBadge(msg.badge)]));
});

async function openApp(url) {
  const target = new URL(url || "/#/inbox", self.location.origin);
  if (target.origin !== self.location.origin) return; // a push never sends the human elsewhere
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const w of windows) {
    if (new URL(w.url).origin === target.origin) {
      await w.focus();
      return w.navigate ? w.navigate(target.href).catch(() => {}) : undefined;
    }
  }
  return self.clients.openWindow(target.href);
}

const ACT_SAYS = { 200: "Done", 409: "Already answered in the app", 404: "This button has expired: open the app" };

async function act(notification, action) {
  const data = notification.data || {};
  const button = (data.actions || []).find((a) => a.action === action);
  if (!button) return openApp(data.url);
  let status = 0;
  try {
    const res = await fetch("/api/v1/push/act", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ cap: button.cap }), cache: "no-store" });
    status = res.status;
  } catch { status = 0; }
  // Say what happened in the same place: the same tag replaces the item's notification, so there is
  // never a moment with neither (closing first left one, and a slow worker showed nothing at all).
  const tag = String(data.id || "agent-hub");
  await self.registration.showNotification(`${ACT_SAYS[status] || "Not sent: open the app"}: ${button.title}`, {
    body: notification.title, tag, data: { id: data.id, url: data.url, actions: [], acted: { action, status } },
  });
  if (notification.tag !== tag) notification.close();
}

self.addEventListener("notificationclick", (event) => {
  const n = event.notification;
  event.waitUntil(event.action ? act(n, event.action) : (n.close(), openApp((n.data || {}).url)));
});
