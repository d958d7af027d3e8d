"""Form questions: the restricted JSON Schema subset MCP elicitation uses, and answers held to it.

A form is a flat object: each property a string (optional `format` email, uri, date or date-time,
`minLength`/`maxLength`), a number or integer (`minimum`/`maximum`), a boolean, a single choice
(`enum` with optional `enumNames`, or `oneOf` of `{const, title}`), or a multiple choice (an array
whose `items` are an `enum` or an `anyOf` of `{const, title}`, with `minItems`/`maxItems`); plus
`required` and per-property `default` values (the agent's proposed draft). Anything outside the
subset is refused naming the member; the answer's `value` is validated against the form the hub
published, so an agent reads back exactly the shape it asked for. Every limit lives here, once.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from urllib.parse import urlsplit

from hubcore.errors import HubError, invalid
from hubcore.services import validate

PROPERTIES_MAX = 20
CHOICES_MAX = 20
NAME_MAX = 64
TITLE_MAX = 80  # a property's or a choice's title, and a choice's value
DESCRIPTION_MAX = 500
STRING_MAX = 2000  # the longest text answer a form may ask for (its maxLength at most this)
FORMATS = ("email", "uri", "date", "date-time")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
NUMBER_BOUND = 2**53  # bounds and numbers a JSON client reads exactly

_COMMON = {"type", "title", "description", "default"}
_KEYS = {
    "string": _COMMON | {"minLength", "maxLength", "format"},
    "choice": _COMMON | {"enum", "enumNames", "oneOf"},
    "number": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "array": _COMMON | {"items", "minItems", "maxItems", "uniqueItems"},
}


@dataclass(frozen=True)
class Field:
    """One checked property: its kind and what an answer is held to."""

    name: str
    kind: str  # string, choice, number, integer, boolean, multi
    choices: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()
    low: float | None = None  # minLength, minimum, minItems
    high: float | None = None  # maxLength, maximum, maxItems
    format: str | None = None


def _where(*path: object) -> str:
    return ".".join(["form", *(str(p) for p in path)])


def _fail(where: str, rule: str) -> HubError:
    return invalid(f"{where}: {rule}", field=where)


def _text(value: Any, where: str, limit: int, *, lines: bool = False) -> str:
    if not isinstance(value, str):
        raise _fail(where, "must be a string")
    if len(value) > limit:
        raise _fail(where, f"at most {limit} characters")
    if not lines and not validate.is_label(value):
        raise _fail(where, "one line without control characters")
    return value


def _whole(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(where, f"must be a whole number from {low} to {high}")
    return value


def _number(value: Any, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or abs(value) > NUMBER_BOUND
    ):
        raise _fail(where, f"must be a finite number within ±{NUMBER_BOUND}")
    return value


def _choices(values: Any, where: str) -> tuple[str, ...]:
    if not isinstance(values, list) or not 1 <= len(values) <= CHOICES_MAX:
        raise _fail(where, f"must be a list of 1 to {CHOICES_MAX} choices")
    out = tuple(_text(v, f"{where}.{i}", TITLE_MAX) for i, v in enumerate(values))
    if any(not v.strip() for v in out):
        raise _fail(where, "a choice is blank")
    if len(set(out)) != len(out):
        raise _fail(where, "a choice appears twice")
    return out


def _titled(items: Any, where: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`oneOf`/`anyOf` of `{const, title}`: (values, titles)."""
    if not isinstance(items, list):
        raise _fail(where, f"must be a list of 1 to {CHOICES_MAX} {{const, title}} objects")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or set(item) - {"const", "title"} or "const" not in item:
            raise _fail(f"{where}.{i}", "must be an object {const, title}")
    values = _choices([item["const"] for item in items], where)
    titles = tuple(
        _text(item.get("title", item["const"]), f"{where}.{i}.title", TITLE_MAX) for i, item in enumerate(items)
    )
    return values, titles


def _kind(prop: dict[str, Any], where: str) -> str:
    kind = prop.get("type")
    if kind == "string":
        return "choice" if "enum" in prop or "oneOf" in prop else "string"
    if kind in ("number", "integer"):
        return "number"
    if kind in ("boolean", "array"):
        return str(kind)
    raise _fail(f"{where}.type", "must be string, number, integer, boolean or array")


