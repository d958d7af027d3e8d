"""Checks on request values shared by every service: ids, display names, body shapes, member types.

Every check names the member it refuses (in the message and in `details.field`) and raises before
anything is written. One rule for every optional member: JSON `null` reads as absent. Text that is
stored trimmed is trimmed before its length is checked, so the limit applies to what is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hubcore.errors import invalid

PROJECT_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
# An agent's personal space is `space-<agent id>`, which must itself be a project id.
AGENT_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,56}")
DISPLAY_NAME_MAX = 200
PERSONAL_PREFIX = "space-"
RESERVED_AGENT_IDS = frozenset({"hub", "human", "public"})

# Every character `str.splitlines` breaks on (CR, LF, VT, FF, the file/group/record separators,
# NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR), and NUL, which no stored text may carry.
NOT_ONE_LINE_RE = re.compile("[\x00\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# A label (a display name, a session name, a question option) carries no control character at all:
# C0 (tab included), DEL, C1, and the two Unicode line separators.
NOT_LABEL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Beyond this an integer cannot be stored or echoed (SQLite and orjson stop at 64 bits).
INT64_MAX = 2**63 - 1


def one_line(value: str) -> bool:
    """No line separator of any kind and no NUL."""
    return NOT_ONE_LINE_RE.search(value) is None


def is_label(value: str) -> bool:
    return NOT_LABEL_RE.search(value) is None


def body_object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise invalid("request body must be a JSON object")
    return body


def project_id(value: Any, *, field: str = "id") -> str:
    if not isinstance(value, str) or not PROJECT_ID_RE.fullmatch(value):
        raise invalid(
            f"{field} must be 1 to 63 lowercase letters, digits or hyphens, starting with a letter or digit",
            field=field,
        )
    return value


def optional_project_id(value: Any, *, field: str) -> str | None:
    return None if value is None else project_id(value, field=field)


def agent_id(value: Any, *, field: str = "id") -> str:
    if not isinstance(value, str) or not AGENT_ID_RE.fullmatch(value):
        raise invalid(
            f"{field} must be 1 to 57 lowercase letters, digits or hyphens, starting with a letter or digit",
            field=field,
        )
    return value


def string(value: Any, *, field: str, blank: bool = False) -> str:
    """A string as sent (not trimmed: the caller decides what is stored); blank refused unless `blank`."""
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string", field=field)
    if not blank and not value.strip():
        raise invalid(f"{field} must not be blank", field=field)
    return value


def optional_string(value: Any, *, field: str, blank: bool = False) -> str | None:
    return None if value is None else string(value, field=field, blank=blank)


def label(value: Any, *, field: str, max_chars: int) -> str:
    """Trimmed, non-blank, at most `max_chars` characters after trimming, no control character."""
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string", field=field)
    text = value.strip()
    if not text or len(text) > max_chars or not is_label(text):
        raise invalid(f"{field} must be one line of 1 to {max_chars} characters without control characters",
                      field=field, limit=max_chars)
    return text


def display_name(value: Any, *, field: str = "display_name") -> str:
    return label(value, field=field, max_chars=DISPLAY_NAME_MAX)


def optional_display_name(value: Any, *, field: str = "display_name") -> str | None:
    return None if value is None else display_name(value, field=field)


def integer(value: Any, *, field: str, minimum: int = -INT64_MAX, maximum: int = INT64_MAX) -> int:
    """A JSON integer within bounds; booleans and floats (1.0 and 1e300 too) are refused."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise invalid(f"{field} must be an integer from {minimum} to {maximum}", field=field)
    return value


def boolean(value: Any, *, field: str) -> bool:
    if not isinstance(value, bool):
        raise invalid(f"{field} must be true or false", field=field)
    return value


def optional_boolean(value: Any, *, field: str, default: bool) -> bool:
    return default if value is None else boolean(value, field=field)


def choice(value: Any, options: tuple[str, ...], *, field: str) -> str:
    # The type is checked first: an unhashable value ([] or {}) must never reach a lookup.
    if not isinstance(value, str) or value not in options:
        raise invalid(f"{field} must be one of {', '.join(options)}", field=field)
    return value


def optional_choice(value: Any, options: tuple[str, ...], *, field: str, default: str) -> str:
    return default if value is None else choice(value, options, field=field)
