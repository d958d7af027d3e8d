// Search as you type over feed events, artifacts, brains and knowledge pages (GET /api/v1/search).
// A keystroke waits DEBOUNCE_MS for the next one; a new query aborts the one in flight, and an
// answer that is not the newest asked for is dropped (an abort can lose the race with a response
// already read), so a slow stale answer never overwrites a newer one. Snippets are plain text from
// the hub; the query's words are marked with <mark> elements built from text nodes, never HTML.
import { h, fill } from "../dom.js";
import { bytes, count } from "../format.js";
import { link } from "../routes.js";
import { errorText, rowKeys } from "./parts/common.js";
import { marked } from "./parts/marks.js";

export const DEBOUNCE_MS = 50; // long enough to coalesce a burst of keys, short enough for p99 under 150 ms
// The families the app knows how to name, in its order; the hub's list (GET /limits) decides which
// exist, and one the app does not know yet still gets its chip, under the hub's own name.
const FAMILY_NAME = new Map([["feed", "Feed"], ["artifact", "Artifacts"], ["brain", "Brains"], ["kb", "Pages"]]);

function families(limits) {
  const hub = limits && Array.isArray(limits.search_types) ? limits.search_types.map(String) : [...FAMILY_NAME.keys()];
  return [...[...FAMILY_NAME.keys()].filter((t) => hub.includes(t)), ...hub.filter((t) => !FAMILY_NAME.has(t))];
}
const HAS_WORD = /[\p{L}\p{N}]/u; // a query of only punctuation is blank to the hub

// Where a hit lives: the address that opens it.
export function hitHref(hit) {
  const project = encodeURIComponent(hit.project_id);
  switch (hit.type) {
    case "feed": return link("/projects/:id", { id: hit.project_id }, { tab: "feed", event: hit.event_id });
    case "artifact": return link("/artifacts/:id", { id: hit.artifact_id });
    case "brain": return link("/sessions/:id", { id: hit.session_id }, { path: hit.path });
    case "kb": return link("/projects/:id/wiki", { id: hit.project_id }, { path: hit.path });
    default: return `#/projects/${project}`;
  }
}

// The hit's own line under its snippet: what it is and where, as text.
function hitMeta(hit) {
  const parts = [hit.project_display_name || hit.project_id];
  if (hit.type === "feed") parts.push(`${hit.event_kind} by ${hit.actor}`);
  if (hit.type === "artifact") {
    parts.push(hit.version ? `version ${hit.version}` : null, hit.size_bytes !== null && hit.size_bytes !== undefined
      ? bytes(hit.size_bytes) : null);
  }
  if (hit.type === "brain") parts.push(`session ${hit.session_name || hit.session_id}`, hit.session_status);
  return parts.filter(Boolean).join(" · ");
}

function hitTitle(hit) {
  if (hit.type === "brain" || hit.type === "kb") return h("span", { class: "hit-path" }, hit.path);
  if (hit.type === "artifact") return h("span", { class: "hit-path" }, hit.artifact_id);
  return h("span", { class: "tag" }, hit.event_kind);
}

function hitRow(hit, terms, termsMax) {
  return h("li", { class: "hit", dataset: { type: hit.type } },
    h("a", { class: "hit-link", href: hitHref(hit), "data-row": "" },
      h("span", { class: "hit-title" }, hitTitle(hit)),
      h("span", { class: "hit-snippet" }, marked(hit.snippet || "", terms, termsMax)),
      h("span", { class: "hit-meta" }, hitMeta(hit))));
}

function groupNode(group, terms, termsMax) {
  const id = `hits-${group.type}`;
  return h("section", { class: "hit-group", "aria-labelledby": id, dataset: { type: group.type } },
    h("h2", { id }, FAMILY_NAME.get(group.type) || group.type, " ", h("span", { class: "count" }, `(${group.count})`)),
    h("ul", { class: "rows hits" }, group.hits.map((hit) => hitRow(hit, terms, termsMax))));
}

// The state read from the address: #/search?q=&scope=&project=&type=&mode=
function fromParams(params, limits) {
  const type = families(limits).includes(params.type) ? params.type : null;
  const project = params.scope === "global" ? null : params.project || null;
  return { q: params.q || "", type, project, mode: params.mode === "semantic" ? "semantic" : "lexical" };
}

function toHash(state) {
  return link("/search", {}, {
    q: state.q, scope: state.project ? "project" : null, project: state.project, type: state.type,
    mode: state.mode === "semantic" ? "semantic" : null,
  });
}

const RETRY_SECONDS = [1, 2, 3, 5, 8]; // then every 10 s, while the hub's model warms up
const RETRY_LATER_MS = 10000;

export function warming(res) {
  return res.backend === "fts-fallback" && res.semantic === "warming";
}

function backendNote(res, asked) {
  if (asked !== "semantic") return "";
  if (warming(res)) return "Meaning search is warming up (the hub is loading its model): these are word matches for now. Trying again by itself…";
  if (res.backend === "fts-fallback") return "Meaning search is not available on this hub: these are word matches (fts-fallback).";
  if (res.backend === "hybrid") return "Word matches blended with matches by meaning.";
  return "";
}