def _property(name: str, prop: Any) -> Field:
    where = _where("properties", name)
    if not isinstance(prop, dict):
        raise _fail(where, "must be an object")
    kind = _kind(prop, where)
    for key in prop:
        if key not in _KEYS[kind]:
            raise _fail(f"{where}.{key}", "is outside the form subset")
    if "title" in prop:
        _text(prop["title"], f"{where}.title", TITLE_MAX)
    if "description" in prop:
        _text(prop["description"], f"{where}.description", DESCRIPTION_MAX, lines=True)
    field = _shape(name, kind, prop, where)
    if "default" in prop:
        check_value(field, prop["default"], f"{where}.default")
    return field


def _shape(name: str, kind: str, prop: dict[str, Any], where: str) -> Field:
    if kind == "string":
        low = _whole(prop.get("minLength", 0), f"{where}.minLength", 0, STRING_MAX)
        high = _whole(prop.get("maxLength", STRING_MAX), f"{where}.maxLength", 0, STRING_MAX)
        fmt = prop.get("format")
        if fmt is not None and fmt not in FORMATS:
            raise _fail(f"{where}.format", f"must be one of {', '.join(FORMATS)}")
        if low > high:
            raise _fail(f"{where}.minLength", "is above maxLength")
        return Field(name, "string", low=low, high=high, format=fmt)
    if kind == "choice":
        if ("enum" in prop) == ("oneOf" in prop):
            raise _fail(where, "a single choice has either enum or oneOf")
        if "oneOf" in prop:
            values, titles = _titled(prop["oneOf"], f"{where}.oneOf")
            return Field(name, "choice", values, titles)
        values = _choices(prop["enum"], f"{where}.enum")
        names = prop.get("enumNames")
        titles = values if names is None else _choices(names, f"{where}.enumNames")
        if len(titles) != len(values):
            raise _fail(f"{where}.enumNames", "must name every enum value")
        return Field(name, "choice", values, titles)
    if kind == "number":
        low_n = _number(prop["minimum"], f"{where}.minimum") if "minimum" in prop else None
        high_n = _number(prop["maximum"], f"{where}.maximum") if "maximum" in prop else None
        if low_n is not None and high_n is not None and low_n > high_n:
            raise _fail(f"{where}.minimum", "is above maximum")
        return Field(name, str(prop["type"]), low=low_n, high=high_n)
    if kind == "boolean":
        return Field(name, "boolean")
    return _multi(name, prop, where)


def _multi(name: str, prop: dict[str, Any], where: str) -> Field:
    items = prop.get("items")
    if not isinstance(items, dict):
        raise _fail(f"{where}.items", "must be an object with enum or anyOf")
    if "anyOf" in items and set(items) <= {"anyOf"}:
        values, titles = _titled(items["anyOf"], f"{where}.items.anyOf")
    elif items.get("type") == "string" and "enum" in items and set(items) <= {"type", "enum"}:
        values = titles = _choices(items["enum"], f"{where}.items.enum")
    else:
        raise _fail(f"{where}.items", "must be {type: string, enum} or {anyOf: [{const, title}]}")
    if prop.get("uniqueItems", True) is not True:
        raise _fail(f"{where}.uniqueItems", "must be true")
    low = _whole(prop.get("minItems", 0), f"{where}.minItems", 0, len(values))
    high = _whole(prop.get("maxItems", len(values)), f"{where}.maxItems", 0, len(values))
    if low > high:
        raise _fail(f"{where}.minItems", "is above maxItems")
    return Field(name, "multi", values, titles, low=low, high=high)


def check_form(form: Any) -> dict[str, Any]:
    """The form as published (unchanged), or `invalid_argument` naming the member outside the
    subset or past a limit."""
    fields_and_required(form)
    return dict(form)


def fields_and_required(form: Any) -> tuple[list[Field], tuple[str, ...]]:
    if not isinstance(form, dict):
        raise _fail("form", "must be an object schema")
    for key in form:
        if key not in ("type", "properties", "required", "title", "description"):
            raise _fail(_where(str(key)[:NAME_MAX]), "is outside the form subset")
    if form.get("type") != "object":
        raise _fail(_where("type"), "must be object")
    if "title" in form:
        _text(form["title"], _where("title"), TITLE_MAX)
    if "description" in form:
        _text(form["description"], _where("description"), DESCRIPTION_MAX, lines=True)
    props = form.get("properties")
    if not isinstance(props, dict) or not 1 <= len(props) <= PROPERTIES_MAX:
        raise _fail(_where("properties"), f"must be an object of 1 to {PROPERTIES_MAX} properties")
    for name in props:
        if len(name) > NAME_MAX or not NAME_RE.match(name):
            raise _fail(
                _where("properties"),
                f"a property name must match {NAME_RE.pattern} and be at most {NAME_MAX} characters",
            )
    fields = [_property(name, prop) for name, prop in props.items()]
    required = form.get("required", [])
    if (
        not isinstance(required, list)
        or any(not isinstance(r, str) or r not in props for r in required)
        or len(set(required)) != len(required)
    ):
        raise _fail(_where("required"), "must list distinct property names of the form")
    return fields, tuple(required)


