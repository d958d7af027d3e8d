// The artifact's frame and protected versions, as the public artifact page does them
// (hubhttp/pages/assets/viewer.js): the frame is the hub's `/artifacts/:id/frame` with its own CSP,
// `sandbox="allow-scripts"` and never `allow-same-origin`; while a share link is live, the address
// carries the admin's viewer pass (`?pass=`, from GET /viewer-pass, valid about a minute). A protected
// version is decrypted here with WebCrypto (PBKDF2-HMAC-SHA256 -> AES-256-GCM, the envelope the
// agent's machine wrote) and handed to the frame's loader by postMessage: the password never leaves
// this page, and nothing decrypted is put into the app's own DOM (but a passage the reader selects, as
// text, to comment on).
import { h } from "../../dom.js";

const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

export async function decrypt(envelope, ciphertext, password) {
  const base = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false,
    ["deriveBits"]);
  const raw = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: bytes(envelope.salt),
    iterations: envelope.iterations }, base, 256);
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["decrypt"]);
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes(envelope.iv) }, key, bytes(ciphertext));
  return new TextDecoder("utf-8", { fatal: true }).decode(plain);
}

// The document the loader writes: HTML as decrypted; markdown (which the hub cannot render from
// ciphertext) as text inside <pre>, escaped through a text node, never read as markup.
function documentFor(kind, text) {
  if (kind === "html") return text;
  const doc = document.implementation.createHTMLDocument("Protected artifact");
  const style = doc.createElement("style");
  style.textContent = "body{font:15px/1.5 system-ui,sans-serif;margin:1.5rem}pre{white-space:pre-wrap}";
  const pre = doc.createElement("pre");
  pre.textContent = text;
  doc.head.append(style);
  doc.body.append(pre);
  // Serialised by the browser: the text's "<" and "&" come out escaped.
  return "<!doctype html>" + new XMLSerializer().serializeToString(doc.documentElement);
}

function theme() {
  const set = document.documentElement.dataset.theme;
  if (set === "dark" || set === "light") return set;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

// The frame's address for a version, with the viewer pass (a live share link hides the page without
// it): `fresh`, one just read, or a new one read now.
export async function frameAddress(app, artifact, fresh = null) {
  const id = encodeURIComponent(artifact.id);
  const pass = fresh || (await app.api.get(`/artifacts/${id}/viewer-pass`)).pass;
  const q = new URLSearchParams({ version: String(artifact.version), pass });
  return `/artifacts/${id}/frame?${q}`;
}

// A sandboxed frame at `src`; `decrypted` (a protected version's text) goes to its loader once it asks.
export function artifactFrame(src, artifact, decrypted = null) {
  const frame = h("iframe", { class: "art-frame", title: artifact.title, sandbox: "allow-scripts",
    referrerpolicy: "no-referrer" });
  frame.addEventListener("load", () => {
    if (frame.contentWindow) frame.contentWindow.postMessage({ hubTheme: theme() }, "*");
  });
  if (decrypted !== null) {
    const html = documentFor(artifact.kind, decrypted);
    const ready = (event) => {
      if (event.source !== frame.contentWindow || !event.data || event.data.hubReady !== true) return;
      window.removeEventListener("message", ready);
      // The frame's origin is opaque (sandboxed): "*" is the only target that reaches it.
      frame.contentWindow.postMessage({ hubDocument: html }, "*");
    };
    window.addEventListener("message", ready);
  }
  frame.src = src;
  return frame;
}
