// A search query's matches marked in a plain-text snippet: text nodes, with each match inside a
// <mark> element whose only child is a text node. Nothing is ever parsed as HTML.
//
// The terms are read as the hub reads them (hubcore/services/search/query.py): a balanced
// "quoted phrase" is a phrase, other runs of letters and digits are words matched as prefixes,
// bare AND/OR/NOT/NEAR are dropped; comparison ignores case and diacritics (the index's unicode61
// tokenizer with remove_diacritics). A word marks every snippet word it begins; a phrase marks the
// run of snippet words it equals.
import { h } from "../../dom.js";

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const OPERATORS = new Set(["AND", "OR", "NOT", "NEAR"]);

function fold(text) {
  return text.normalize("NFD").replace(/\p{M}+/gu, "").toLowerCase();
}

function words(text) {
  return Array.from(text.matchAll(WORD), (m) => m[0]);
}

// {words: ["pay"], phrases: [["cart", "total"]]}, folded.
// `max`: the hub's term limit (GET /limits `search_terms`); the terms past it the hub drops too.
export function terms(query, max = Infinity) {
  const phrases = [];
  let rest = query;
  if ((query.match(/"/g) || []).length >= 2) {
    for (const m of query.matchAll(/"([^"]*)"/g)) {
      const inside = words(m[1]).map(fold);
      if (inside.length) phrases.push(inside);
    }
    rest = query.replace(/"([^"]*)"/g, " ");
  }
  const loose = words(rest).filter((w) => !OPERATORS.has(w)).map(fold);
  const all = [...phrases, ...loose].slice(0, max);
  return { words: all.filter((t) => typeof t === "string"), phrases: all.filter((t) => Array.isArray(t)) };
}

// The [start, end) character ranges of the snippet to mark, sorted and merged.
export function ranges(snippet, query, max = Infinity) {
  const { words: ws, phrases } = terms(query, max);
  const tokens = Array.from(snippet.matchAll(WORD), (m) => ({ start: m.index, end: m.index + m[0].length, key: fold(m[0]) }));
  const found = [];
  for (const t of tokens) if (ws.some((w) => w && t.key.startsWith(w))) found.push([t.start, t.end]);
  for (const phrase of phrases) {
    for (let i = 0; i + phrase.length <= tokens.length; i++) {
      if (phrase.every((w, j) => tokens[i + j].key === w)) found.push([tokens[i].start, tokens[i + phrase.length - 1].end]);
    }
  }
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const merged = [];
  for (const r of found) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]); else merged.push([...r]);
  }
  return merged;
}

// A fragment: the snippet as text nodes, its matches inside <mark> elements.
export function marked(snippet, query, max = Infinity) {
  const frag = document.createDocumentFragment();
  let at = 0;
  for (const [start, end] of ranges(snippet, query, max)) {
    if (start > at) frag.append(document.createTextNode(snippet.slice(at, start)));
    frag.append(h("mark", {}, snippet.slice(start, end)));
    at = end;
  }
  if (at < snippet.length) frag.append(document.createTextNode(snippet.slice(at)));
  return frag;
}
