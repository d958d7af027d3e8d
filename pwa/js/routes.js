// The route table: a hash pattern, the screen module that draws it, and the tab it lights up.
// Patterns: "#/projects/:id" binds params.id; the query after "?" (e.g. "?tab=feed") joins the params.

export const ROUTES = [
  { pattern: "/connect", module: "./screens/connect.js", tab: null, open: true },
  { pattern: "/", module: "./screens/home.js", tab: "home" },
  { pattern: "/inbox", module: "./screens/inbox.js", tab: "inbox" },
  { pattern: "/settings", module: "./screens/settings.js", tab: "settings" },
  { pattern: "/projects", module: "./screens/projects.js", tab: "projects" },
  { pattern: "/projects/:id", module: "./screens/project.js", tab: "projects" },
  { pattern: "/projects/:id/artifacts", module: "./screens/artifacts.js", tab: "projects" },
  { pattern: "/projects/:id/wiki", module: "./screens/wiki.js", tab: "projects" },
  { pattern: "/artifacts/:id", module: "./screens/artifact.js", tab: "projects" },
  { pattern: "/feed", module: "./screens/feed.js", tab: "projects" },
  { pattern: "/sessions/:id", module: "./screens/session.js", tab: "projects" },
  { pattern: "/storage", module: "./screens/storage.js", tab: "storage" },
  { pattern: "/access", module: "./screens/access.js", tab: "access" },
  { pattern: "/search", module: "./screens/search.js", tab: "search" },
];

// The tab bar (phone) and rail (desktop), in order. Icons are drawn by app.css. A phone's bar holds
// the four `primary` tabs and More (the rest), so nothing is cut at 320 px; the rail holds them all.
export const TABS = [
  { id: "home", label: "Home", hash: "#/", primary: true },
  { id: "inbox", label: "Inbox", hash: "#/inbox", primary: true },
  { id: "projects", label: "Projects", hash: "#/projects", primary: true },
  { id: "search", label: "Search", hash: "#/search", primary: true },
  { id: "storage", label: "Storage", hash: "#/storage" },
  { id: "access", label: "Access", hash: "#/access" },
  { id: "settings", label: "Settings", hash: "#/settings" },
];

function decode(part) {
  try { return decodeURIComponent(part); } catch { return null; }
}

// "#/projects/webshop?tab=feed" -> {route, params: {id: "webshop", tab: "feed"}}, or null.
export function match(hash) {
  let raw = (hash || "").replace(/^#/, "");
  if (!raw.startsWith("/")) raw = "/" + raw; // "#connect" (the first start's address) is "#/connect"
  const [path, query = ""] = raw.split("?", 2);
  const parts = path.split("/").filter(Boolean);
  for (const route of ROUTES) {
    const want = route.pattern.split("/").filter(Boolean);
    if (want.length !== parts.length) continue;
    const params = {};
    let ok = true;
    want.forEach((w, i) => {
      if (w.startsWith(":")) {
        const v = decode(parts[i]);
        if (v === null || v === "") ok = false; else params[w.slice(1)] = v;
      } else if (w !== parts[i]) {
        ok = false;
      }
    });
    if (!ok) continue;
    for (const [k, v] of new URLSearchParams(query)) if (!(k in params)) params[k] = v;
    return { route, params };
  }
  return null;
}

// The hash for a route pattern and params: link("/projects/:id", {id: "a b"}) -> "#/projects/a%20b".
export function link(pattern, params = {}, query = {}) {
  const path = pattern.replace(/:([a-z]+)/gi, (_, k) => encodeURIComponent(params[k] ?? ""));
  const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  const qs = q.toString();
  return `#${path}${qs ? "?" + qs : ""}`;
}
