// Connect: the admin token, checked against the hub before it is stored in local storage.
import { h } from "../dom.js";
import { ApiError } from "../api.js";
import { match } from "../routes.js";

// Where to go once connected: the interrupted screen (never Connect itself), else Home.
function destination(next) {
  if (typeof next !== "string" || !next.startsWith("#/")) return "#/";
  const found = match(next);
  return found && !found.route.open ? next : "#/";
}

export default {
  title: () => "Connect to your hub",
  async render(root, params, app) {
    const token = h("input", { type: "password", id: "token", name: "password", class: "field",
      autocomplete: "current-password", required: true, spellcheck: "false", autocapitalize: "off",
      "aria-describedby": "token-hint token-error" });
    const show = h("button", { type: "button", class: "btn", "aria-pressed": "false", "aria-controls": "token" }, "Show");
    show.addEventListener("click", () => {
      const visible = token.type === "password";
      token.type = visible ? "text" : "password";
      show.setAttribute("aria-pressed", String(visible));
      show.textContent = visible ? "Hide" : "Show";
      token.focus();
    });
    const error = h("p", { id: "token-error", class: "error-text", role: "alert" });
    const submit = h("button", { type: "submit", class: "btn primary" }, "Connect");
    const form = h("form", { class: "connect-form", novalidate: true },
      // A username field for password managers: they file the token under "Agent Hub admin".
      h("input", { type: "text", name: "username", autocomplete: "username", value: "admin",
        class: "visually-hidden", tabIndex: -1, "aria-hidden": "true", readOnly: true }),
      h("label", { class: "label", htmlFor: "token" }, "Admin token"),
      h("div", { class: "field-row" }, token, show),
      h("p", { id: "token-hint", class: "hint" },
        "The admin token the hub printed on its first start (or ", h("code", {}, "admin_token"),
        " in its config). It is kept in this browser only once the hub accepts it."),
      error,
      h("div", { class: "btn-row" }, submit));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const value = token.value.trim();
      error.textContent = "";
      if (!value) {
        error.textContent = "Enter the admin token.";
        token.setAttribute("aria-invalid", "true");
        token.focus();
        return;
      }
      submit.disabled = true;
      submit.textContent = "Checking…";
      try {
        await app.connect(value);
        token.value = "";
        app.toast("Connected.");
        app.navigate(destination(params.next));
      } catch (err) {
        token.setAttribute("aria-invalid", "true");
        if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
          error.textContent = "The hub did not accept this token. Check it and try again.";
        } else if (err instanceof ApiError && err.status === 0) {
          error.textContent = "The hub cannot be reached. Check the address and your network.";
        } else {
          error.textContent = err instanceof ApiError ? err.message : "Connecting failed.";
        }
        token.focus();
        token.select();
      } finally {
        submit.disabled = false;
        submit.textContent = "Connect";
      }
    });
    root.append(form);
    return {};
  },
};
