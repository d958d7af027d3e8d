// One project: its feed (with ideas posted from the app), its sessions, its settings.
import { h, fill } from "../dom.js";
import { busy, errorBox, errorText, field, loading, retitle } from "./parts/common.js";
import { createFeed } from "./parts/feedlist.js";
import { sessionList } from "./sessions.js";

// [tab, label, own route under the project (a screen of its own) or none (this screen's ?tab=)]
const TABS = [["feed", "Feed"], ["sessions", "Sessions"], ["settings", "Settings"], ["artifacts", "Artifacts", "artifacts"], ["wiki", "Wiki", "wiki"]];

function projectPath(id) {
  return `/projects/${encodeURIComponent(id)}`;
}

// The project's tabs scroll sideways on a narrow phone; the current one is scrolled into view.
export function tabBar(id, current) {
  const nav = h("nav", { class: "subtabs", "aria-label": "Project" },
    TABS.map(([tab, label, own]) => h("a", {
      class: ["subtab", tab === current && "on"],
      href: own ? `#/projects/${encodeURIComponent(id)}/${own}` : `#/projects/${encodeURIComponent(id)}?tab=${tab}`,
      "aria-current": tab === current ? "page" : null,
    }, label)));
  requestAnimationFrame(() => {
    const on = nav.querySelector("[aria-current=page]");
    if (!on || !nav.isConnected || nav.scrollWidth <= nav.clientWidth) return;
    nav.scrollLeft = on.offsetLeft - nav.offsetLeft - (nav.clientWidth - on.offsetWidth) / 2;
  });
  return nav;
}

function ideaForm(app, id, onPosted) {
  const text = h("textarea", { name: "idea", rows: 3, required: true });
  const error = h("p", { class: "error-text", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "btn primary" }, "Post idea");
  const form = h("form", {
    class: "form idea", "aria-label": "Post an idea",
    onsubmit: (e) => {
      e.preventDefault();
      busy(submit, async () => {
        error.hidden = true;
        if (!text.value.trim()) { error.textContent = "Write the idea first"; error.hidden = false; return; }
        try {
          await app.api.post(`${projectPath(id)}/ideas`, { body: text.value });
          text.value = "";
          app.toast("Idea posted");
          await onPosted();
        } catch (err) {
          error.textContent = errorText(err);
          error.hidden = false;
        }
      });
    },
  }, field("Idea for the agents", text, "The first line is its summary"), error, h("div", { class: "btn-row" }, submit));
  return h("details", { class: "panel idea-box" }, h("summary", {}, "Post an idea"), form);
}

// The fields a save sends: only what differs from what the hub holds.
function changed(project, name, policy, confidential) {
  const changes = {};
  if (name.value.trim() !== project.display_name) changes.display_name = name.value.trim();
  if (policy.value !== project.artifact_password_policy) changes.artifact_password_policy = policy.value;
  if (confidential.checked !== project.confidential) changes.confidential = confidential.checked;
  return changes;
}

// Settings: rename, password policy, confidential. `current()` is what the hub holds now (each
// save is compared against the last one), `onSaved(project)` takes what a save stored.
function settingsForm(app, current, onSaved) {
  const project = current();
  const name = h("input", { type: "text", value: project.display_name, required: true });
  const policy = h("select", {},
    ["off", "optional", "required"].map((v) => h("option", { value: v, selected: project.artifact_password_policy === v }, v)));
  const confidential = h("input", { type: "checkbox", checked: project.confidential });
  const error = h("p", { class: "error-text", role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "btn primary" }, "Save");
  const submit = (e) => {
    e.preventDefault();
    busy(save, async () => {
      error.hidden = true;
      const changes = changed(current(), name, policy, confidential);
      if (!Object.keys(changes).length) { app.toast("Nothing changed"); return; }
      try {
        onSaved(await app.api.patch(projectPath(current().id), changes));
        app.toast("Saved");
      } catch (err) {
        error.textContent = errorText(err);
        error.hidden = false;
      }
    });
  };
  return h("form", { class: "panel form", "aria-label": "Project settings", onsubmit: submit },
    h("h2", {}, "Settings"),
    field("Display name", name),
    field("Artifact password", policy, "off: never; optional: the agent chooses; required: every artifact is protected"),
    h("label", { class: "choice" }, confidential, " Confidential (only agents with a grant see it)"),
    error, h("div", { class: "btn-row" }, save));
}

// Delete behind the project id typed to confirm.
function deleteSection(app, current) {
  const del = h("button", { type: "button", class: "btn danger" }, "Delete project");
  del.addEventListener("click", () => busy(del, async () => {
    const project = current();
    const ok = await app.confirmTyped({
      title: `Delete ${project.display_name}?`,
      text: "Its feed, sessions, brains, artifacts and knowledge base are removed for good.",
      word: project.id,
    });
    if (!ok) return;
    try {
      await app.api.del(projectPath(project.id));
      app.toast(`Deleted ${project.display_name}`);
      app.navigate("#/projects");
    } catch (err) {
      app.toast(errorText(err), { kind: "error" });
    }
  }));
  return h("section", { class: "panel danger-zone", "aria-label": "Delete" },
    h("h2", {}, "Delete"), h("p", {}, "Deleting needs the project id typed to confirm."), del);
}

// The settings tab; a personal space cannot be deleted, so it is not offered.
function settingsPanel(app, initial, onChange) {
  let project = initial;
  const current = () => project;
  const form = settingsForm(app, current, (saved) => { project = saved; onChange(saved); });
  return h("div", {}, form, project.is_personal
    ? h("p", { class: "muted" }, "A personal space cannot be deleted.")
    : deleteSection(app, current));
}

export default {
  title: (params) => params.id,
  async render(root, params, app) {
    const tab = TABS.some(([t, , own]) => t === params.tab && !own) ? params.tab : "feed";
    const sub = h("p", { class: "muted small" });
    const body = h("div", {}, loading());
    root.append(sub, tabBar(params.id, tab), body);
    let project;
    try {
      project = await app.api.get(projectPath(params.id));
    } catch (err) {
      fill(body, errorBox(err));
      return {};
    }
    const describe = (p) => {
      retitle(root, p.display_name);
      sub.textContent = [p.id, p.is_personal ? "personal space" : null, p.confidential ? "confidential" : null,
        p.owner_agent ? `owner ${p.owner_agent}` : null].filter(Boolean).join(" · ");
    };
    describe(project);

    if (tab === "settings") {
      fill(body, settingsPanel(app, project, describe));
      return {};
    }
    if (tab === "sessions") {
      const sessions = sessionList(app, params.id);
      fill(body, sessions.node);
      await sessions.load();
      return sessions;
    }
    const feed = createFeed(app, { path: `${projectPath(params.id)}/feed`, project: params.id, focus: params.event || null });
    fill(body, ideaForm(app, params.id, () => feed.newer()), feed.node);
    await feed.load();
    return feed;
  },
};
