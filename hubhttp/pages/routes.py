"""The public artifact pages: `/artifacts/:id` and `/s/:token`, each with `/frame` and `/og.svg`,
and `/assets/<name>`.

Public routes (anyone holding the address): the artifact id is the capability, and a share link's
token is another, pinned to one version. While a link is live, the artifact's own page, frame and
card answer the missing artifact's 404 unless `?pass=` holds the admin's viewer pass, which the
shell carries on into the frame's address (`hub.shares.page_open`). The page is the shell; the
artifact's bytes reach the browser only through the frame, served with its own CSP and sandbox
(`templates.frame_csp`): HTML as stored, markdown rendered here (`hubhttp.pages.markdown`), a
protected version as the loader document the shell hands the decrypted text to. `?version=N` picks
a version on the artifact's routes.
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import quote

from quart import Blueprint, Response, request

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.services.artifacts import ArtifactGet, ArtifactRef
from hubcore.services.requests import parse
from hubhttp.bootstrap import caller_origin
from hubhttp.context import hub
from hubhttp.pages import templates
from hubhttp.pages.assets import IMMUTABLE, assets
from hubhttp.pages.diffpage import diff_page
from hubhttp.pages.markdown import render
from hubhttp.problems import PROBLEM_TYPE, count_failure, from_error

bp = Blueprint("pages", __name__)

PAGE_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
# The shell is a top-level page: no other site's window keeps a handle on it (COOP), and no other
# site loads it or its frame as a resource (CORP). The card stays loadable anywhere: previews.
SHELL_HEADERS = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Resource-Policy": "same-origin"}
FRAME_HEADERS = {"Cross-Origin-Resource-Policy": "same-origin"}


def version_arg() -> int | None:
    raw = request.args.get("version")
    if raw is None or raw == "":
        return None
    if not raw.isdigit():
        raise HubError("invalid_argument", "query version must be a whole number", details={"field": "version"})
    return int(raw)


async def artifact(artifact_id: str, version: int | None) -> dict[str, Any]:
    req = parse(ArtifactGet, {"artifact_id": artifact_id, "version": version})
    return await hub().artifacts.get(Caller.public(), req)


async def opened(artifact_id: str) -> tuple[dict[str, Any], str | None]:
    """The artifact at `?version=` (else its current version) and the viewer pass that opened it;
    the missing artifact's 404 while a share link is live and no valid pass was sent."""
    pass_ = request.args.get("pass") or None
    await hub().shares.page_open(artifact_id, pass_)
    return await artifact(artifact_id, version_arg()), pass_


async def shared(token: str) -> dict[str, Any]:
    """The version a live share link is pinned to; the one 404 for an unknown or revoked token."""
    artifact_id, version = await hub().shares.shared(token)
    return await artifact(artifact_id, version)


async def sealed_versions(artifact_id: str, shown: int) -> list[int]:
    """The versions the picker offers: every sealed one, and the one shown (a live draft's link)."""
    found = await hub().artifacts.versions(Caller.public(), parse(ArtifactRef, {"artifact_id": artifact_id}))
    return [v["version"] for v in found["versions"] if not v["live"] or v["version"] == shown]


def public_origin() -> str:
    """Where link previews fetch the card from: HUB_PUBLIC_URL when set, else this request's origin."""
    configured = hub().settings.public_url
    return configured.rstrip("/") if configured else caller_origin()


def html_response(body: str, csp: str) -> Response:
    return Response(
        body,
        status=200,
        content_type="text/html; charset=utf-8",
        headers={**PAGE_HEADERS, **SHELL_HEADERS, "Content-Security-Policy": csp},
    )


def shell_response(found: dict[str, Any], *, key: str, versions: list[int], frame: str, card: str) -> Response:
    """The shell; `key` names the page to the browser (where a remembered key is kept), so a share
    page does not tell its viewers the artifact's id."""
    shell = templates.Shell(
        artifact_id=key,
        title=found["title"],
        description=found.get("description") or "",
        kind=found["kind"],
        version=found["version"],
        versions=versions,
        label=found.get("label"),
        updated_at=str(found.get("updated_at") or ""),
        frame=frame,
        og_image=f"{public_origin()}{card}",
        protected=bool(found["protected"]),
        live=bool(found.get("live")),
        content=found["content"] if found["protected"] else "",
        envelope=found["envelope"],
    )
    return html_response(templates.shell_page(shell), templates.SHELL_CSP)


