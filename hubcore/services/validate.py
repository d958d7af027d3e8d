"""The id patterns, label and line rules the typed requests (`fields`) are built from, and the
checks still used by operations not yet converted to a typed request.

Every check names the member it refuses (in the message and in `details.field`) and raises before
anything is written. Text that is stored trimmed is trimmed before its length is checked, so the
limit applies to what is kept.
"""

from __future__ import annotations

import re
from typing import Any

from hubcore.errors import invalid

PROJECT_ID_MAX = 63
PROJECT_ID_RE = re.compile(rf"[a-z0-9][a-z0-9-]{{0,{PROJECT_ID_MAX - 1}}}")
# An agent's personal space is `space-<agent id>`, which must itself be a project id.
AGENT_ID_MAX = PROJECT_ID_MAX - len("space-")
AGENT_ID_RE = re.compile(rf"[a-z0-9][a-z0-9-]{{0,{AGENT_ID_MAX - 1}}}")
DISPLAY_NAME_MAX = 200
PERSONAL_PREFIX = "space-"
RESERVED_AGENT_IDS = frozenset({"hub", "human", "public"})

# Every character `str.splitlines` breaks on (CR, LF, VT, FF, the file/group/record separators,
# NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR), and NUL, which no stored text may carry.
NOT_ONE_LINE_RE = re.compile("[\x00\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
# A label (a display name, a session name, a question option) carries no control character at all:
# C0 (tab included), DEL, C1, and the two Unicode line separators.
NOT_LABEL_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(value: str) -> bool:
    """No line separator of any kind and no NUL."""
    return NOT_ONE_LINE_RE.search(value) is None


def is_label(value: str) -> bool:
    return NOT_LABEL_RE.search(value) is None


def project_id(value: Any, *, field: str = "id") -> str:
    if not isinstance(value, str) or not PROJECT_ID_RE.fullmatch(value):
        raise invalid(
            f"{field} must be 1 to 63 lowercase letters, digits or hyphens, starting with a letter or digit",
            field=field,
        )
    return value


def agent_id(value: Any, *, field: str = "id") -> str:
    if not isinstance(value, str) or not AGENT_ID_RE.fullmatch(value):
        raise invalid(
            f"{field} must be 1 to 57 lowercase letters, digits or hyphens, starting with a letter or digit",
            field=field,
        )
    return value


def label(value: Any, *, field: str, max_chars: int) -> str:
    """Trimmed, non-blank, at most `max_chars` characters after trimming, no control character."""
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string", field=field)
    text = value.strip()
    if not text or len(text) > max_chars or not is_label(text):
        raise invalid(
            f"{field} must be one line of 1 to {max_chars} characters without control characters",
            field=field,
            limit=max_chars,
        )
    return text
