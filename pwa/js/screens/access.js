// Access: the agents (status, personal space, last seen), creating one, issuing or revoking its
// token (the token is shown once, with a copy button), and grants on confidential projects.
import { h, fill } from "../dom.js";
import { ago } from "../format.js";
import { busy, errorBox, errorText, field, idRule, loading, rowKeys } from "./parts/common.js";


function agentPath(id) {
  return `/agents/${encodeURIComponent(id)}`;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false; // no clipboard (insecure origin, permission): the field is selected instead
  }
}

// The one time a token is visible: a read-only field, a copy button, and a warning.
async function showToken(app, agent, token) {
  const input = h("input", { type: "text", readOnly: true, value: token, class: "field token-field", autocomplete: "off",
    spellcheck: "false", "aria-label": `Token for ${agent.id}` });
  const said = h("p", { class: "muted small", role: "status" });
  const copyBtn = h("button", { type: "button", class: "btn primary", onclick: async () => {
    input.select();
    said.textContent = (await copy(token)) ? "Copied to the clipboard." : "Selected: copy it with your keyboard.";
  } }, "Copy token");
  await app.dialog({
    title: `Token for ${agent.display_name}`,
    body: h("div", {},
      h("p", {}, "This is the only time the token is shown. Give it to the agent now; the hub keeps only its hash."),
      input, h("p", {}, copyBtn), said),
    actions: [{ label: "Done", value: "done", primary: true }],
    focus: "done",
  });
}

async function issue(app, agent, refresh) {
  if (agent.has_token) {
    const choice = await app.dialog({
      title: `Issue a new token for ${agent.display_name}?`,
      body: h("p", {}, "The agent's current token stops working at once."),
      actions: [{ label: "Cancel", value: null }, { label: "Issue new token", value: "go", danger: true }],
      focus: null,
    });
    if (choice !== "go") return;
  }
  let result;
  try {
    result = await app.api.post(`${agentPath(agent.id)}/token`);
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
    return;
  }
  await refresh();
  await showToken(app, agent, result.token);
  // The row was drawn again behind the dialog: give focus back to it, not to the page's top.
  document.querySelector(`[data-agent="${CSS.escape(agent.id)}"] [data-row]`)?.focus();
}

async function revoke(app, agent, refresh) {
  const choice = await app.dialog({
    title: `Revoke ${agent.display_name}'s token?`,
    body: h("p", {}, "The agent can no longer reach the hub until you issue a new token."),
    actions: [{ label: "Cancel", value: null }, { label: "Revoke", value: "go", danger: true }],
    focus: null,
  });
  if (choice !== "go") return;
  try {
    await app.api.del(`${agentPath(agent.id)}/token`);
    app.toast(`Revoked ${agent.id}'s token`);
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
  }
  await refresh();
}

function grantRow(app, agent, grant, label, reload) {
  const btn = h("button", { type: "button", class: "btn small", "aria-label": `Remove grant on ${label}` }, "Remove");
  btn.addEventListener("click", () => busy(btn, async () => {
    try {
      await app.api.del(`${agentPath(agent.id)}/grants/${encodeURIComponent(grant.project_id)}`);
      app.toast(`Removed ${agent.id}'s grant on ${grant.project_id}`);
    } catch (err) {
      app.toast(errorText(err), { kind: "error" });
    }
    await reload();
  }));
  return h("li", { class: "row" }, h("span", {}, label), h("span", { class: "muted small" }, ` ${grant.project_id} `), btn);
}

// A form granting one of the confidential projects the agent cannot see yet.
function grantAdder(app, agent, open, reload) {
  const select = h("select", {}, open.map((p) => h("option", { value: p.id }, `${p.display_name} (${p.id})`)));
  const add = h("button", { type: "submit", class: "btn" }, "Grant");
  return h("form", { class: "inline-form", onsubmit: (e) => {
    e.preventDefault();
    busy(add, async () => {
      try {
        await app.api.post(`${agentPath(agent.id)}/grants`, { project_id: select.value });
        app.toast(`Granted ${agent.id} access to ${select.value}`);
      } catch (err) {
        app.toast(errorText(err), { kind: "error" });
      }
      await reload();
    });
  } }, field("Confidential project", select), add);
}

