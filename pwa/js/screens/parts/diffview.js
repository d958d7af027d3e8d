// A diff artifact's review screen (issue 29): the file list with counts, then each file's hunks,
// unified on a phone and side by side from 1,024 px; long context runs folded behind "Expand";
// changed words marked inside a changed line; a file's lines are drawn 100 rows at a time, each block
// only when it scrolls near the screen, so a 10,000-line diff costs its first screen.
// Tapping a line's number opens a comment form under it; line comments show under their line.
// Every path, line and comment an agent wrote is a text node (dom.js `h`), never markup.
import { h, fill } from "../../dom.js";
import { rows, wordDiff, withSummary, changedHunks } from "../../diff.js";
import { errorText } from "./common.js";

const WIDE = "(min-width: 1024px)";
const ROW_PX = 20; // a placeholder's height per line until the file is drawn
const BLOCK = 100; // display rows drawn at once: a 10,000-line file is drawn a block at a time
const LIST_SHOWN = 10;

function codeText(line) {
  if (!line.pair || line.kind === " ") return [line.text];
  const [left, right] = wordDiff(line.kind === "-" ? line.text : line.pair.text,
    line.kind === "-" ? line.pair.text : line.text);
  const parts = line.kind === "-" ? left : right;
  return parts.map((p) => (p.changed ? h("span", { class: "wd" }, p.text) : p.text));
}

const key = (file, side, line) => `${side}:${line}:${file}`;