async def frame_response(found: dict[str, Any]) -> Response:
    """The frame's document. An HTML artifact's own scripts run only where the human turned them
    on (`hub.scripts`); until then the one script that runs is the hub's, pinned by its hash, which
    tells the viewer what the reader selected. A markdown frame holds the hub's scripts alone (the
    agent's HTML is escaped)."""
    origin = caller_origin()
    scripts = found["kind"] != "html" or await hub().scripts.allowed(found["id"])
    if found["protected"]:
        # The loader is the hub's script: it writes the decrypted document in place of itself.
        body = templates.loader_frame()
        csp = templates.frame_csp(origin, scripts=scripts, hub_script=templates.LOADER_SCRIPT)
    elif found["kind"] == "markdown":
        body = templates.markdown_frame(render(found["content"]), found["title"], origin)
        csp = templates.frame_csp(origin)
    elif found["kind"] == "diff":  # built by the hub, escaped, with no script at all
        body, csp = diff_page(found["content"], found["title"]), templates.frame_csp(origin, scripts=False)
    else:
        body = templates.html_frame(found["content"])
        csp = templates.frame_csp(origin, scripts=scripts, hub_script=templates.SELECTION_SCRIPT)
    return Response(
        body,
        status=200,
        content_type="text/html; charset=utf-8",
        headers={**PAGE_HEADERS, **FRAME_HEADERS, "Content-Security-Policy": csp},
    )


def wants_html() -> bool:
    """A browser opening the page (or its frame) asks for HTML first; a client that does not gets
    the problem document every other route answers."""
    accepted = request.accept_mimetypes
    return accepted.quality("text/html") > accepted.quality("application/json")


@bp.errorhandler(HubError)
async def page_error(err: HubError) -> Response:
    """A page or frame that cannot be shown reads as a sentence in a browser, with the status kept;
    the card, the assets and non-browser clients get the problem document."""
    path = request.path
    count_failure(hub().metrics, err.code)
    if err.status not in (400, 404) or path.endswith("/og.svg") or path.startswith("/assets/") or not wants_html():
        status, headers, body = from_error(err)
        return Response(body, status=status, headers=headers, content_type=PROBLEM_TYPE)
    sentence = (
        templates.BAD_ADDRESS
        if err.status == 400
        else templates.MISSING_SHARE
        if path.startswith("/s/")
        else templates.MISSING_ARTIFACT
    )
    if path.endswith("/frame"):
        return Response(
            templates.missing_frame(sentence),
            status=err.status,
            content_type="text/html; charset=utf-8",
            headers={
                **PAGE_HEADERS,
                **FRAME_HEADERS,
                "Content-Security-Policy": templates.frame_csp(caller_origin(), scripts=False),
            },
        )
    return Response(
        templates.missing_page(sentence),
        status=err.status,
        content_type="text/html; charset=utf-8",
        headers={**PAGE_HEADERS, **SHELL_HEADERS, "Content-Security-Policy": templates.SHELL_CSP},
    )


def card_response(found: dict[str, Any]) -> Response:
    svg = templates.og_card(found["title"], found["kind"], found["version"], bool(found["protected"]))
    return Response(
        svg,
        status=200,
        content_type="image/svg+xml; charset=utf-8",
        headers={
            **PAGE_HEADERS,
            "Content-Security-Policy": templates.CARD_CSP,
            "Cross-Origin-Resource-Policy": "cross-origin",
        },
    )


def address(path: str, version: int | None, pass_: str | None = None) -> str:
    query = {"version": version, "pass": pass_}
    shown = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in query.items() if v is not None)
    return f"{path}?{shown}" if shown else path


@bp.get("/artifacts/<artifact_id>")
async def artifact_page(artifact_id: str) -> Response:
    found, pass_ = await opened(artifact_id)
    base = f"/artifacts/{quote(found['id'], safe='')}"
    # The card's address carries no pass: link previews fetch it from elsewhere, later.
    return shell_response(
        found,
        key=found["id"],
        versions=await sealed_versions(found["id"], found["version"]),
        frame=address(f"{base}/frame", found["version"], pass_),
        card=address(f"{base}/og.svg", version_arg()),
    )


@bp.get("/artifacts/<artifact_id>/frame")
async def artifact_frame(artifact_id: str) -> Response:
    return await frame_response((await opened(artifact_id))[0])


@bp.get("/artifacts/<artifact_id>/og.svg")
async def artifact_card(artifact_id: str) -> Response:
    return card_response((await opened(artifact_id))[0])


@bp.get("/s/<token>")
async def share_page(token: str) -> Response:
    found = await shared(token)
    base = f"/s/{quote(token, safe='')}"
    key = f"s/{hashlib.sha256(token.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
    return shell_response(found, key=key, versions=[], frame=f"{base}/frame", card=f"{base}/og.svg")


@bp.get("/s/<token>/frame")
async def share_frame(token: str) -> Response:
    return await frame_response(await shared(token))


@bp.get("/s/<token>/og.svg")
async def share_card(token: str) -> Response:
    return card_response(await shared(token))


@bp.get("/assets/<name>")
async def asset(name: str) -> Response:
    found = assets().by_name.get(name)
    if found is None:
        raise HubError("not_found", "no such asset")
    return Response(
        found.data,
        status=200,
        content_type=found.content_type,
        headers={"Cache-Control": IMMUTABLE, "X-Content-Type-Options": "nosniff"},
    )
