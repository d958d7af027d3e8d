"""Who may call what: access decided from the route that will actually run.

The gate does not judge a path by its spelling. It matches the request against the Quart app's own
URL map, with the same matcher and on the same path value the router dispatches on, and looks the
matched endpoint up in `ENDPOINT_ACCESS`. An endpoint missing from the table is admin-only, and so is
a path that matches nothing, so a route added without an entry is closed and probing the control
surface without a token learns nothing. Routes served outside Quart (`/mcp`) are named by the
composition root.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any
from urllib.parse import urlparse

from quart import Quart
from werkzeug.exceptions import MethodNotAllowed, NotFound
from werkzeug.routing import Map, RequestRedirect, Rule


class Access(Enum):
    PUBLIC = "public"
    TOKEN = "token"  # the admin token or any active agent token
    ADMIN = "admin"


# Strictest last: a path served under several access levels is judged by the strictest.
STRICTNESS = (Access.PUBLIC, Access.TOKEN, Access.ADMIN)

# Endpoints open to more than the admin. Everything else (and anything unmatched) is admin-only.
ENDPOINT_ACCESS: Mapping[str, Access] = {
    "probes.healthz": Access.PUBLIC,
    "probes.readyz": Access.PUBLIC,
    "bootstrap.bootstrap_skill": Access.PUBLIC,
    "openapi.openapi_document": Access.PUBLIC,
    "projects.list_projects": Access.TOKEN,
    "limits.get_limits": Access.TOKEN,
    "projects.create_project": Access.TOKEN,
    "stream.stream": Access.TOKEN,
    # The public artifact pages (the artifact id or a share token is the capability) and their files.
    "pages.artifact_page": Access.PUBLIC,
    "pages.artifact_frame": Access.PUBLIC,
    "pages.artifact_card": Access.PUBLIC,
    "pages.share_page": Access.PUBLIC,
    "pages.share_frame": Access.PUBLIC,
    "pages.share_card": Access.PUBLIC,
    "pages.asset": Access.PUBLIC,
    # Self-enrolment: asking and the status poll (which reads the pending token itself).
    "enrol.enrol": Access.PUBLIC,
    "enrol.enrol_status": Access.PUBLIC,
    # A push notification's button: the capability in the body is the whole authority (the service
    # worker holds no token); the service checks it, and it resolves one item once.
    "push.act": Access.PUBLIC,
    # The web app's static files (it asks for the admin token on its Connect screen).
    "webapp.index": Access.PUBLIC,
    "webapp.service_worker": Access.PUBLIC,
    "webapp.manifest": Access.PUBLIC,
    "webapp.app_file": Access.PUBLIC,
}


def strictest(levels: list[Access]) -> Access:
    return max(levels, key=STRICTNESS.index, default=Access.ADMIN)


def dispatch_path(scope: Mapping[str, Any]) -> str:
    """The path Quart routes on: the scope's path (the path part of an absolute-form target),
    with the root path taken off the way Quart takes it off."""
    path = str(scope["path"])
    path = path if path.startswith("/") else urlparse(path).path
    root = str(scope.get("root_path", ""))
    if root:
        # Quart answers a path outside its root with a path that matches nothing.
        return " " if path == root or not path.startswith(root) else path.removeprefix(root)
    return path


KNOWN_MAX = 4096


class RouteAccess:
    """The access a request needs, from the endpoint the app's URL map will dispatch it to."""

    def __init__(
        self, app: Quart, outside: Mapping[str, Access], table: Mapping[str, Access] = ENDPOINT_ACCESS
    ) -> None:
        self._map: Map = app.url_map
        self._outside = dict(outside)  # exact paths routed before Quart sees the request
        self._table = table
        # Answers by (method, root, path): matching the URL map costs every request (Quart matches
        # it again to dispatch). Bounded: paths carry ids; the oldest answer goes first. Dropped
        # when the URL map changes: werkzeug marks the map for re-sorting on every rule added, and
        # the endpoints are counted (a dict's size, where counting the rules builds a list of
        # them, 10 us a request).
        self._known: dict[tuple[str, str, str], Access] = {}
        self._endpoints = -1

    def __call__(self, scope: Mapping[str, Any]) -> Access:
        outside = self._outside.get(str(scope["path"]))
        if outside is not None:
            return outside
        key = (str(scope["method"]), str(scope.get("root_path", "")), dispatch_path(scope))
        endpoints = len(self._map._rules_by_endpoint)
        if self._map._remap or endpoints != self._endpoints:
            self._map.update()  # the re-sort a match would do; it clears the mark
            self._known.clear()
            self._endpoints = endpoints
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = self.for_path(key[2], key[0], key[1])
            if len(self._known) > KNOWN_MAX:
                del self._known[next(iter(self._known))]
        return known

    def for_path(self, path: str, method: str, root: str = "") -> Access:
        adapter = self._map.bind("hub.invalid", script_name=root or None, path_info=path, default_method=method)
        try:
            rule, _ = adapter.match(return_rule=True)
        except MethodNotAllowed as refused:
            # The 405 would confirm the path exists: only a caller allowed on the path sees it.
            return strictest([self._endpoint_access(adapter, m) for m in refused.valid_methods or []])
        except (NotFound, RequestRedirect):
            return Access.ADMIN
        return self._rule_access(rule)

    def _endpoint_access(self, adapter: Any, method: str) -> Access:
        try:
            rule, _ = adapter.match(method=method, return_rule=True)
        except (NotFound, MethodNotAllowed, RequestRedirect):
            return Access.ADMIN
        return self._rule_access(rule)

    def _rule_access(self, rule: Rule) -> Access:
        return self._table.get(str(rule.endpoint), Access.ADMIN)
