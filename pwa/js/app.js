// Boot, router, tab bar and rail, keyboard map, sync line, offline banner, service worker.
import { createApi, storedToken, storeToken, forgetToken, ApiError } from "./api.js";
import { h, clear, fill, typing, visible } from "./dom.js";
import { TABS, match } from "./routes.js";
import { dialog, confirmTyped, toast } from "./ui.js";
import { startLive } from "./live.js";
import { flushAll } from "./undo.js";

const SETTINGS_KEY = "agent-hub.settings";
const DEFAULT_SETTINGS = { theme: "system", density: "comfortable", shortcuts: true, undoSeconds: 5 };

export const KEY_MAP = [
  ["j", "Next row"], ["k", "Previous row"], ["Enter", "Open the selected row"],
  ["a", "Approve the selected approval (asks first)"], ["r", "Reply to the selected question"],
  ["/", "Search (from any screen)"],
  ["Esc", "Close a dialog or go back"], ["?", "This list of keys"],
];

function loadSettings() {
  try {
    const raw = JSON.parse(localStorage.getItem(SETTINGS_KEY) || "{}");
    return { ...DEFAULT_SETTINGS, ...(raw && typeof raw === "object" ? raw : {}) };
  } catch { return { ...DEFAULT_SETTINGS }; }
}

function applySettings(s) {
  const root = document.documentElement;
  if (s.theme === "light" || s.theme === "dark") root.dataset.theme = s.theme; else delete root.dataset.theme;
  root.dataset.density = s.density === "compact" ? "compact" : "comfortable";
  const dark = s.theme === "dark" || (s.theme !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);
  const meta = document.querySelector('meta[name="theme-color"]');
  if (meta) meta.setAttribute("content", dark ? "#111418" : "#ffffff");
}

class App {
  constructor() {
    this.settings = loadSettings();
    this.me = null;
    this.build = null;
    this.api = createApi({ token: storedToken, onUnauthorized: () => this.refused() });
    this.current = null; // {hooks, route, params, hash}
    this.seq = 0;
    this.live = null;
    this.liveState = "idle";
    this.missed = false; // a live change came while no screen could take it
    this.toast = toast;
    this.dialog = dialog;
    this.confirmTyped = confirmTyped;
  }

  // --- the frame: rail or tab bar, main, banners -------------------------------------------------

  frame() {
    const rest = TABS.filter((t) => !t.primary);
    this.moreBtn = h("button", { type: "button", class: "tab more-tab", "aria-expanded": "false",
      "aria-controls": "more-menu", onclick: () => this.toggleMore() },
    h("span", { class: "icon icon-more", "aria-hidden": "true" }), h("span", { class: "tab-label" }, "More"));
    this.moreMenu = h("div", { class: "more-menu", id: "more-menu", hidden: true },
      h("ul", {}, rest.map((t) => h("li", {}, h("a", { href: t.hash, class: "more-link", dataset: { more: t.id },
        onclick: () => this.toggleMore(false) },
      h("span", { class: `icon icon-${t.id}`, "aria-hidden": "true" }), h("span", {}, t.label))))));
    this.nav = h("nav", { class: "tabs", "aria-label": "Main" },
      h("ul", {}, TABS.map((t) => h("li", { class: t.primary ? "primary" : "secondary" },
        h("a", { href: t.hash, class: "tab", dataset: { tab: t.id } },
          h("span", { class: `icon icon-${t.id}`, "aria-hidden": "true" }),
          h("span", { class: "tab-label" }, t.label),
          h("span", { class: "badge", hidden: true, dataset: { badge: t.id } })))),
      h("li", { class: "more-item" }, this.moreBtn)),
      this.moreMenu);
    document.addEventListener("click", (e) => {
      if (!this.moreMenu.hidden && !this.nav.contains(e.target)) this.toggleMore(false);
    });
    this.main = h("main", { id: "main", tabIndex: -1 });
    this.sync = h("div", { class: "sync", role: "status", hidden: true });
    this.offline = h("div", { class: "offline-banner", role: "status", hidden: true },
      "You are offline. The app is the saved copy; what you see may be out of date.");
    const body = document.body;
    clear(body);
    body.append(
      h("a", { href: "#main", class: "skip", onclick: (e) => { e.preventDefault(); this.focusHeading(); } },
        "Skip to content"),
      this.offline, this.sync, this.nav, this.main,
      h("div", { id: "toasts", class: "toasts", "aria-live": "polite" }),
    );
    const setOnline = () => { this.offline.hidden = navigator.onLine !== false; };
    window.addEventListener("online", setOnline);
    window.addEventListener("offline", setOnline);
    setOnline();
  }