export default {
  title: () => "Search",
  async render(root, params, app) {
    const state = fromParams(params, app.limits);
    const input = h("input", {
      type: "search", id: "search-q", class: "field search-input", name: "q", value: state.q, autocomplete: "off",
      placeholder: "Words, a \"quoted phrase\"…", enterkeyhint: "search", spellcheck: "false",
    });
    const chips = h("div", { class: "chips search-scope", role: "group", "aria-label": "Look in" });
    const pill = h("select", { class: "pill", id: "search-project", "aria-label": "Project" },
      h("option", { value: "" }, "All projects"));
    const semantic = h("input", { type: "checkbox", id: "search-semantic", checked: state.mode === "semantic" });
    const note = h("p", { class: "backend-note", hidden: true });
    const status = h("p", { class: "search-status", role: "status", "aria-live": "polite" });
    const results = h("div", { class: "search-results" });
    const form = h("form", { role: "search", class: "search-form", onsubmit: (e) => { e.preventDefault(); run(0); } },
      h("label", { class: "label", htmlFor: "search-q" }, "Search feed, artifacts, brains and pages"),
      input,
      h("div", { class: "search-filters" }, chips, pill,
        h("label", { class: "choice semantic-toggle", htmlFor: "search-semantic" }, semantic, "By meaning (semantic)")));
    root.append(form, note, status, results);

    let timer = null;
    let retryTimer = null;
    let retries = 0; // answers that said "warming" for this query, in a row
    let asked = 0; // the newest query's number: only its answer is drawn
    let inflight = null;

    function drawChips() {
      const chip = (label, type) => h("button", {
        type: "button", class: "chip", "aria-pressed": state.type === type ? "true" : "false",
        onclick: () => { state.type = type; drawChips(); run(0); },
      }, label);
      fill(chips, chip("Everything", null), families(app.limits).map((type) => chip(FAMILY_NAME.get(type) || type, type)));
    }

    function hint(text) {
      fill(results, h("p", { class: "empty" }, text));
      results.dataset.query = "";
    }

    function draw(res, q) {
      const n = res.count;
      status.textContent = `${count(n, "result")}${res.truncated ? " (more matched: add words to narrow it)" : ""}`
        + `, in ${Math.round(res.took_ms * 10) / 10} ms`;
      const text = backendNote(res, state.mode);
      note.textContent = text;
      note.hidden = !text;
      note.dataset.backend = res.backend;
      note.dataset.semantic = res.semantic || "";
      clearTimeout(retryTimer);
      if (state.mode === "semantic" && warming(res)) { // ask again, the same query, until meaning answers
        const wait = retries < RETRY_SECONDS.length ? RETRY_SECONDS[retries] * 1000 : RETRY_LATER_MS;
        retries += 1;
        const mine = asked;
        retryTimer = setTimeout(() => { if (mine === asked) search(q, mine); }, wait);
      }
      if (!n) fill(results, h("p", { class: "empty" }, "Nothing matches."));
      else fill(results, res.groups.map((g) => groupNode(g, q, app.limits && app.limits.search_terms)));
      results.dataset.query = q; // what the drawn results answer (tests and the bench wait on it)
    }

    async function search(q, mine) {
      if (inflight) inflight.abort();
      const controller = new AbortController();
      inflight = controller;
      const query = { q, type: state.type, mode: state.mode === "semantic" ? "semantic" : null };
      if (state.project) Object.assign(query, { scope: "project", project: state.project });
      try {
        const res = await app.api.get("/search", query, { signal: controller.signal });
        if (mine !== asked) return; // a newer query was asked meanwhile
        draw(res, q);
      } catch (err) {
        if (mine !== asked || (err && err.name === "AbortError")) return;
        status.textContent = "";
        note.hidden = true;
        fill(results, h("p", { class: "error-text", role: "alert" }, errorText(err)));
        results.dataset.query = q;
      } finally {
        if (inflight === controller) inflight = null;
      }
    }

    // Ask for what the field says now, after `wait` ms without another keystroke.
    function run(wait = DEBOUNCE_MS) {
      clearTimeout(timer);
      clearTimeout(retryTimer);
      retries = 0;
      const mine = ++asked;
      state.q = input.value;
      history.replaceState(null, "", toHash(state)); // the address keeps the search (back returns to it)
      const q = state.q.trim();
      // The hub's query limit is in UTF-8 bytes (GET /limits), which no maxLength can state.
      const maxBytes = app.limits && app.limits.search_query_bytes;
      if (maxBytes && new TextEncoder().encode(q).length > maxBytes) {
        if (inflight) inflight.abort();
        status.textContent = "";
        hint(`The query is over the hub's limit of ${maxBytes.toLocaleString()} bytes: shorten it.`);
        return;
      }
      if (!q || !HAS_WORD.test(q)) {
        if (inflight) inflight.abort();
        status.textContent = "";
        note.hidden = true;
        hint(q ? "Type a word: punctuation alone matches nothing." : "Type to search feed events, artifacts, brains and pages.");
        return;
      }
      timer = setTimeout(() => search(q, mine), wait);
    }

    input.addEventListener("input", () => run());
    semantic.addEventListener("change", () => { state.mode = semantic.checked ? "semantic" : "lexical"; run(0); });
    pill.addEventListener("change", () => { state.project = pill.value || null; run(0); });
    drawChips();

    // The project pill lists the visible projects (a project named in the address is kept even
    // before the list answers, so a search from a project's screen is scoped at once).
    if (state.project) pill.append(h("option", { value: state.project, selected: true }, state.project));
    app.api.get("/projects").then(({ projects }) => {
      const keep = state.project;
      fill(pill, h("option", { value: "" }, "All projects"),
        projects.map((p) => h("option", { value: p.id, selected: p.id === keep }, p.display_name || p.id)));
      if (keep && !projects.some((p) => p.id === keep)) pill.append(h("option", { value: keep, selected: true }, keep));
    }).catch(() => { /* the pill keeps what it has; the search itself reports the hub's state */ });

    run(0);
    if (!state.q) input.focus(); // a fresh search starts typing; one come back to keeps the heading's focus
    const rows = rowKeys(results);
    return {
      keys: { ...rows, "/": () => { input.focus(); input.select(); } },
      dispose() { clearTimeout(timer); clearTimeout(retryTimer); asked += 1; if (inflight) inflight.abort(); },
    };
  },
};