export function diffView(app, found, { onPosted } = {}) {
  const files = withSummary(found.diff || { files: [] }, found.content);
  const media = window.matchMedia(WIDE);
  let byLine = new Map();
  let only = null; // "changes since": Map(file index -> Set of its changed hunks' indexes), or null for all
  const drawn = new Map(); // section -> draw()
  const blocks = new Map(); // block of lines -> draw()
  const observer = new IntersectionObserver((entries) => near(entries), { rootMargin: "600px 0px" });
  const base = `/artifacts/${encodeURIComponent(found.id)}/comments`;

  const commentBox = (comments) => h("div", { class: "diff-comments" }, comments.map((c) =>
    h("div", { class: ["diff-comment", c.done && "done"], dataset: { comment: c.id } },
      h("p", { class: "small" }, h("strong", {}, c.author),
        c.anchor.end_line ? ` · lines ${c.anchor.line}–${c.anchor.end_line}` : "", c.done ? " · resolved" : ""),
      h("p", { class: "diff-comment-body" }, c.body))));

  // The form under a tapped line: posts {mode: line, file, side, line} on the shown version.
  const openForm = (after, file, side, number) => {
    const next = after.nextElementSibling;
    if (next && next.classList.contains("diff-form")) { next.querySelector("textarea").focus(); return; }
    const id = `dc-${Math.random().toString(36).slice(2)}`;
    const text = h("textarea", { id, rows: 3, maxLength: (app.limits || {}).comment_body_chars, required: true });
    const error = h("p", { class: "error-text", role: "alert", hidden: true });
    const send = h("button", { type: "submit", class: "btn primary" }, "Comment");
    const cancel = h("button", { type: "button", class: "btn", onclick: () => form.remove() }, "Cancel");
    const form = h("form", { class: "diff-form form", "aria-label": `Comment on ${side} line ${number}` },
      h("label", { htmlFor: id, class: "label" }, `Comment on ${side === "old" ? "old" : "new"} line ${number} of ${file}`),
      text, error, h("div", { class: "btn-row" }, cancel, send));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!text.value.trim()) { error.textContent = "Write the comment first"; error.hidden = false; return; }
      send.disabled = true;
      try {
        await app.api.post(base, { body: text.value, anchor_version: found.version,
          anchor: { mode: "line", file, side, line: number } });
        form.remove();
        app.toast("Comment posted");
        if (onPosted) await onPosted();
      } catch (err) {
        error.textContent = errorText(err); error.hidden = false; send.disabled = false;
      }
    });
    after.after(form);
    text.focus();
  };

  const numberCell = (file, line, side) => {
    const n = side === "old" ? line.old : line.new;
    if (n === null) return h("span", { class: "dn" });
    return h("button", { type: "button", class: "dn", "aria-label": `Comment on ${side} line ${n}`,
      dataset: { side, line: String(n) } }, String(n));
  };

  const unifiedRow = (file, line) => {
    const row = h("div", { class: ["dl", line.kind === "+" ? "add" : line.kind === "-" ? "del" : "ctx"] },
      numberCell(file, line, "old"), numberCell(file, line, "new"),
      h("span", { class: "dc" }, h("span", { class: "dk", "aria-hidden": "true" }, line.kind), codeText(line)));
    const out = [row];
    for (const side of ["old", "new"]) {
      const n = side === "old" ? line.old : line.new;
      const held = n === null ? null : byLine.get(key(file, side, n));
      if (held) out.push(commentBox(held));
    }
    return out;
  };

  const half = (file, line, side) => (line
    ? [numberCell(file, line, side), h("span", { class: ["dc", line.kind === "+" ? "add" : line.kind === "-" ? "del" : "ctx"] },
      codeText(line))]
    : [h("span", { class: "dn" }), h("span", { class: "dc empty" })]);

  const splitRows = (file, lines) => {
    const out = [];
    const push = (left, right) => {
      const row = h("div", { class: "dl split" }, half(file, left, "old"), half(file, right, "new"));
      out.push(row);
      for (const [line, side] of [[left, "old"], [right, "new"]]) {
        const n = line && (side === "old" ? line.old : line.new);
        const c = n !== null && n !== undefined ? byLine.get(key(file, side, n)) : null;
        if (c) out.push(commentBox(c));
      }
    };
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (line.fold) { out.push(line); i++; continue; }
      if (line.kind === " ") { push(line, line); i++; continue; }
      const del = []; const add = [];
      while (i < lines.length && lines[i].kind === "-") del.push(lines[i++]);
      while (i < lines.length && lines[i].kind === "+") add.push(lines[i++]);
      for (let p = 0; p < Math.max(del.length, add.length); p++) push(del[p] || null, add[p] || null);
    }
    return out;
  };

  // A block of a hunk's display rows, drawn when it comes near the screen (or drawn again: comments
  // moved, the width crossed 1,024 px).
  const drawBlock = (f, el, list) => {
    const wide = media.matches;
    const items = wide ? splitRows(f.path, list) : list.flatMap((l) => (l.fold ? [l] : unifiedRow(f.path, l)));
    const nodes = [];
    for (const item of items) {
      if (!item) continue;
      if (!item.fold) { nodes.push(item); continue; }
      const b = h("button", { type: "button", class: "btn small diff-expand" }, `Expand ${item.fold.length} unchanged lines`);
      b.addEventListener("click", () => {
        b.replaceWith(...(media.matches ? splitRows(f.path, item.fold) : item.fold.flatMap((l) => unifiedRow(f.path, l))));
      });
      nodes.push(b);
    }
    fill(el, nodes);
    el.style.minHeight = "";
    el.dataset.drawn = "1";
  };

  const hunkNode = (f, hk, index) => {
    const list = rows(hk.lines);
    const body = h("div", { class: "diff-hunk-lines" });
    for (let start = 0; start < list.length;) {
      let end = Math.min(list.length, start + BLOCK);
      // A removed line and the added line it pairs with stay in one block (side by side, word marks).
      while (end < list.length && list[end].pair && end - start < BLOCK * 2) end++;
      const part = list.slice(start, end);
      const el = h("div", { class: "diff-chunk", style: { minHeight: `${part.length * ROW_PX}px` } });
      blocks.set(el, () => drawBlock(f, el, part));
      observer.observe(el);
      body.append(el);
      start = end;
    }
    return h("div", { class: "diff-hunk", dataset: { hunk: String(index) } },
      h("p", { class: "diff-hunk-head" }, hk.header, hk.section ? ` ${hk.section}` : ""), body);
  };

  const sections = files.map((f, index) => {
    const lines = f.hunks.reduce((n, hk) => n + hk.lines.length + 1, 0);
    const body = h("div", { class: "diff-body", style: { minHeight: `${Math.min(lines, 4000) * ROW_PX}px` } });
    const title = h("h3", { class: "diff-path" }, f.path,
      f.old_path ? h("span", { class: "muted small" }, ` (from ${f.old_path})`) : null);
    const section = h("section", { class: "diff-file", id: `diff-file-${index}`, "aria-label": f.path, dataset: { index: String(index) } },
      h("div", { class: "diff-file-head" }, title,
        h("p", { class: "small" }, h("span", { class: "tag" }, f.status), " ",
          h("span", { class: "n-add" }, `+${f.added}`), " ", h("span", { class: "n-del" }, `−${f.removed}`),
          f.binary ? " · binary" : "", f.similarity != null ? ` · ${f.similarity}% similar` : "")),
      body);
    const draw = () => {
      if (f.binary) { fill(body, h("p", { class: "muted" }, "Binary file: not shown.")); }
      else if (!f.hunks.length) { fill(body, h("p", { class: "muted" }, "No lines changed (a mode change, rename or empty file).")); }
      else { fill(body, h("p", { class: "muted small diff-kept", hidden: true }), f.hunks.map((hk, i) => hunkNode(f, hk, i))); }
      body.style.minHeight = "";
      section.dataset.drawn = "1";
      showHunks(section);
    };
    drawn.set(section, draw);
    return section;
  });

  // Files come near: their hunks' blocks are made (placeholders); blocks come near: their lines drawn.
  function near(entries) {
    for (const e of entries) {
      if (!e.isIntersecting || e.target.dataset.drawn) continue;
      observer.unobserve(e.target);
      (drawn.get(e.target) || blocks.get(e.target))();
    }
  }
  for (const s of sections) observer.observe(s);

  const redrawDrawn = () => { for (const [el, draw] of blocks) if (el.dataset.drawn) draw(); };
  media.addEventListener("change", redrawDrawn);

  const fileList = h("ol", { class: "diff-files rows" }, files.map((f, index) => h("li", { dataset: { index: String(index) } },
    h("a", { href: `#diff-file-${index}`, class: "diff-file-link", onclick: (e) => {
      e.preventDefault(); // the hash is the app's router: scroll instead
      sections[index].scrollIntoView({ block: "start" });
    } }, f.path),
    " ", h("span", { class: "tag small" }, f.status), " ", h("span", { class: "n-add" }, `+${f.added}`), " ",
    h("span", { class: "n-del" }, `−${f.removed}`))));
  // A long list shows its first LIST_SHOWN files until asked, so a phone's first screen reaches the
  // code (100 files are about seven screens at 390 px); "changes since" lists all it keeps.
  let listed = files.length <= LIST_SHOWN;
  const more = listed ? null : h("button", { type: "button", class: "btn small diff-more", "aria-expanded": "false",
    "aria-controls": `diff-files-${found.id}` });
  const showList = () => {
    fileList.classList.toggle("short", !listed && only === null);
    if (!more) return;
    more.hidden = only !== null;
    more.setAttribute("aria-expanded", String(listed));
    more.textContent = listed ? `Show the first ${LIST_SHOWN} files` : `Show all ${files.length} files`;
  };
  if (more) more.addEventListener("click", () => { listed = !listed; showList(); });
  fileList.id = `diff-files-${found.id}`;
  showList();
  const total = found.diff ? found.diff : { added: 0, removed: 0 };
  const since = h("div", { class: "diff-since" });
  const node = h("div", { class: "diff-view" },
    h("nav", { class: "panel diff-nav", "aria-label": "Changed files" },
      h("h2", {}, `${files.length} ${files.length === 1 ? "file" : "files"} changed · `,
        h("span", { class: "n-add" }, `+${total.added}`), " ", h("span", { class: "n-del" }, `−${total.removed}`)),
      since, fileList, more),
    sections);

  // A drawn file shows only its changed hunks while "changes since" is on, and says how many it hides.
  function showHunks(section) {
    const changed = only && only.get(Number(section.dataset.index));
    let kept = 0;
    section.querySelectorAll(".diff-hunk").forEach((hk) => {
      hk.hidden = Boolean(changed) && !changed.has(Number(hk.dataset.hunk));
      if (hk.hidden) kept++;
    });
    const note = section.querySelector(".diff-kept");
    if (note) {
      note.hidden = kept === 0;
      note.textContent = `${kept} unchanged ${kept === 1 ? "hunk" : "hunks"} hidden`;
    }
  }

  const applyOnly = () => {
    sections.forEach((s, i) => { s.hidden = only !== null && !only.has(i); if (s.dataset.drawn) showHunks(s); });
    fileList.querySelectorAll("li").forEach((li) => { li.hidden = only !== null && !only.has(Number(li.dataset.index)); });
    showList();
  };

  // The version of the human's newest verdict on this diff, older than the shown one (or null).
  const lastReview = async () => {
    const { items } = await app.api.get("/inbox", { status: "resolved", project: found.project_id, limit: 200 });
    const mine = items.filter((i) => i.kind === "approval" && i.decision && i.decision.actor !== "hub"
      && i.decision.review && i.decision.review.artifact_id === found.id && i.decision.review.version < found.version);
    return mine.length ? Math.max(...mine.map((i) => i.decision.review.version)) : null;
  };

  return {
    node,
    // Line comments of the shown version: under their lines (drawn files redrawn).
    setComments(comments) {
      const had = byLine.size;
      byLine = new Map();
      for (const c of comments) {
        if (!c.anchor || c.anchor.mode !== "line" || c.anchor_version !== found.version || c.outdated) continue;
        const k = key(c.anchor.file, c.anchor.side, c.anchor.end_line || c.anchor.line);
        byLine.set(k, [...(byLine.get(k) || []), c]);
      }
      if (had || byLine.size) redrawDrawn();
    },
    // "Changes since": show only the hunks (and files) whose lines differ from an earlier version's
    // diff; the files that earlier diff changed and this one no longer does are named.
    // It starts on the reader's last review: the version of the newest approval naming this diff
    // that the human decided, else `asked` (the version the waiting approval was asked on).
    async offerSince(versions, asked) {
      const older = versions.filter((v) => v.version < found.version);
      if (!older.length) return;
      const reviewed = (await lastReview().catch(() => null)) ?? asked;
      const pick = h("select", { id: "diff-since", name: "since" }, h("option", { value: "" }, "All changes"),
        older.reverse().map((v) => h("option", { value: String(v.version), selected: v.version === reviewed },
          `Changed since version ${v.version}${v.version === reviewed ? " (your last review)" : ""}`)));
      const gone = h("p", { class: "muted small diff-gone", hidden: true });
      const apply = async () => {
        if (!pick.value) { only = null; gone.hidden = true; applyOnly(); return; }
        const other = await app.api.get(`/artifacts/${encodeURIComponent(found.id)}`, { version: Number(pick.value) });
        const before = withSummary(other.diff || { files: [] }, other.content);
        const byPath = new Map(before.map((f) => [f.path, f]));
        only = new Map();
        files.forEach((f, i) => {
          const prev = byPath.get(f.path) || (f.old_path ? byPath.get(f.old_path) : undefined);
          const changed = changedHunks(f, prev);
          if (!prev || changed.size) only.set(i, changed); // a file new to the diff shows whole
        });
        const now = new Set(files.flatMap((f) => [f.path, f.old_path]));
        const left = before.filter((f) => !now.has(f.path)).map((f) => f.path);
        gone.hidden = !left.length;
        gone.textContent = left.length ? `No longer changed since version ${pick.value}: ${left.join(", ")}` : "";
        applyOnly();
      };
      pick.addEventListener("change", () => { apply().catch((err) => app.toast(errorText(err), { kind: "error" })); });
      fill(since, h("label", { htmlFor: "diff-since", class: "label" }, "Show"), pick, gone);
      if (reviewed) apply().catch(() => {});
    },
    // A tap on a line number opens the comment form under that line.
    listen() {
      node.addEventListener("click", (e) => {
        const b = e.target instanceof Element ? e.target.closest("button.dn") : null;
        if (!b) return;
        const section = b.closest("section.diff-file");
        const f = files[Number(section.dataset.index)];
        let row = b.closest(".dl");
        while (row.nextElementSibling && row.nextElementSibling.classList.contains("diff-comments")) row = row.nextElementSibling;
        openForm(row, f.path, b.dataset.side, Number(b.dataset.line));
      });
    },
  };
}
