// Settings, Notifications: push on this device (permission, subscribe, name it), every device with its
// filters, a test push, revoke; why push cannot work here when it cannot; the notify target's state.
import { h, fill } from "../../dom.js";
import { ago } from "../../format.js";
import { errorText } from "./common.js";

const DEVICE_KEY = "agent-hub.push-device"; // the device id this browser registered
const KINDS = [["question", "Questions"], ["approval", "Approvals"], ["enrol_request", "Enrolment requests"],
  ["finished", "Finished work"], ["idea", "Ideas"]];

// Why push cannot work in this browser, or null when it can.
export function pushBlocked() {
  if (!window.isSecureContext) {
    return "Push needs a secure context: open the hub over HTTPS (the tailnet recipe in docs/operations.md " +
      "gives it HTTPS) or on localhost. Until then the notify target (notify_url) can tell you something waits.";
  }
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    return "This browser cannot receive push notifications. On an iPhone or iPad, add the app to the home " +
      "screen first (Share, Add to Home Screen) and open it from there.";
  }
  if (Notification.permission === "denied") {
    return "Notifications are blocked for this site: allow them in the browser's site settings, then come back.";
  }
  return null;
}

function keyBytes(b64) {
  const raw = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

function thisDevice() {
  try { return localStorage.getItem(DEVICE_KEY); } catch { return null; }
}

function rememberDevice(id) {
  try { if (id) localStorage.setItem(DEVICE_KEY, id); else localStorage.removeItem(DEVICE_KEY); } catch { /* blocked */ }
}

async function subscribe(app, name) {
  if ((await Notification.requestPermission()) !== "granted") throw new Error("Notifications were not allowed.");
  const { public_key: key } = await app.api.get("/push/key");
  const reg = await navigator.serviceWorker.ready;
  const sub = (await reg.pushManager.getSubscription()) ||
    (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) }));
  const json = sub.toJSON();
  const device = await app.api.post("/push/devices", { name, endpoint: json.endpoint, keys: json.keys });
  rememberDevice(device.id);
  return device;
}

function filtersForm(device, idBase, onSave) {
  const f = device.filters;
  const kinds = KINDS.map(([kind, label]) => {
    const box = h("input", { type: "checkbox", id: `${idBase}-k-${kind}`, value: kind, checked: f.kinds.includes(kind) });
    return { box, node: h("label", { class: "choice", htmlFor: box.id }, box, label) };
  });
  const prio = h("select", { id: `${idBase}-prio`, class: "field" },
    [["low", "Everything"], ["normal", "Normal and high"], ["high", "High only"]].map(([v, label]) =>
      h("option", { value: v, selected: f.min_priority === v }, label)));
  const content = h("select", { id: `${idBase}-content`, class: "field" },
    h("option", { value: "full", selected: f.content === "full" }, "Show the question (end-to-end encrypted)"),
    h("option", { value: "contentless", selected: f.content === "contentless" }, "Only say something waits"));
  const projects = h("input", { id: `${idBase}-projects`, class: "field", value: (f.projects || []).join(", "),
    placeholder: "every project" });
  const q = f.quiet_hours || {};
  const start = h("input", { type: "time", id: `${idBase}-qs`, class: "field", value: q.start || "" });
  const end = h("input", { type: "time", id: `${idBase}-qe`, class: "field", value: q.end || "" });
  const error = h("p", { class: "error-text", role: "alert" });
  const save = h("button", { type: "submit", class: "btn" }, "Save filters");
  const form = h("form", { class: "push-filters" },
    h("fieldset", {}, h("legend", {}, "Push"), kinds.map((k) => k.node)),
    h("label", { class: "label", htmlFor: prio.id }, "Minimum priority"), prio,
    h("label", { class: "label", htmlFor: projects.id }, "Projects (ids, comma separated)"), projects,
    h("label", { class: "label", htmlFor: content.id }, "Content"), content,
    h("fieldset", {}, h("legend", {}, "Quiet hours (this device's time; a question due before they end still comes)"),
      h("label", { class: "label", htmlFor: start.id }, "From"), start,
      h("label", { class: "label", htmlFor: end.id }, "Until"), end),
    error, h("div", { class: "btn-row" }, save));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const filters = { kinds: kinds.filter((k) => k.box.checked).map((k) => k.box.value), min_priority: prio.value,
      content: content.value };
    const ids = projects.value.split(",").map((s) => s.trim()).filter(Boolean);
    filters.projects = ids.length ? ids : null;
    filters.quiet_hours = start.value && end.value
      ? { start: start.value, end: end.value, time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone } : null;
    error.textContent = "";
    save.disabled = true;
    try { await onSave(filters); } catch (err) { error.textContent = errorText(err); } finally { save.disabled = false; }
  });
  return form;
}