// Grants: the confidential projects this agent may see, with add and remove.
async function grantsPanel(app, agent, panel, confidential) {
  fill(panel, loading("Loading grants"));
  let grants;
  try {
    ({ grants } = await app.api.get(`${agentPath(agent.id)}/grants`));
  } catch (err) {
    fill(panel, errorBox(err));
    return;
  }
  const reload = () => grantsPanel(app, agent, panel, confidential);
  const held = new Set(grants.map((g) => g.project_id));
  const label = (id) => confidential.find((p) => p.id === id)?.display_name ?? id;
  const open = confidential.filter((p) => !held.has(p.id));
  fill(panel,
    grants.length ? h("ul", { class: "rows" }, grants.map((g) => grantRow(app, agent, g, label(g.project_id), reload)))
      : h("p", { class: "muted" }, "No grants: it sees ordinary projects and its own space."),
    open.length ? grantAdder(app, agent, open, reload)
      : h("p", { class: "muted small" }, confidential.length ? "It holds a grant on every confidential project." : "No project is confidential."));
}

// A pending agent asked to enrol: the human admits it (its own token starts working) or refuses.
async function decideEnrolment(app, agent, verb, refresh) {
  if (verb === "admit") {
    const name = agent.display_name && agent.display_name !== agent.id ? `${agent.display_name} (${agent.id})` : agent.id;
    const ok = await app.dialog({
      title: `Admit ${name}?`,
      body: h("div", { class: "admit" },
        h("p", {}, `${name} asked to join this hub. Admitting it makes its token work on every ordinary project.`),
        agent.enrol_note ? h("p", {}, "Its reason: ", h("q", { class: "admit-why" }, agent.enrol_note))
          : h("p", {}, "It gave no reason.")),
      actions: [{ label: "Cancel", value: false }, { label: "Admit", value: true, primary: true }],
      focus: false,
    });
    if (ok !== true) return;
  }
  if (verb === "refuse") {
    const choice = await app.dialog({
      title: `Refuse ${agent.display_name}?`,
      body: h("p", {}, "The request is declined and its token never works."),
      actions: [{ label: "Cancel", value: null }, { label: "Refuse", value: "go", danger: true }],
      focus: null,
    });
    if (choice !== "go") return;
  }
  try {
    await app.api.post(`/enrol/${encodeURIComponent(agent.id)}/${verb === "admit" ? "approve" : "refuse"}`);
    app.toast(verb === "admit" ? `Admitted ${agent.id}` : `Refused ${agent.id}`);
  } catch (err) {
    app.toast(errorText(err), { kind: "error" });
  }
  await refresh();
}

function enrolButtons(app, agent, refresh) {
  const admit = h("button", { type: "button", class: "btn small primary", "data-row": "" }, "Admit");
  admit.addEventListener("click", () => busy(admit, () => decideEnrolment(app, agent, "admit", refresh)));
  const refuse = h("button", { type: "button", class: "btn small danger" }, "Refuse");
  refuse.addEventListener("click", () => busy(refuse, () => decideEnrolment(app, agent, "refuse", refresh)));
  return [admit, refuse];
}

// A pending agent whose token is gone was refused: the hub keeps it as a record for a while.
function statusText(agent) {
  return agent.status === "pending" && !agent.has_token ? "refused" : agent.status;
}