  setTab(id) {
    for (const a of this.nav.querySelectorAll("a.tab, a.more-link")) {
      if ((a.dataset.tab || a.dataset.more) === id) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    }
    // On a phone, More stands for the tab it holds: lit, and named, when one of them is current.
    const held = TABS.find((t) => !t.primary && t.id === id);
    this.moreBtn.classList.toggle("current", !!held);
    if (held) this.moreBtn.setAttribute("aria-label", `More (${held.label} is open)`);
    else this.moreBtn.removeAttribute("aria-label");
    this.toggleMore(false);
  }

  // The phone's More menu: open or close it (force: true or false), Esc and a tap elsewhere close it.
  toggleMore(force) {
    const open = force === undefined ? this.moreMenu.hidden : force;
    if (open === !this.moreMenu.hidden) return;
    this.moreMenu.hidden = !open;
    this.moreBtn.setAttribute("aria-expanded", String(open));
    if (open) {
      const first = this.moreMenu.querySelector("a");
      if (first) first.focus();
    }
  }

  // A count beside a tab's label (Inbox: items waiting on the human); 0 hides it.
  setBadge(id, n, label) {
    const b = this.nav.querySelector(`[data-badge="${id}"]`);
    if (!b) return;
    b.hidden = !n;
    b.textContent = n > 99 ? "99+" : String(n || "");
    if (label) b.setAttribute("aria-label", label);
  }

  focusHeading() {
    const h1 = this.main.querySelector("h1");
    if (h1) h1.focus({ preventScroll: false });
  }

  // --- routing -----------------------------------------------------------------------------------

  navigate(hash) {
    if (location.hash === hash) this.route(); else location.hash = hash;
  }

  async route() {
    const hash = location.hash || "#/";
    const found = match(hash);
    const token = storedToken();
    if (!found) return this.show404(hash);
    if (!found.route.open && !token) {
      location.replace(`#/connect?next=${encodeURIComponent(hash)}`);
      return;
    }
    this.nav.hidden = !!found.route.open;
    // The limits first: a live change arriving while they were read would be dropped by mount().
    if (token) await this.loadLimits();
    if (token && !this.live) this.startLive();
    await this.mount(found.route, found.params, hash);
  }

  // The hub's limits (GET /limits: lengths, id rules), read once a connection: the app copies none.
  // Unread (the hub unreachable), `limits` stays null and the screens check nothing themselves: the
  // hub refuses what is over, and they show its answer.
  async loadLimits() {
    if (this.limits) return;
    try {
      this.limits = await this.api.get("/limits");
    } catch {
      this.limits = null;
    }
  }

  leave() {
    flushAll(); // an answer held for Undo is sent when its screen is left, never lost
    if (this.current && this.current.hooks && this.current.hooks.dispose) {
      try { this.current.hooks.dispose(); } catch (err) { console.error(err); }
    }
    this.current = null;
  }

