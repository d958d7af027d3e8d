// The artifact page's shell: back, theme toggle, version picker, and the password gate.
// The artifact itself runs only inside the sandboxed frame; this script never puts its text into
// the shell. A protected artifact is decrypted here with WebCrypto (PBKDF2-HMAC-SHA256, AES-256-GCM,
// the envelope the agent's machine wrote) and handed to the frame's loader by postMessage.
"use strict";

const data = JSON.parse(document.getElementById("artifact-data").textContent);
const root = document.documentElement;
const THEME_KEY = "hub-theme";

function frameWindow() {
  const frame = document.getElementById("artifact-frame");
  return frame ? frame.contentWindow : null;
}

function applyTheme(theme) {
  root.dataset.theme = theme;
  const button = document.getElementById("theme-toggle");
  button.setAttribute("aria-pressed", String(theme === "dark"));
  button.textContent = theme === "dark" ? "Light theme" : "Dark theme";
  const win = frameWindow();
  // The frame's origin is opaque (sandboxed), so "*" is the only target that reaches it.
  if (win) win.postMessage({ hubTheme: theme }, "*");
}

function initialTheme() {
  let stored = null;
  try { stored = localStorage.getItem(THEME_KEY); } catch (e) { stored = null; }
  if (stored === "dark" || stored === "light") return stored;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

document.getElementById("theme-toggle").addEventListener("click", () => {
  const next = root.dataset.theme === "dark" ? "light" : "dark";
  try { localStorage.setItem(THEME_KEY, next); } catch (e) { /* private mode: theme for this page only */ }
  applyTheme(next);
});

// Back only when there is somewhere to go back to: a page of this hub before this one in the tab
// (the Navigation API sees only same-origin entries; without it, any earlier entry), or a page of
// this hub that linked here (a link opened in a new tab). A page opened on its own (from a chat, a
// mail) shows none: the browser's own Back covers another site. The button hides until this says so.
function backTarget() {
  const nav = window.navigation;
  const earlier = nav && typeof nav.canGoBack === "boolean" ? nav.canGoBack : history.length > 1;
  if (earlier) return () => history.back();
  let from = null;
  try { from = document.referrer ? new URL(document.referrer) : null; } catch (e) { from = null; }
  if (from && from.origin === location.origin && from.href !== location.href) return () => location.assign(from.href);
  return null;
}

const goBack = backTarget();
const back = document.getElementById("back");
if (goBack) {
  back.hidden = false;
  back.addEventListener("click", goBack);
}

const picker = document.getElementById("version-picker");
if (picker) {
  picker.addEventListener("change", () => {
    const params = new URLSearchParams(location.search);
    params.set("version", picker.value);
    location.search = params.toString();
  });
}

function addFrame() {
  const frame = document.createElement("iframe");
  frame.id = "artifact-frame";
  frame.title = data.title;
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.src = data.frame;
  document.getElementById("stage").appendChild(frame);
  frame.addEventListener("load", () => applyTheme(root.dataset.theme));
  return frame;
}

// -- protected artifacts ------------------------------------------------------------------------

const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)));
const keyName = () => `hub-artifact-key:${data.key}:${data.envelope.salt}`;

async function deriveKey(password) {
  const base = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false,
    ["deriveBits"]);
  return crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: bytes(data.envelope.salt),
    iterations: data.envelope.iterations }, base, 256);
}

async function decrypt(rawKey) {
  const key = await crypto.subtle.importKey("raw", rawKey, "AES-GCM", false, ["decrypt"]);
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes(data.envelope.iv) }, key,
    bytes(data.ciphertext));
  return new TextDecoder("utf-8", { fatal: true }).decode(plain);
}

function escapeText(text) {
  const div = document.createElement("div");
  div.textContent = text;
  return div.innerHTML;
}

function documentFor(text) {
  if (data.kind === "html") return text;
  // Markdown held only as ciphertext cannot be rendered by the hub: shown as text, never as markup.
  return `<!doctype html><meta charset="utf-8"><style>body{font:15px/1.5 system-ui,sans-serif;margin:1.5rem}` +
    `pre{white-space:pre-wrap}</style><pre>${escapeText(text)}</pre>`;
}

function show(text) {
  document.getElementById("gate").hidden = true;
  const frame = addFrame();
  const html = documentFor(text);
  addEventListener("message", function ready(event) {
    if (event.source !== frame.contentWindow || !event.data || event.data.hubReady !== true) return;
    removeEventListener("message", ready);
    frame.contentWindow.postMessage({ hubDocument: html }, "*");
  });
}

async function unlock(event) {
  event.preventDefault();
  const error = document.getElementById("gate-error");
  error.hidden = true;
  const password = document.getElementById("password").value;
  try {
    const rawKey = await deriveKey(password);
    const text = await decrypt(rawKey);
    if (document.getElementById("remember").checked) {
      try { localStorage.setItem(keyName(), b64(rawKey)); } catch (e) { /* not remembered */ }
    }
    show(text);
  } catch (e) {
    error.textContent = "Wrong password: this password does not open the artifact.";
    error.hidden = false;
  }
}

async function remembered() {
  let stored = null;
  try { stored = localStorage.getItem(keyName()); } catch (e) { return false; }
  if (!stored) return false;
  try { show(await decrypt(bytes(stored))); return true; } catch (e) {
    localStorage.removeItem(keyName());
    return false;
  }
}

applyTheme(initialTheme());
if (data.protected) {
  document.getElementById("gate").addEventListener("submit", unlock);
  remembered();
} else {
  addFrame();
}