def _string_format(fmt: str, value: str) -> bool:
    if fmt == "email":
        return bool(EMAIL_RE.match(value))
    if fmt == "uri":
        parts = urlsplit(value)
        return bool(parts.scheme) and bool(parts.netloc or parts.path) and validate.is_label(value)
    try:
        if fmt == "date":
            return len(value) == 10 and date.fromisoformat(value) is not None
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return "T" in value.upper() and moment.tzinfo is not None
    except ValueError:
        return False


def check_value(field: Field, value: Any, where: str) -> Any:
    """One member of an answer (or a default) held to its property; returns it as stored."""
    if field.kind == "string":
        if not isinstance(value, str) or not (field.low or 0) <= len(value) <= (field.high or 0):
            raise _fail(where, f"must be a string of {int(field.low or 0)} to {int(field.high or 0)} characters")
        if field.format and not _string_format(field.format, value):
            raise _fail(where, f"must be a valid {field.format}")
        return value
    if field.kind in ("number", "integer"):
        number = _number(value, where)
        if field.kind == "integer" and not float(number).is_integer():
            raise _fail(where, "must be a whole number")
        if (field.low is not None and number < field.low) or (field.high is not None and number > field.high):
            raise _fail(where, f"must be from {field.low} to {field.high}")
        return int(number) if field.kind == "integer" else number
    if field.kind == "boolean":
        if not isinstance(value, bool):
            raise _fail(where, "must be true or false")
        return value
    if field.kind == "choice":
        if value not in field.choices:
            raise _fail(where, "must be one of the form's choices")
        return value
    if (
        not isinstance(value, list)
        or any(v not in field.choices for v in value)
        or len(set(value)) != len(value)
        or not (field.low or 0) <= len(value) <= (field.high or 0)
    ):
        raise _fail(where, f"must be {int(field.low or 0)} to {int(field.high or 0)} distinct choices of the form")
    return list(value)


def check_answer(form: dict[str, Any], value: Any) -> dict[str, Any]:
    """An answer's `value` held to the question's form: an object of its properties, every
    required one present, nothing else (`invalid_argument` naming the member)."""
    fields, required = fields_and_required(form)
    if not isinstance(value, dict):
        raise invalid("value: must be an object of the form's properties", field="value")
    by_name = {f.name: f for f in fields}
    for name in value:
        if name not in by_name:
            raise invalid("value: holds a member the form does not ask for", field="value")
    for name in required:
        if name not in value:
            raise invalid(f"value.{name}: is required", field=f"value.{name}")
    return {name: check_value(by_name[name], v, f"value.{name}") for name, v in value.items()}


def render_text(form: dict[str, Any], value: dict[str, Any]) -> str:
    """The answer's text when the human sent only a value: one `title: value` line a member."""
    props = form.get("properties", {})
    lines = []
    for name, v in value.items():
        title = props.get(name, {}).get("title") or name
        shown = ", ".join(map(str, v)) if isinstance(v, list) else ("yes" if v is True else "no" if v is False else v)
        lines.append(f"{title}: {shown}")
    return "\n".join(lines) or "(empty form)"


def quick_choices(form: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Answers a push can offer as buttons: a form of one boolean (Yes, No) or one single choice
    of two; else none. Each is (button title, value)."""
    props = form.get("properties", {})
    if len(props) != 1:
        return []
    [name] = props
    fields, _ = fields_and_required(form)
    field = fields[0]
    if field.kind == "boolean":
        return [("Yes", {name: True}), ("No", {name: False})]
    if field.kind == "choice" and len(field.choices) == 2:
        return [(title, {name: choice}) for choice, title in zip(field.choices, field.titles, strict=True)]
    return []
