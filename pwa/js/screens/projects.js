// Projects: the ordinary projects with unseen and waiting badges, personal spaces folded away,
// and a form to create one.
import { h, fill } from "../dom.js";
import { ago } from "../format.js";
import { badge, busy, errorBox, errorText, field, idRule, loading, rowKeys } from "./parts/common.js";


function projectRow(p, waiting) {
  return h("li", {},
    h("a", { class: "row-link", href: `#/projects/${encodeURIComponent(p.id)}`, "data-row": "" },
      h("span", { class: "row-main" },
        h("span", { class: "name" }, p.display_name),
        h("span", { class: "muted small" }, p.id, p.confidential ? " · confidential" : "",
          " · created ", ago(p.created_at))),
      h("span", { class: "badges" },
        badge(waiting.get(p.id) || 0, "waiting", "waiting"),
        badge(p.unseen_events, "unseen", "unseen"))));
}

// Waiting items per project (from the inbox's waiting list; the hub has no per-project count).
async function waitingCounts(app) {
  const { items } = await app.api.get("/inbox", { status: "waiting", limit: 500 });
  const counts = new Map();
  for (const item of items) counts.set(item.project_id, (counts.get(item.project_id) || 0) + 1);
  return counts;
}

function createForm(app) {
  const id = h("input", { type: "text", name: "id", required: true, autocomplete: "off",
    ...idRule(app.limits && app.limits.project_id), spellcheck: "false", autocapitalize: "none" });
  const name = h("input", { type: "text", name: "display_name", autocomplete: "off" });
  const confidential = h("input", { type: "checkbox", name: "confidential" });
  const error = h("p", { class: "error-text", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "btn primary" }, "Create project");
  const form = h("form", {
    class: "panel form", "aria-label": "New project",
    onsubmit: (e) => {
      e.preventDefault();
      busy(submit, async () => {
        error.hidden = true;
        const body = { id: id.value.trim(), confidential: confidential.checked };
        if (name.value.trim()) body.display_name = name.value.trim();
        try {
          const created = await app.api.post("/projects", body);
          app.toast(`Created ${created.display_name}`);
          app.navigate(`#/projects/${encodeURIComponent(created.id)}`);
        } catch (err) {
          error.textContent = errorText(err);
          error.hidden = false;
        }
      });
    },
  },
  h("h2", {}, "New project"),
  field("Id", id, "Lower-case letters, digits and dashes; fixed once created"),
  field("Display name", name),
  h("label", { class: "choice" }, confidential, " Confidential (only agents with a grant see it)"),
  error, h("div", { class: "btn-row" }, submit));
  return form;
}

export default {
  title: () => "Projects",
  async render(root, params, app) {
    const listNode = h("div", {}, loading("Loading projects"));
    root.append(h("p", { class: "screen-links" }, h("a", { href: "#/feed" }, "All projects' feed")),
      listNode, createForm(app));
    const ordinaryNode = h("div", {});
    // The personal spaces' fold is built once and kept across live redraws: a redraw that
    // replaced it lost its open state, and a click on its summary that straddled the redraw
    // (pressed on the old one, released on the new) opened nothing.
    const summary = h("summary", {});
    const spacesList = h("ul", { class: "rows list", "aria-label": "Personal spaces" });
    const spacesNode = h("details", { class: "spaces" }, summary, spacesList);
    const draw = async () => {
      try {
        const [{ projects }, waiting] = await Promise.all([app.api.get("/projects"), waitingCounts(app)]);
        const ordinary = projects.filter((p) => !p.is_personal);
        const spaces = projects.filter((p) => p.is_personal);
        const focused = listNode.contains(document.activeElement) ? document.activeElement.getAttribute("href") : null;
        fill(ordinaryNode,
          ordinary.length
            ? h("ul", { class: "rows list", "aria-label": "Projects" }, ordinary.map((p) => projectRow(p, waiting)))
            : h("p", { class: "empty" }, "No projects yet. Create one below, or let an agent create it."));
        summary.textContent = `Personal spaces (${spaces.length})`;
        fill(spacesList, ...spaces.map((p) => projectRow(p, waiting)));
        spacesNode.hidden = !spaces.length;
        if (ordinaryNode.parentNode !== listNode) fill(listNode, ordinaryNode, spacesNode); // first draw, or after an error
        if (focused) listNode.querySelector(`a[href="${CSS.escape(focused)}"]`)?.focus();
      } catch (err) {
        fill(listNode, errorBox(err));
      }
    };
    await draw();
    let timer = null;
    return {
      keys: rowKeys(listNode),
      onLive(change) {
        if (!["feed", "inbox", "refresh"].includes(change.type)) return;
        clearTimeout(timer);
        timer = setTimeout(draw, 300); // a burst of events redraws once
      },
      dispose() { clearTimeout(timer); },
    };
  },
};