function agentRow(app, agent, confidential, refresh) {
  const panel = h("div", { class: "grants-panel", hidden: true });
  const grantsBtn = h("button", { type: "button", class: "btn small", "aria-expanded": "false" }, "Grants");
  grantsBtn.addEventListener("click", () => {
    const open = grantsBtn.getAttribute("aria-expanded") !== "true";
    grantsBtn.setAttribute("aria-expanded", open ? "true" : "false");
    panel.hidden = !open;
    if (open) grantsPanel(app, agent, panel, confidential);
  });
  const issueBtn = h("button", { type: "button", class: "btn small primary", "data-row": "" },
    agent.has_token ? "New token" : "Issue token");
  issueBtn.addEventListener("click", () => busy(issueBtn, () => issue(app, agent, refresh)));
  const revokeBtn = agent.has_token ? h("button", { type: "button", class: "btn small danger" }, "Revoke token") : null;
  if (revokeBtn) revokeBtn.addEventListener("click", () => busy(revokeBtn, () => revoke(app, agent, refresh)));
  return h("li", { class: "agent-row", dataset: { agent: agent.id } },
    h("div", { class: "row-main" },
      h("span", { class: "row-head" }, h("span", { class: "name" }, agent.display_name),
        h("span", { class: ["status", `status-${agent.status}`] }, statusText(agent))),
      h("span", { class: "muted small" }, ` ${agent.id} · `,
        h("a", { href: `#/projects/${encodeURIComponent(agent.personal_project_id)}` }, "personal space"),
        ` · last seen ${agent.last_seen_at ? ago(agent.last_seen_at) : "never"}`,
        ` · ${agent.has_token ? "has a token" : "no token"}`),
      agent.enrol_note ? h("span", { class: "small" }, "Asked to enrol: ", agent.enrol_note) : null),
    h("div", { class: "btn-row row-actions" },
      agent.status !== "pending" ? [issueBtn, revokeBtn]
        : agent.has_token ? enrolButtons(app, agent, refresh) : null,
      agent.status === "pending" ? null : grantsBtn), panel);
}

function createForm(app, refresh) {
  const id = h("input", { type: "text", required: true, autocomplete: "off",
    ...idRule(app.limits && app.limits.agent_id), spellcheck: "false", autocapitalize: "none" });
  const name = h("input", { type: "text", autocomplete: "off" });
  const error = h("p", { class: "error-text", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "btn primary" }, "Create agent");
  return h("form", { class: "panel form", "aria-label": "New agent", onsubmit: (e) => {
    e.preventDefault();
    busy(submit, async () => {
      error.hidden = true;
      const body = { id: id.value.trim() };
      if (name.value.trim()) body.display_name = name.value.trim();
      try {
        const agent = await app.api.post("/agents", body);
        id.value = "";
        name.value = "";
        app.toast(`Created ${agent.id}`);
        await refresh();
        document.querySelector(`[data-agent="${CSS.escape(agent.id)}"] [data-row]`)?.focus();
      } catch (err) {
        error.textContent = errorText(err);
        error.hidden = false;
      }
    });
  } },
  h("h2", {}, "New agent"),
  field("Id", id, "Lower-case letters, digits and dashes"),
  field("Display name", name),
  error, h("div", { class: "btn-row" }, submit));
}

export default {
  title: () => "Access",
  async render(root, params, app) {
    const listNode = h("div", {}, loading("Loading agents"));
    const refresh = async () => {
      try {
        const [{ agents }, { projects }] = await Promise.all([app.api.get("/agents"), app.api.get("/projects")]);
        const confidential = projects.filter((p) => p.confidential);
        fill(listNode, agents.length
          ? h("ul", { class: "rows agents", "aria-label": "Agents" }, agents.map((a) => agentRow(app, a, confidential, refresh)))
          : h("p", { class: "empty" }, "No agents yet. Create one, then issue its token."));
      } catch (err) {
        fill(listNode, errorBox(err));
      }
    };
    root.append(listNode, createForm(app, refresh));
    await refresh();
    return { keys: rowKeys(listNode) };
  },
};
