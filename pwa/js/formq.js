// Form questions: the agent's form (the MCP elicitation subset the hub checked) drawn as labelled
// fields prefilled with the agent's draft (its defaults), sent back as the answer's `value`; and the
// delivery receipt under a resolved item ("delivered to coder 3 s ago" or "not picked up yet").
import { h } from "./dom.js";
import { ago } from "./format.js";

const PRESENT_SECS = 120; // an agent's last call is recorded at most once a minute

const INPUT_TYPE = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

function choiceList(prop) {
  if (Array.isArray(prop.oneOf)) return prop.oneOf.map((o) => [o.const, o.title || o.const]);
  const names = Array.isArray(prop.enumNames) ? prop.enumNames : prop.enum;
  return (prop.enum || []).map((v, i) => [v, names[i]]);
}

function multiList(prop) {
  const items = prop.items || {};
  if (Array.isArray(items.anyOf)) return items.anyOf.map((o) => [o.const, o.title || o.const]);
  return (items.enum || []).map((v) => [v, v]);
}

// One property as a control; returns {node, read()} where read() gives the member's value or undefined.
function field(name, prop, required, idBase) {
  const id = `${idBase}-f-${name}`;
  const title = `${prop.title || name}${required ? " (required)" : ""}`;
  const hint = prop.description ? h("p", { class: "hint", id: `${id}-hint` }, prop.description) : null;
  const described = hint ? { "aria-describedby": `${id}-hint` } : {};
  if (prop.type === "boolean") {
    const box = h("input", { type: "checkbox", id, checked: prop.default === true, ...described });
    return { node: h("div", { class: "form-field" }, h("label", { class: "choice", htmlFor: id }, box, title), hint),
      read: () => box.checked };
  }
  if (prop.type === "array" || (prop.type === "string" && (prop.enum || prop.oneOf))) {
    const multi = prop.type === "array";
    const picked = new Set(multi ? prop.default || [] : [prop.default]);
    const inputs = (multi ? multiList(prop) : choiceList(prop)).map(([value, label], i) => {
      const input = h("input", { type: multi ? "checkbox" : "radio", name: id, id: `${id}-${i}`, checked: picked.has(value) });
      input.dataset.value = value;
      return { input, node: h("label", { class: "choice", htmlFor: `${id}-${i}` }, input, String(label)) };
    });
    const read = () => {
      const on = inputs.filter((x) => x.input.checked).map((x) => x.input.dataset.value);
      return multi ? on : on[0];
    };
    return { node: h("fieldset", { class: "form-field", ...described }, h("legend", {}, title), inputs.map((x) => x.node), hint),
      read };
  }
  const numeric = prop.type === "number" || prop.type === "integer";
  const input = h("input", { id, class: "field", required,
    type: numeric ? "number" : INPUT_TYPE[prop.format] || "text", ...described });
  if (numeric) {
    input.step = prop.type === "integer" ? "1" : "any";
    if (prop.minimum !== undefined) input.min = String(prop.minimum);
    if (prop.maximum !== undefined) input.max = String(prop.maximum);
  } else {
    if (prop.maxLength !== undefined) input.maxLength = prop.maxLength;
    if (prop.minLength !== undefined) input.minLength = prop.minLength;
  }
  if (prop.default !== undefined) {
    input.value = prop.format === "date-time" ? String(prop.default).slice(0, 16) : String(prop.default);
  }
  const read = () => {
    if (input.value === "") return undefined;
    if (numeric) return Number(input.value);
    if (prop.format === "date-time") return new Date(input.value).toISOString();
    return input.value;
  };
  return { node: h("div", { class: "form-field" }, h("label", { class: "label", htmlFor: id }, title), input, hint), read };
}

// The form under a waiting question; send(value, what) posts the answer.
export function formControls(item, idBase, send) {
  const form = item.payload.form;
  const required = new Set(form.required || []);
  const fields = Object.entries(form.properties || {}).map(([name, prop]) => [name, field(name, prop, required.has(name), idBase)]);
  const submit = h("button", { type: "submit", class: "btn primary" }, "Send answer");
  const node = h("form", { class: "answer-form form-question", "aria-label": form.title || "Answer the form" },
    form.description ? h("p", { class: "hint" }, form.description) : null,
    fields.map(([, f]) => f.node), h("div", { class: "btn-row" }, submit));
  node.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!node.reportValidity()) return;
    const value = {};
    for (const [name, f] of fields) {
      const v = f.read();
      if (v !== undefined && !(Array.isArray(v) && v.length === 0 && !required.has(name))) value[name] = v;
    }
    send(value);
  });
  return { node, submit };
}

// "Delivered to coder 3 s ago", or "Not picked up yet" with the agent's presence.
export function receipt(item) {
  if (item.status !== "resolved" || item.expired || !("delivered_at" in item)) return null;
  if (item.delivered_at) {
    return h("p", { class: "receipt row-meta" }, `Delivered to ${item.actor} ${ago(item.delivered_at)}`);
  }
  const seen = item.actor_seen_at ? (Date.now() - Date.parse(item.actor_seen_at)) / 1000 : null;
  const presence = seen === null ? `${item.actor} has not called the hub yet`
    : seen < PRESENT_SECS ? `${item.actor} is active now` : `${item.actor} last called ${ago(item.actor_seen_at)}`;
  return h("p", { class: "receipt row-meta" }, `Not picked up yet · ${presence}`);
}
