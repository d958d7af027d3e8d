"""Checks on request values shared by every service: ids, display names, body shapes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hubcore.errors import invalid

PROJECT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
# An agent's personal space is `space-<agent id>`, which must itself be a project id.
AGENT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,56}$")
DISPLAY_NAME_MAX = 200
PERSONAL_PREFIX = "space-"
RESERVED_AGENT_IDS = frozenset({"hub", "human", "public"})


def one_line(value: str) -> bool:
    return not any(c in value for c in "\r\n\x00")


def body_object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise invalid("request body must be a JSON object")
    return body


def project_id(value: Any, *, field: str = "id") -> str:
    if not isinstance(value, str) or not PROJECT_ID_RE.match(value):
        raise invalid(
            f"{field} must be 1 to 63 lowercase letters, digits or hyphens, starting with a letter or digit",
            field=field,
        )
    return value


def agent_id(value: Any, *, field: str = "id") -> str:
    if not isinstance(value, str) or not AGENT_ID_RE.match(value):
        raise invalid(
            f"{field} must be 1 to 57 lowercase letters, digits or hyphens, starting with a letter or digit",
            field=field,
        )
    return value


def display_name(value: Any, *, field: str = "display_name") -> str:
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string", field=field)
    name = value.strip()
    if not name or len(name) > DISPLAY_NAME_MAX or any(c in name for c in "\r\n\x00"):
        raise invalid(f"{field} must be one line of 1 to {DISPLAY_NAME_MAX} characters", field=field)
    return name


def boolean(value: Any, *, field: str) -> bool:
    if not isinstance(value, bool):
        raise invalid(f"{field} must be true or false", field=field)
    return value


def choice(value: Any, options: tuple[str, ...], *, field: str) -> str:
    if value not in options:
        raise invalid(f"{field} must be one of {', '.join(options)}", field=field)
    return str(value)
