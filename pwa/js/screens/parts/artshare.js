// The share sheet: the artifact's one share link (pinned to the version shared), created, copied (or
// handed to the platform's share sheet) and revoked. While a link is live the artifact's own public
// page answers only with the admin's viewer pass (the app's frame carries one); revoking makes
// `/s/<token>` answer 404 at once.
import { h, fill } from "../../dom.js";
import { when } from "../../format.js";
import { busy, errorText } from "./common.js";

// The link as a full address: `url` is relative (`s/<token>`) unless HUB_PUBLIC_URL is set.
export function absolute(url) {
  return /^https?:\/\//.test(url) ? url : new URL(url.replace(/^\/?/, "/"), location.origin).href;
}

async function copy(app, text, what) {
  try {
    await navigator.clipboard.writeText(text);
    app.toast(`${what} copied`);
  } catch {
    app.toast(`Could not copy the ${what.toLowerCase()}: this browser refused the clipboard`, { kind: "error" });
  }
}

// The platform's share sheet (Web Share), where the browser has one: offered beside Copy, never
// instead of it. Closing the sheet without choosing is no error.
function canShare(address) {
  if (typeof navigator.share !== "function") return false;
  try {
    return typeof navigator.canShare !== "function" || navigator.canShare({ url: address });
  } catch {
    return false;
  }
}

async function share(app, title, address) {
  try {
    await navigator.share({ title, url: address });
  } catch (err) {
    if (err && err.name === "AbortError") return;
    app.toast(`Could not open the share sheet: ${err && err.message ? err.message : "this browser refused"}`,
      { kind: "error" });
  }
}

function button(label, run, cls = "btn") {
  const b = h("button", { type: "button", class: cls }, label);
  b.addEventListener("click", () => busy(b, run));
  return b;
}

function linkView(app, link, artifact, redraw) {
  const id = artifact.id;
  const address = absolute(link.url);
  const out = h("output", { class: "art-share-url" }, address);
  return h("div", {},
    h("p", {}, `Anyone with this link sees version ${link.version}`,
      link.created_at ? ` (shared ${when(link.created_at)})` : "", "."),
    out,
    h("div", { class: "btn-row" },
      button("Copy link", () => copy(app, address, "Link"), "btn primary"),
      canShare(address) ? button("Share via…", () => share(app, artifact.title, address)) : null,
      button("Revoke link", async () => {
        try {
          await app.api.del(`/artifacts/${encodeURIComponent(id)}/share`);
          app.toast("Link revoked: it no longer opens");
        } catch (err) {
          app.toast(errorText(err), { kind: "error" });
        }
        await redraw();
      }, "btn danger")));
}

// Open the sheet (a dialog): reads the current link, then offers create or copy and revoke.
export async function shareSheet(app, artifact) {
  const id = artifact.id;
  const body = h("div", { class: "art-share" }, h("p", { role: "status" }, "Loading…"));
  const redraw = async () => {
    let link = null;
    try {
      link = await app.api.get(`/artifacts/${encodeURIComponent(id)}/share`);
    } catch (err) {
      if (err.status !== 404) { fill(body, h("p", { class: "error-text", role: "alert" }, errorText(err))); return; }
    }
    if (link) { fill(body, linkView(app, link, artifact, redraw)); return; }
    fill(body, h("p", {}, artifact.protected
      ? "Not shared. A link shows the page with its password gate: the password is never in the link."
      : "Not shared. A link opens the current version read-only for anyone who has it."),
    h("div", { class: "btn-row" }, button("Create a link", async () => {
      try {
        await app.api.post(`/artifacts/${encodeURIComponent(id)}/share`, {});
        app.toast("Link created");
      } catch (err) {
        app.toast(errorText(err), { kind: "error" });
      }
      await redraw();
    }, "btn primary")));
  };
  const shown = app.dialog({ title: "Share", body, actions: [{ label: "Close", value: null }] });
  await redraw();
  return shown;
}
