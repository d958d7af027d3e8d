"""The hub's error family.

Every refusal the domain makes is a `HubError` carrying one of the spec's codes. Adapters render
it: REST as an RFC 9457 problem, MCP as a structured tool error. Nothing else is raised on purpose.
"""

from __future__ import annotations

import errno
import sqlite3
from typing import Any, Final

# The hub codes and their HTTP statuses (DESIGN section 4).
STATUS_BY_CODE: Final[dict[str, int]] = {
    "invalid_argument": 400,
    "unauthenticated": 401,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "payload_too_large": 413,
    "unsupported_media_type": 415,
    "unprocessable": 422,
    "rate_limited": 429,
    "internal": 500,
    "unavailable": 503,
}


class HubError(Exception):
    """A refusal with a hub error code; the request changed nothing.

    `code` is one of `STATUS_BY_CODE`. `status` may differ from the code's usual status where the
    spec says so (415 and 422 carry their own statuses while the code stays `invalid_argument`).
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        retryable: bool = False,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        if code not in STATUS_BY_CODE:
            raise ValueError(f"unknown hub error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.retryable = retryable
        self.status = status if status is not None else STATUS_BY_CODE[code]
        self.headers = headers or {}

    def __repr__(self) -> str:
        return f"HubError({self.code!r}, {self.message!r})"


QUOTE_MAX: Final = 80


def shown(text: str) -> str:
    """A caller's text as a message may show it: cut to QUOTE_MAX characters, so an error never
    echoes a large offending value back."""
    return text if len(text) <= QUOTE_MAX else text[: QUOTE_MAX - 3] + "..."


def quoted(value: Any) -> str:
    """A caller's value's repr, cut like `shown`."""
    return shown(repr(value))


def invalid(message: str, **details: Any) -> HubError:
    return HubError("invalid_argument", message, details=details or None)


def not_found(message: str) -> HubError:
    return HubError("not_found", message)


def conflict(message: str, **details: Any) -> HubError:
    return HubError("conflict", message, details=details or None)


def forbidden(message: str) -> HubError:
    return HubError("forbidden", message)


def too_large(message: str, **details: Any) -> HubError:
    return HubError("payload_too_large", message, details=details or None)


def unavailable(message: str, **details: Any) -> HubError:
    return HubError("unavailable", message, details=details or None, retryable=True)


# A full volume: the OS says ENOSPC (or EDQUOT past a quota); SQLite says SQLITE_FULL.
FULL_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT})
SQLITE_FULL: Final = 13


def is_volume_full(exc: BaseException | None) -> bool:
    """Whether `exc` (or what it was raised from) is the data volume running out of space."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
            return True
        if isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == SQLITE_FULL:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def volume_full(cause: BaseException | None = None) -> HubError:
    """The spec's retryable `unavailable` for a write the full volume refused: nothing of it was
    kept, and the same call succeeds once space returns."""
    err = unavailable("the hub's data volume is full; nothing was written; free space and retry", reason="volume_full")
    err.__cause__ = cause
    return err


def refusal_of(exc: BaseException) -> BaseException:
    """`exc` as a caller should see it: a full volume becomes `volume_full`, anything else stays."""
    if isinstance(exc, HubError) or not is_volume_full(exc):
        return exc
    return volume_full(exc)


class StoreClosed(Exception):
    """The store actor was closed; the command was not run.

    Raised for every call made after `aclose()` began. Not raised for commands that were already
    queued when close began: close drains those and answers them.
    """


class StoreBroken(Exception):
    """The store actor died; its `__cause__` is the failure.

    Raised to every caller waiting on the actor when it died and to every later caller. Not raised
    for an ordinary failing command: that command gets its own exception and the actor keeps going.
    """
