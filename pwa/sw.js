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