  async mount(route, params, hash) {
    const seq = ++this.seq;
    this.leave();
    this.missed = false;
    this.setTab(route.tab);
    let mod;
    try {
      mod = (await import(route.module)).default;
    } catch (err) {
      if (seq === this.seq) this.showError("This screen could not be loaded.", err);
      return;
    }
    if (seq !== this.seq) return;
    const title = mod.title(params);
    document.title = title ? `${visible(title)} · Agent Hub` : "Agent Hub";
    const h1 = h("h1", { tabIndex: -1, class: "screen-title" }, title);
    const root = h("section", { class: "screen-body", "aria-labelledby": "screen-title" });
    h1.id = "screen-title";
    fill(this.main, h("div", { class: `screen screen-${route.tab || "connect"}` }, h1, root));
    h1.focus();
    this.current = { hooks: null, route, params, hash, root };
    try {
      const hooks = await mod.render(root, params, this);
      if (seq !== this.seq) { if (hooks && hooks.dispose) hooks.dispose(); return; }
      this.current.hooks = hooks || {};
      // A change that arrived while the screen was still reading may not be in what it drew.
      if (this.missed && this.current.hooks.onLive) this.current.hooks.onLive({ type: "refresh", data: {} });
    } catch (err) {
      if (seq !== this.seq) return;
      if (err instanceof ApiError && err.status === 401) return; // Connect takes over
      fill(root, h("div", { class: "panel error", role: "alert" },
        h("p", {}, err instanceof ApiError ? err.message : "Something went wrong drawing this screen."),
        h("button", { type: "button", class: "btn", onclick: () => this.route() }, "Try again")));
      if (!(err instanceof ApiError)) console.error(err);
    }
  }

  show404(hash) {
    this.leave();
    this.setTab(null);
    document.title = "Not found · Agent Hub";
    fill(this.main, h("div", { class: "screen" },
      h("h1", { tabIndex: -1, id: "screen-title" }, "Nothing here"),
      h("p", {}, "The address ", h("code", {}, hash), " names no screen."),
      h("a", { href: "#/", class: "btn" }, "Go to Home")));
    this.focusHeading();
  }

  showError(text, err) {
    console.error(err);
    fill(this.main, h("div", { class: "screen" },
      h("h1", { tabIndex: -1, id: "screen-title" }, "Something went wrong"),
      h("p", {}, text),
      h("button", { type: "button", class: "btn", onclick: () => this.route() }, "Try again")));
    this.focusHeading();
  }

  // --- the token ---------------------------------------------------------------------------------

  // The hub refused the stored token: back to Connect, then back here.
  refused() {
    const here = location.hash || "#/";
    forgetToken();
    this.stopLive();
    if (match(here) && match(here).route.open) return;
    toast("The hub did not accept the token. Connect again.", { kind: "error" });
    location.replace(`#/connect?next=${encodeURIComponent(here)}`);
  }

  // Check a token against the hub (the admin's Home); store it only once accepted.
  async connect(token) {
    await this.api.get("/home", undefined, { auth: token });
    storeToken(token);
    this.me = { role: "admin" };
  }

  signOut() {
    forgetToken();
    this.stopLive();
    this.me = null;
    location.hash = "#/connect";
  }

  // --- live ----------------------------------------------------------------------------------------

  startLive() {
    this.live = startLive({
      token: storedToken,
      onChange: (change) => this.onLive(change),
      onState: (state) => this.setLiveState(state),
      onUnauthorized: () => this.refused(),
    });
  }

  stopLive() {
    if (this.live) this.live.stop();
    this.live = null;
    this.setLiveState("idle");
  }

  onLive(change) {
    const hooks = this.current && this.current.hooks;
    if (change.type === "inbox" || change.type === "refresh") this.refreshBadge();
    if (!hooks) this.missed = true; // a screen still loading or reading: told once it has drawn
    if (hooks && hooks.onLive) {
      try { hooks.onLive(change); } catch (err) { console.error(err); }
    }
  }

