"""The Quart application: blueprints by resource and one error shape for everything."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from quart import Quart, Request, Response
from quart.routing import QuartRule
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from hubcore import __version__
from hubcore.errors import HubError, is_volume_full, volume_full
from hubcore.metrics import HubMetrics
from hubhttp import bootstrap, openapi
from hubhttp.api import (
    agents,
    artifacts,
    enrol,
    feed,
    inbox,
    kb,
    limits,
    projects,
    push,
    search,
    sessions,
    storage,
    stream,
)
from hubhttp.api.backups import bp as backups_bp
from hubhttp.context import HUB_KEY
from hubhttp.pages import routes as pages
from hubhttp.pages.assets import assets
from hubhttp.probes import bp as probes_bp
from hubhttp.problems import PROBLEM_TYPE, count_failure, from_error, problem_body
from hubhttp.webapp import bp as webapp_bp
from hubhttp.webapp import shell

log = logging.getLogger("hubhttp")

CODE_BY_STATUS = {
    400: "invalid_argument",
    401: "unauthenticated",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "invalid_argument",
}


def _metrics(app: Quart) -> HubMetrics | None:
    hub = app.extensions.get(HUB_KEY)
    return hub.metrics if hub is not None else None


class LazyRule(QuartRule):
    """A URL rule whose two URL builders (Python code werkzeug generates and compiles for each rule as
    it is added: most of the cost of building the app) are compiled on first use. The hub builds no
    URL from its rules, so neither a serving hub nor a test's app pays for them."""

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        compiled: Callable[..., tuple[str, str]] | None = None

        def build(rule: LazyRule, *args: Any, **values: Any) -> tuple[str, str]:
            nonlocal compiled
            if compiled is None:
                compiled = QuartRule._compile_builder(rule, append_unknown)
            return compiled(rule, *args, **values)

        return build


class HubRequest(Request):
    """A request that works out its blueprints' names once. Quart asks for them several times a
    request to look up hooks (before, after, teardown), each time splitting the endpoint's name
    anew: about a quarter of what the hub cost a no-op request over a bare app (docs/benchmarks.md,
    fourteenth session). Kept per matched rule, which is set after the request is made."""

    # (the rule the names were worked out for, the names): the default names no rule, so a
    # request works them out on its first look
    _blueprints: tuple[object, list[str]] = (object(), [])

    @property
    def blueprints(self) -> list[str]:
        rule = self.url_rule
        if self._blueprints[0] is not rule:
            self._blueprints = (rule, Request.blueprints.fget(self))  # type: ignore[attr-defined]
        return self._blueprints[1]


def create_app() -> Quart:
    app = Quart("agent_hub", static_folder=None)  # no implicit /static route outside the access table
    app.url_rule_class = LazyRule
    app.request_class = HubRequest
    app.config["MAX_CONTENT_LENGTH"] = None  # the gate enforces the limit while streaming
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False
    for bp in (
        probes_bp,
        projects.bp,
        agents.bp,
        enrol.bp,
        sessions.bp,
        storage.bp,
        feed.bp,
        inbox.bp,
        kb.bp,
        artifacts.bp,
        search.bp,
        stream.bp,
        bootstrap.bp,
        openapi.bp,
        pages.bp,
        limits.bp,
        push.bp,
    ):
        app.register_blueprint(bp)
    app.register_blueprint(backups_bp)
    app.register_blueprint(webapp_bp)  # the web app at / (hubhttp.webapp)
    openapi.install(app, __version__)  # after every blueprint: the document is the whole URL map
    assets()  # the pages' files are read now, not on a request's path
    shell()  # and so are the web app's

    @app.errorhandler(HubError)
    async def hub_error(err: HubError) -> Response:
        status, headers, body = from_error(err)
        count_failure(_metrics(app), err.code)
        return Response(body, status=status, headers=headers, content_type=PROBLEM_TYPE)

    @app.errorhandler(HTTPException)
    async def http_error(err: HTTPException) -> Response:
        status = err.code or 500
        code = CODE_BY_STATUS.get(status, "internal" if status >= 500 else "invalid_argument")
        headers: dict[str, str] = {}
        detail = err.description or "request refused"
        if isinstance(err, MethodNotAllowed) and err.valid_methods:
            allowed = ", ".join(sorted(m for m in err.valid_methods if m != "OPTIONS"))
            headers["Allow"] = allowed
            detail = f"this route serves {allowed}"
        elif status == 404:
            detail = "no such route"
        count_failure(_metrics(app), code)
        return Response(problem_body(status, code, detail), status=status, headers=headers, content_type=PROBLEM_TYPE)

    @app.errorhandler(Exception)
    async def unexpected(err: Exception) -> Response:
        if is_volume_full(err):  # a file write the services did not name: still the retryable 503
            return await hub_error(volume_full(err))
        log.exception("unhandled error", exc_info=err)
        count_failure(_metrics(app), "internal")
        return Response(
            problem_body(500, "internal", "the hub failed to answer this request"),
            status=500,
            content_type=PROBLEM_TYPE,
        )

    return app
