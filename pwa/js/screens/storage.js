// Storage: the data directory against the volume's capacity, a bar by kind, a row per project,
// and pruning of ended sessions (one, a project's, or all), each with its undo.
import { h, fill } from "../dom.js";
import { ago, bytes, count } from "../format.js";
import { busy, errorBox, loading, rowKeys } from "./parts/common.js";
import { pruneWithUndo } from "./parts/prune.js";

const KIND_LABELS = [["events", "Feeds"], ["sessions", "Session brains"], ["artifacts", "Artifacts"], ["knowledge", "Knowledge bases"]];

// Widths go through the CSSOM: the app's CSP (style-src 'self') refuses style attributes.
function sized(node, pct) {
  node.style.width = `${pct.toFixed(2)}%`;
  return node;
}

function percent(part, whole) {
  if (part === null || part === undefined || !whole) return 0;
  return Math.max(0, Math.min(100, (part / whole) * 100));
}

function usage(report) {
  const used = report.used_bytes, cap = report.capacity_bytes;
  const pct = percent(used, cap);
  return h("section", { class: "panel", "aria-labelledby": "usage-title" },
    h("h2", { id: "usage-title" }, "Used"),
    h("p", { class: "big" }, `${bytes(used)} of ${bytes(cap)}`,
      h("span", { class: "muted small" }, ` · ${bytes(report.free_bytes)} free on the volume`)),
    h("div", { class: "meter", role: "img", "aria-label": `${bytes(used)} used of ${bytes(cap)}` },
      sized(h("span", { class: "meter-fill" }), pct)),
    h("p", { class: "muted small" }, `Data directory ${report.data_path} on ${report.node.host}`));
}

function byKind(report) {
  const total = KIND_LABELS.reduce((sum, [k]) => sum + (report.by_kind[k] || 0), 0);
  const segs = KIND_LABELS.map(([k, label]) => sized(h("span", { class: ["seg", `seg-${k}`], title: label }),
    percent(report.by_kind[k], total)));
  return h("section", { class: "panel", "aria-labelledby": "kinds-title" },
    h("h2", { id: "kinds-title" }, "By kind"),
    h("div", { class: "stack-bar", "aria-hidden": "true" }, segs),
    h("ul", { class: "legend" }, KIND_LABELS.map(([k, label]) => h("li", {},
      h("span", { class: ["swatch", `seg-${k}`], "aria-hidden": "true" }),
      `${label}: ${bytes(report.by_kind[k])}`))));
}

// The ended sessions of one project that hold storage, each with its own Prune button.
async function sessionsPanel(app, projectId, panel, refresh) {
  fill(panel, loading("Loading ended sessions"));
  try {
    const { sessions } = await app.api.get("/sessions", { project: projectId });
    const ended = sessions.filter((s) => s.status === "ended");
    fill(panel, ended.length ? h("ul", { class: "rows" }, ended.map((s) => {
      const btn = h("button", { type: "button", class: "btn small danger" }, "Prune");
      btn.addEventListener("click", () => busy(btn, () => pruneWithUndo(app,
        `/storage/sessions/${encodeURIComponent(s.session_id)}`, refresh)));
      return h("li", { class: "row" },
        h("a", { href: `#/sessions/${encodeURIComponent(s.session_id)}`, "data-row": "" }, s.name),
        h("span", { class: "muted small" }, ` ${s.owner} · ${bytes(s.brain_bytes)} · ended ${ago(s.ended_at)} `), btn);
    })) : h("p", { class: "empty" }, "No ended session."));
  } catch (err) {
    fill(panel, errorBox(err));
  }
}

function projectRow(app, row, refresh) {
  const panel = h("div", { class: "sessions-panel", hidden: true });
  const toggle = h("button", { type: "button", class: "btn small", "aria-expanded": "false" }, "Ended sessions");
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    panel.hidden = !open;
    if (open) sessionsPanel(app, row.project_id, panel, refresh);
  });
  const prune = h("button", { type: "button", class: "btn small danger", hidden: !row.prunable.sessions },
    `Prune ${row.prunable.sessions || 0} ended`);
  prune.addEventListener("click", () => busy(prune, () => pruneWithUndo(app,
    `/storage/projects/${encodeURIComponent(row.project_id)}/sessions`, refresh)));
  const sizes = [["feed", row.events_bytes], ["sessions", row.session_bytes], ["artifacts", row.artifact_bytes],
    ["knowledge", row.kb_bytes]].map(([label, n]) => `${label} ${bytes(n)}`).join(" · ");
  return h("li", { class: "storage-row", dataset: { project: row.project_id } },
    h("p", { class: "row-main" },
      h("a", { class: "name", href: `#/projects/${encodeURIComponent(row.project_id)}`, "data-row": "" }, row.project_display_name),
      h("span", { class: "muted small" }, sizes, row.prunable.sessions
        ? ` · prunable: ${count(row.prunable.sessions, "session")}, ${bytes(row.prunable.bytes)}` : "",
      row.last_write ? ` · last write ${ago(row.last_write)}` : "")),
    h("div", { class: "btn-row row-actions" }, toggle, prune), panel);
}

export default {
  title: () => "Storage",
  async render(root, params, app) {
    const body = h("div", {}, loading("Loading the storage report"));
    root.append(body);
    const draw = async () => {
      let report;
      try {
        report = await app.api.get("/storage");
      } catch (err) {
        fill(body, errorBox(err));
        return;
      }
      const all = h("button", { type: "button", class: "btn danger", hidden: !report.prunable.sessions },
        "Prune all ended sessions");
      all.addEventListener("click", () => busy(all, async () => {
        const choice = await app.dialog({
          title: "Prune every ended session?",
          body: h("p", {}, `Ended sessions: ${report.prunable.sessions}, holding ${bytes(report.prunable.bytes)}. `,
            "They go with their brains; active sessions, feeds, artifacts and knowledge bases stay. ",
            "The note that follows offers an undo while the hub allows it."),
          actions: [{ label: "Cancel", value: null }, { label: "Prune all", value: "go", danger: true }],
          focus: null,
        });
        if (choice === "go") await pruneWithUndo(app, "/storage/sessions", draw);
      }));
      fill(body, usage(report), byKind(report),
        h("section", { class: "panel", "aria-labelledby": "prunable-title" },
          h("h2", { id: "prunable-title" }, "Prunable"),
          h("p", {}, report.prunable.sessions
            ? `${count(report.prunable.sessions, "ended session")} holding ${bytes(report.prunable.bytes)}`
            : "No ended session holds storage."), all),
        h("section", { "aria-labelledby": "projects-title" },
          h("h2", { id: "projects-title" }, "Projects"),
          h("ul", { class: "rows storage-rows" }, report.projects.map((row) => projectRow(app, row, draw)))));
    };
    await draw();
    return { keys: rowKeys(body) };
  },
};
