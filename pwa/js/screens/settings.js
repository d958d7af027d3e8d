// Settings: theme, density, single-key shortcuts, the undo window for answers, notifications, the
// server's version and build commit, sign out.
import { h } from "../dom.js";
import { notificationsPanel } from "./parts/notifications.js";

function radios(name, legend, options, value, onChange) {
  return h("fieldset", {}, h("legend", {}, legend),
    options.map(([v, label]) => {
      const input = h("input", { type: "radio", name, value: v, checked: v === value, id: `${name}-${v}` });
      input.addEventListener("change", () => { if (input.checked) onChange(v); });
      return h("label", { class: "choice", htmlFor: `${name}-${v}` }, input, label);
    }));
}

export default {
  title: () => "Settings",
  async render(root, params, app) {
    const s = app.settings;
    const shortcuts = h("input", { type: "checkbox", id: "set-shortcuts", checked: !!s.shortcuts });
    shortcuts.addEventListener("change", () => app.saveSettings({ shortcuts: shortcuts.checked }));
    const version = h("dd", { id: "server-version" }, "…");
    const commit = h("dd", { id: "server-commit" }, "…");
    const signOut = h("button", { type: "button", class: "btn danger" }, "Sign out");
    signOut.addEventListener("click", async () => {
      const ok = await app.dialog({ title: "Sign out of this browser?",
        body: h("p", {}, "The admin token is removed from this browser. You will need it to connect again."),
        actions: [{ label: "Cancel", value: false }, { label: "Sign out", value: true, danger: true }], focus: false });
      if (ok) app.signOut();
    });
    root.append(
      h("section", { class: "panel", "aria-labelledby": "set-look" }, h("h2", { id: "set-look" }, "Appearance"),
        radios("theme", "Theme", [["system", "Same as the system"], ["light", "Light"], ["dark", "Dark"]], s.theme,
          (theme) => app.saveSettings({ theme })),
        radios("density", "Density", [["comfortable", "Comfortable"], ["compact", "Compact"]], s.density,
          (density) => app.saveSettings({ density }))),
      h("section", { class: "panel", "aria-labelledby": "set-keys" }, h("h2", { id: "set-keys" }, "Keyboard"),
        h("label", { class: "choice", htmlFor: "set-shortcuts" }, shortcuts, "Single-key shortcuts (j, k, Enter, a, r)"),
        h("p", { class: "hint" }, "Press ? for the list of keys. Shortcuts never fire while you type in a field."),
        h("button", { type: "button", class: "btn", onclick: () => app.showKeys() }, "Show the keys")),
      h("section", { class: "panel", "aria-labelledby": "set-undo" }, h("h2", { id: "set-undo" }, "Answers and decisions"),
        radios("undo", "Hold before sending, with Undo", [["5", "5 seconds"], ["10", "10 seconds"], ["0", "Off: send at once"]],
          String(Number.isFinite(s.undoSeconds) ? s.undoSeconds : 5), (v) => app.saveSettings({ undoSeconds: Number(v) })),
        h("p", { class: "hint" }, "Leaving the screen or closing the app sends a held answer at once.")),
      notificationsPanel(app),
      h("section", { class: "panel", "aria-labelledby": "set-server" }, h("h2", { id: "set-server" }, "Server"),
        h("dl", { class: "facts" }, h("dt", {}, "Address"), h("dd", {}, location.origin),
          h("dt", {}, "Version"), version, h("dt", {}, "Build commit"), commit)),
      h("section", { class: "panel", "aria-labelledby": "set-session" }, h("h2", { id: "set-session" }, "This browser"),
        h("p", {}, "Signed in with the admin token, kept in this browser's local storage."), signOut));
    const build = app.build || (await app.loadBuild());
    version.textContent = build ? build.version : "unknown";
    commit.textContent = build ? build.commit : "unknown";
    return {};
  },
};
