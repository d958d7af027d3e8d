"""Query strings, read one way by every REST route (and described the same way in the OpenAPI
document, `hubhttp.api.docs`).

A parameter is given once (a second is refused naming it; `kind` alone may repeat); an empty value
is a value like any other, so the route's model judges it (`since=` is not "no cursor"); integers
are ASCII digits with an optional minus sign; a flag is spelled `true`/`1` or `false`/`0`, lowercase,
and nothing else; a member the route does not take is refused by its model (the models forbid
unknown members). Members named twice across the path, the query and the body are refused too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from quart import request

from hubcore.errors import HubError

INTEGER = re.compile(r"-?[0-9]{1,40}")  # the model judges the range; 40 digits bound the parse
FLAGS: Mapping[str, bool] = {"true": True, "1": True, "false": False, "0": False}
# A flag as the document states it: the one spelling the routes read.
FLAG_SCHEMA: Mapping[str, Any] = {
    "type": "string",
    "enum": list(FLAGS),
    "description": "a flag: true or 1, false or 0 (lowercase)",
}


def _refused(name: str, message: str) -> HubError:
    shown = name[:64]
    return HubError("invalid_argument", f"query {shown} {message}", details={"field": shown})


def integer(name: str, raw: str) -> int:
    if not INTEGER.fullmatch(raw):
        raise _refused(name, "must be an integer")
    return int(raw)


def flag(name: str, raw: str) -> bool:
    found = FLAGS.get(raw)
    if found is None:
        raise _refused(name, "must be true or 1, false or 0")
    return found


def query(
    *,
    integers: Iterable[str] = (),
    flags: Iterable[str] = (),
    repeats: Iterable[str] = (),
    renamed: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The query string typed as the route's model takes it: `integers` as int, `flags` as bool,
    `repeats` as a list when given more than once (else the one string); every other value stays
    the string it was, for the model to judge. `renamed` maps a query name to the model's."""
    ints, bools, lists = frozenset(integers), frozenset(flags), frozenset(repeats)
    out: dict[str, Any] = {}
    for name in request.args:
        values = request.args.getlist(name)
        if len(values) > 1 and name not in lists:
            raise _refused(name, "given more than once")
        raw = values[0]
        if name in ints:
            value: Any = integer(name, raw)
        elif name in bools:
            value = flag(name, raw)
        elif len(values) > 1:
            value = values
        else:
            value = raw
        out[(renamed or {}).get(name, name)] = value
    return out


def merged(*sources: Mapping[str, Any]) -> dict[str, Any]:
    """The members of several sources (path, query, body); one named twice is refused."""
    out: dict[str, Any] = {}
    for source in sources:
        for name, value in source.items():
            if name in out:
                raise HubError(
                    "invalid_argument", f"{name[:64]} given twice (once is enough)", details={"field": name[:64]}
                )
            out[name] = value
    return out


def no_query() -> None:
    """For a route that takes no query parameter: any is refused, naming it."""
    for name in request.args:
        raise HubError(
            "invalid_argument", f"query {name[:64]}: this route takes no query parameters", details={"field": name[:64]}
        )
