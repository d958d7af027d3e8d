// First run (issue 25 part 6): a hub no agent has called yet shows how to connect the first one:
// the exact MCP configuration for Claude Code, Codex, VS Code and Cursor with this hub's address,
// where the token comes from, and `hub-cli enrol` for an agent that asks to join. Home draws it
// while its payload says `first_run` (no agent has called the hub yet).
import { h } from "../../dom.js";

const TOKEN = "<AGENT_TOKEN>";

// [client, where it goes, the text] for the hub at `origin`.
export function clientConfigs(origin) {
  const mcp = `${origin}/mcp`;
  return [
    ["Claude Code", "Run in a terminal:",
      `claude mcp add --transport http agent-hub ${mcp} --header "Authorization: Bearer ${TOKEN}"`],
    ["Codex", "In ~/.codex/config.toml, with the token in the environment (export AGENT_HUB_TOKEN=…):",
      `[mcp_servers.agent-hub]\nurl = "${mcp}"\nbearer_token_env_var = "AGENT_HUB_TOKEN"`],
    ["VS Code", "In .vscode/mcp.json (VS Code asks for the token once):",
      JSON.stringify({ servers: { "agent-hub": { type: "http", url: mcp,
        headers: { Authorization: "Bearer ${input:agent-hub-token}" } } },
      inputs: [{ type: "promptString", id: "agent-hub-token", description: "Agent Hub token", password: true }] }, null, 2)],
    ["Cursor", "In ~/.cursor/mcp.json:",
      JSON.stringify({ mcpServers: { "agent-hub": { url: mcp, headers: { Authorization: `Bearer ${TOKEN}` } } } }, null, 2)],
  ];
}

export function enrolCommand(origin) {
  return `hub-cli enrol --url ${origin} "why, in one line"`;
}

function snippet(app, id, text) {
  const copy = h("button", { type: "button", class: "btn small", "aria-describedby": id }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      app.toast("Copied.");
    } catch {
      app.toast("Copying is blocked here: select the text instead.", { kind: "error" });
    }
  });
  return h("div", { class: "snippet" }, h("pre", { class: "code", id, tabIndex: 0 }, h("code", {}, text)), copy);
}

export function firstRunPanel(app, origin = location.origin) {
  return h("section", { class: "panel first-run", "aria-labelledby": "first-run" },
    h("h2", { id: "first-run" }, "Connect your first agent"),
    h("p", {}, "No agent has called this hub yet. An agent speaks MCP to ", h("code", {}, `${origin}/mcp`),
      " with its own token."),
    h("h3", {}, "1. Make a token"),
    h("p", {}, "In ", h("a", { href: "#/access" }, "Access"),
      ", add an agent, then issue its token. The token is shown once: put it where the configuration below says ",
      h("code", {}, TOKEN), "."),
    h("h3", {}, "2. Give it to the agent's MCP client"),
    clientConfigs(origin).map(([client, where, text], i) => h("div", { class: "client", dataset: { client } },
      h("h4", {}, client), h("p", { class: "hint" }, where), snippet(app, `first-run-${i}`, text))),
    h("h3", {}, "Or let the agent ask to join"),
    h("p", {}, "An agent without a token runs this; its request waits in your Inbox for you to admit or refuse:"),
    snippet(app, "first-run-enrol", enrolCommand(origin)),
    h("p", { class: "hint" }, "This guide goes away once an agent has called the hub."));
}