function deviceRow(app, device, redraw) {
  const idBase = `dev-${device.id}`;
  const mine = thisDevice() === device.id;
  const last = device.last_delivered_at ? `last delivered ${ago(device.last_delivered_at)}` : "nothing delivered yet";
  const test = h("button", { type: "button", class: "btn small", onclick: async () => {
    test.disabled = true;
    try {
      const r = await app.api.post(`/push/devices/${encodeURIComponent(device.id)}/test`);
      app.toast(r.result === "delivered" ? `Test push sent to ${device.name}.` : `The push service said: ${r.result}.`);
      redraw();
    } catch (err) { app.toast(errorText(err)); } finally { test.disabled = false; }
  } }, "Send a test");
  const revoke = h("button", { type: "button", class: "btn small danger", onclick: async () => {
    const ok = await app.dialog({ title: `Stop pushing to ${device.name}?`,
      body: h("p", {}, "Its notification buttons stop working at once."),
      actions: [{ label: "Cancel", value: false }, { label: "Revoke", value: true, danger: true }], focus: false });
    if (!ok) return;
    try {
      await app.api.del(`/push/devices/${encodeURIComponent(device.id)}`);
      if (mine) {
        rememberDevice(null);
        const reg = await navigator.serviceWorker.getRegistration();
        const sub = reg && (await reg.pushManager.getSubscription());
        if (sub) await sub.unsubscribe();
      }
      redraw();
    } catch (err) { app.toast(errorText(err)); }
  } }, "Revoke");
  const details = h("details", {}, h("summary", {}, "Filters"), filtersForm(device, idBase, async (filters) => {
    await app.api.patch(`/push/devices/${encodeURIComponent(device.id)}`, { filters });
    app.toast("Filters saved.");
  }));
  return h("li", { class: "row device", dataset: { deviceId: device.id } },
    h("p", { class: "row-title" }, device.name, mine ? " (this device)" : ""),
    h("p", { class: "row-meta" }, `${device.push_service} · added ${ago(device.created_at)} · ${last}` +
      (device.last_result && device.last_result !== "delivered" ? ` · last try ${device.last_result}` : "")),
    details, h("div", { class: "btn-row" }, test, revoke));
}

function notifyLine(state) {
  if (!state.configured) return "Not set. An operator can set notify_url to be poked (no content) when something waits.";
  if (!state.last_result) return "Set; nothing sent since the hub started.";
  return `Set; the last send ${state.last_result === "delivered" ? "was delivered" : "failed"} ${ago(state.last_at)}.`;
}

export function notificationsPanel(app) {
  const body = h("div", { id: "push-body" }, h("p", { class: "muted", role: "status" }, "Loading…"));
  const section = h("section", { class: "panel", "aria-labelledby": "set-push" },
    h("h2", { id: "set-push" }, "Notifications"), body);
  const draw = async () => {
    let key;
    let devices;
    try {
      [key, devices] = await Promise.all([app.api.get("/push/key"), app.api.get("/push/devices")]);
    } catch (err) {
      fill(body, h("p", { class: "error-text", role: "alert" }, errorText(err)));
      return;
    }
    const blocked = pushBlocked();
    const name = h("input", { id: "push-name", class: "field", value: "My phone", maxLength: (app.limits || {}).push_device_name_chars });
    const enable = h("button", { type: "submit", class: "btn primary" }, "Enable push here");
    const error = h("p", { class: "error-text", role: "alert" });
    const form = h("form", { class: "push-enable" },
      h("label", { class: "label", htmlFor: "push-name" }, "Name this device"), name, error,
      h("div", { class: "btn-row" }, enable));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      enable.disabled = true;
      error.textContent = "";
      try {
        const device = await subscribe(app, name.value.trim() || "This browser");
        app.toast(`Push enabled on ${device.name}.`);
        draw();
      } catch (err) { error.textContent = errorText(err); enable.disabled = false; }
    });
    const list = h("ul", { class: "rows devices", "aria-label": "Push devices" },
      devices.devices.map((d) => deviceRow(app, d, draw)));
    fill(body,
      blocked ? h("p", { class: "hint", id: "push-blocked", role: "note" }, blocked) : form,
      devices.devices.length ? list : h("p", { class: "muted" }, "No device receives pushes yet."),
      h("h3", {}, "Notify target"), h("p", { id: "notify-state" }, notifyLine(key.notify_url)));
  };
  draw();
  return section;
}
