// Unified diffs in the browser: the hub parsed and checked the text when it was written (its summary
// rides on the artifact), so this reads the same text for display only: files in the summary's order,
// each with its hunks of lines {kind: " " | "-" | "+", old, new, text}. Pure: no DOM.

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;

// -> [{hunks: [{header, section, lines}], binary}], one entry per file, in the hub's order: a
// `diff --git` line starts a file that its ---/+++ pair and binary note belong to; without git
// headers each ---/+++ pair (or `Binary files ... differ` note) starts one.
export function parseDiff(text) {
  const files = [];
  let file = null;
  let hunk = null;
  let oldNo = 0; let newNo = 0; let oldLeft = 0; let newLeft = 0;
  const lines = text.split("\n");
  const start = (git) => { file = { hunks: [], git, headed: false, binary: false }; files.push(file); hunk = null; };
  const fresh = () => file && file.git && !file.headed && !file.binary && !file.hunks.length;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (hunk && (oldLeft > 0 || newLeft > 0)) {
      const kind = line[0] || " ";
      if (kind === "\\") continue;
      const body = line.slice(1);
      if (kind === "-") { hunk.lines.push({ kind, old: oldNo++, new: null, text: body }); oldLeft--; }
      else if (kind === "+") { hunk.lines.push({ kind, old: null, new: newNo++, text: body }); newLeft--; }
      else { hunk.lines.push({ kind: " ", old: oldNo++, new: newNo++, text: body }); oldLeft--; newLeft--; }
      continue;
    }
    hunk = hunk && (oldLeft > 0 || newLeft > 0) ? hunk : null;
    if (line.startsWith("diff --git ")) { start(true); continue; }
    if (line.startsWith("--- ") && (lines[i + 1] || "").startsWith("+++ ")) {
      if (!fresh()) start(false);
      file.headed = true;
      i++;
      continue;
    }
    if ((line.startsWith("Binary files ") && line.endsWith(" differ")) || line === "GIT binary patch") {
      if (!fresh()) start(false);
      file.binary = true;
      continue;
    }
    const m = HUNK.exec(line);
    if (m && file && !file.binary) {
      oldNo = Number(m[1]); newNo = Number(m[3]);
      oldLeft = m[2] === undefined ? 1 : Number(m[2]);
      newLeft = m[4] === undefined ? 1 : Number(m[4]);
      hunk = { header: `@@ -${m[1]},${oldLeft} +${m[3]},${newLeft} @@`, section: m[5].trim(), lines: [] };
      file.hunks.push(hunk);
    }
  }
  return files;
}

// The hub's summary entries joined to the parsed files (same order): [{...entry, hunks}].
export function withSummary(summary, text) {
  const parsed = parseDiff(text);
  return summary.files.map((f, i) => ({ ...f, hunks: (parsed[i] && parsed[i].hunks) || [] }));
}

// Word-level changes between a removed and an added line: [{text, changed}] for each side. Tokens
// are words, spaces and single punctuation marks; a longest-common-subsequence over at most 400
// tokens a side (beyond that the whole line is marked changed).
const TOKEN = /\w+|\s+|[^\w\s]/gu;
export function wordDiff(a, b) {
  const x = a.match(TOKEN) || []; const y = b.match(TOKEN) || [];
  if (x.length > 400 || y.length > 400) return [[{ text: a, changed: true }], [{ text: b, changed: true }]];
  const n = x.length; const m = y.length;
  const dp = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    dp[i][j] = x[i] === y[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  }
  const left = []; const right = [];
  const push = (side, text, changed) => {
    const last = side[side.length - 1];
    if (last && last.changed === changed) last.text += text; else side.push({ text, changed });
  };
  let i = 0; let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { push(left, x[i++], false); push(right, y[j++], false); }
    else if (dp[i + 1][j] >= dp[i][j + 1]) push(left, x[i++], true);
    else push(right, y[j++], true);
  }
  while (i < n) push(left, x[i++], true);
  while (j < m) push(right, y[j++], true);
  return [left, right];
}

// A hunk's lines as display rows: context runs longer than `keep * 2 + 2` fold into {fold: [lines]}
// (the `keep` lines next to a change stay); a removed run followed by an added run pairs line by
// line for word marks ({pair} on each).
export function rows(lines, keep = 3) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind === " ") {
      let j = i;
      while (j < lines.length && lines[j].kind === " ") j++;
      const run = lines.slice(i, j);
      const head = i === 0 ? 0 : keep; const tail = j === lines.length ? 0 : keep;
      if (run.length > head + tail + 2) {
        out.push(...run.slice(0, head), { fold: run.slice(head, run.length - tail) }, ...run.slice(run.length - tail));
      } else {
        out.push(...run);
      }
      i = j;
      continue;
    }
    let j = i;
    while (j < lines.length && lines[j].kind === "-") j++;
    let k = j;
    while (k < lines.length && lines[k].kind === "+") k++;
    const removed = lines.slice(i, j).map((l) => ({ ...l })); const added = lines.slice(j, k).map((l) => ({ ...l }));
    for (let p = 0; p < Math.min(removed.length, added.length); p++) {
      removed[p].pair = added[p]; added[p].pair = removed[p];
    }
    out.push(...removed, ...added);
    i = k === i ? i + 1 : k;
  }
  return out;
}

// The indexes of a file's hunks that an earlier version's parse of the same file lacks ("changes
// since"): a hunk is unchanged when the earlier file has one with the same lines (kind and text),
// wherever it starts, so lines moved by edits above them do not count as changes. With no earlier
// file, every hunk is a change.
export function changedHunks(file, earlier) {
  const sign = (hk) => hk.lines.map((l) => l.kind + l.text).join("\n");
  const seen = new Set(earlier ? earlier.hunks.map(sign) : []);
  const out = new Set();
  file.hunks.forEach((hk, i) => { if (!seen.has(sign(hk))) out.add(i); });
  return out;
}