  setLiveState(state) {
    this.liveState = state;
    document.documentElement.dataset.live = state;
    const text = { stale: "Reconnecting to the hub… what you see may be out of date.",
      failed: "Lost the connection to the hub. Retrying…",
      offline: "Offline. Updates resume when the network is back." }[state];
    this.sync.hidden = !text;
    this.sync.textContent = text || "";
    if (state === "live") this.refreshBadge();
  }

  async refreshBadge() {
    clearTimeout(this.badgeTimer);
    this.badgeTimer = setTimeout(async () => {
      try {
        const home = await this.api.get("/home");
        this.setBadge("inbox", home.waiting, `${home.waiting} waiting on you`);
        // The app icon's badge (Badging API, where the platform has it); pushes update it too.
        if (navigator.setAppBadge) (home.waiting ? navigator.setAppBadge(home.waiting) : navigator.clearAppBadge()).catch(() => {});
      } catch { /* the sync line speaks for a failed hub */ }
    }, 250);
  }

  // --- keys ----------------------------------------------------------------------------------------

  onKey(e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape" && this.moreMenu && !this.moreMenu.hidden) {
      e.preventDefault();
      this.toggleMore(false);
      this.moreBtn.focus();
      return;
    }
    if (document.querySelector("dialog[open]")) return; // the dialog has the keys (Esc closes it)
    if (typing(e.target)) return;
    const hooks = (this.current && this.current.hooks) || {};
    const keys = hooks.keys || {};
    if (e.key === "?") {
      e.preventDefault();
      this.showKeys();
      return;
    }
    if (e.key === "Escape") {
      if (keys.Escape) { e.preventDefault(); keys.Escape(); }
      return;
    }
    if (!this.settings.shortcuts) return;
    if (e.key === "/" && !keys["/"]) { // search from anywhere; the search screen focuses its field
      e.preventDefault();
      this.navigate("#/search");
      return;
    }
    if (e.key === "Enter") {
      const t = e.target;
      if (t instanceof Element && t.closest("a, button, summary, [role=button]")) return; // native activation
    }
    const handler = keys[e.key];
    if (handler) {
      e.preventDefault();
      handler();
    }
  }

  showKeys() {
    const rows = KEY_MAP.map(([k, what]) => h("tr", {}, h("th", { scope: "row" }, h("kbd", {}, k)), h("td", {}, what)));
    const note = this.settings.shortcuts ? null
      : h("p", {}, "Single-key shortcuts are off; turn them on in Settings.");
    dialog({ title: "Keyboard shortcuts",
      body: h("div", {}, note, h("table", { class: "keys" }, h("tbody", {}, rows))),
      actions: [{ label: "Close", value: null, primary: true }] });
  }

  saveSettings(patch) {
    this.settings = { ...this.settings, ...patch };
    localStorage.setItem(SETTINGS_KEY, JSON.stringify(this.settings));
    applySettings(this.settings);
  }

  // --- boot ----------------------------------------------------------------------------------------

  async loadBuild() {
    try {
      const res = await fetch("/app/shell.json", { cache: "no-cache" });
      this.build = res.ok ? await res.json() : null;
    } catch { this.build = null; }
    return this.build;
  }

  registerWorker() {
    if (!("serviceWorker" in navigator)) return;
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).then((reg) => {
      if (!reg) return; // registration blocked (a test harness may block workers)
      reg.addEventListener("updatefound", () => {
        const next = reg.installing;
        if (!next || !navigator.serviceWorker.controller) return;
        next.addEventListener("statechange", () => {
          if (next.state === "activated") {
            toast("A new version of the app is ready.", { action: { label: "Reload", run: () => location.reload() } });
          }
        });
      });
    }).catch((err) => console.warn("service worker not registered", err));
  }

  start() {
    applySettings(this.settings);
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => applySettings(this.settings));
    this.frame();
    if (storedToken()) this.me = { role: "admin" };
    window.addEventListener("hashchange", () => this.route());
    document.addEventListener("keydown", (e) => this.onKey(e));
    this.registerWorker();
    this.route();
  }
}

export const app = new App();
app.start();
