// A project's sessions, active first then ended: the project screen's Sessions tab. As a screen of
// its own (params.id: the project) it draws the same list under its own heading.
import { h, fill } from "../dom.js";
import { ago, bytes } from "../format.js";
import { errorBox, loading, rowKeys } from "./parts/common.js";

function sessionRow(s) {
  const lineage = s.lineage ? ` · ${s.lineage.kind} from ${s.lineage.from_owner ?? "another session"}` : "";
  return h("li", {},
    h("a", { class: "row-link", href: `#/sessions/${encodeURIComponent(s.session_id)}`, "data-row": "" },
      h("span", { class: "row-main" },
        h("span", { class: "name" }, s.name),
        h("span", { class: "muted small" },
          `${s.owner} · ${s.status === "active" ? "active" : "ended"} · last activity ${ago(s.last_activity_at)}`,
          ` · brain ${s.brain_bytes === null ? "unknown" : bytes(s.brain_bytes)}`, lineage),
        s.handoff ? h("span", { class: "handoff small" }, "Handoff: ", s.handoff, s.handoff_truncated ? "…" : "") : null),
      h("span", { class: ["status", `status-${s.status}`] }, s.status)));
}

function group(title, sessions, empty) {
  return h("section", { class: "group" }, h("h2", {}, `${title} (${sessions.length})`),
    sessions.length ? h("ul", { class: "rows list" }, sessions.map(sessionRow)) : h("p", { class: "empty" }, empty));
}

export function sessionList(app, projectId) {
  const node = h("div", { class: "sessions" }, loading("Loading sessions"));
  let timer = null;
  const load = async () => {
    try {
      const { sessions, truncated } = await app.api.get("/sessions", { project: projectId });
      const active = sessions.filter((s) => s.status === "active");
      const ended = sessions.filter((s) => s.status !== "active");
      fill(node,
        group("Active", active, "No session is running."),
        group("Ended", ended, "No ended session."),
        truncated ? h("p", { class: "muted small" }, "More sessions exist than one listing shows",
          app.limits ? ` (at most ${app.limits.sessions_listing})` : "", ".") : null);
    } catch (err) {
      fill(node, errorBox(err));
    }
  };
  return {
    node,
    load,
    keys: rowKeys(node),
    onLive(change) {
      // A session starting, ending or changing hands appends a session event to the feed.
      if (change.type === "refresh" || (change.type === "feed" && change.data?.project_id === projectId)) {
        clearTimeout(timer);
        timer = setTimeout(load, 300);
      }
    },
    dispose() { clearTimeout(timer); },
  };
}

export default {
  title: () => "Sessions",
  async render(root, params, app) {
    const list = sessionList(app, params.id);
    root.append(list.node);
    await list.load();
    return list;
  },
};
