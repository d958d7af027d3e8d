"""The knowledge base as the `kb` commands reach it: the REST routes of the hub at `HUB_URL`, or the
knowledge base service on the local data directory. Both answer the same JSON-ready dicts (the REST
routes render the service's answers), so the commands print them one way.

Paths given here are canonical (`/fs/...`, see `page_arg`); a hub refusal is a `CliFailure`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import quote

from hubcli import exits
from hubcli.client import CliFailure
from hubcore.errors import HubError
from hubcore.services.kb.paths import directory, page_path

if TYPE_CHECKING:
    from hubcli.rest import Rest
    from hubcore.caller import Caller
    from hubcore.config import Settings
    from hubcore.hub import Hub

T = TypeVar("T")
ROOT = "/fs/"


def page_arg(raw: str, *, is_directory: bool = False) -> str:
    """The canonical path a command's argument names. A path outside `/fs` is relative to it
    (`notes/a.md`, `/notes/a.md` and `/fs/notes/a.md` all name `/fs/notes/a.md`; `/kv/x` names
    `/fs/kv/x`). A path the hub would refuse is a usage error (exit 2) before anything is sent."""
    bare = raw.lstrip("/")
    full = "/" + bare if bare == "fs" or bare.startswith("fs/") else ROOT + bare
    try:
        return directory(full) if is_directory else page_path(full)
    except HubError as exc:
        raise CliFailure(exits.USAGE, f"{exc.code}: {exc.message}") from None


def lint_line(finding: dict[str, Any]) -> str:
    """`lint <code> <path>:<line>: <message>` (without `:<line>` when the finding has none): how
    `kb put` and `kb import` print a lint finding."""
    where = finding["path"] if finding.get("line") is None else f"{finding['path']}:{finding['line']}"
    return f"lint {finding['code']} {where}: {finding['message']}"


class Kb(Protocol):
    """One project's knowledge base."""

    @property
    def project(self) -> str: ...

    async def read(self, path: str, version: str | None = None) -> dict[str, Any]: ...
    async def write(self, path: str, content: str, if_version: str | None) -> dict[str, Any]: ...
    async def listing(self, prefix: str, *, meta: bool = False) -> dict[str, Any]: ...
    async def delete(self, path: str, if_version: str | None) -> dict[str, Any]: ...
    async def versions(self, path: str, before: int | None) -> dict[str, Any]: ...
    async def revert(self, path: str, version: str, if_version: str | None) -> dict[str, Any]: ...
    async def forget(self, path: str) -> dict[str, Any]: ...


def _some(**members: Any) -> dict[str, Any]:
    return {k: v for k, v in members.items() if v is not None}


@dataclass(frozen=True)
class RestKb:
    """The routes `/api/v1/projects/{id}/kb/...` (spec: Knowledge base routes)."""

    rest: Rest
    project: str

    def _url(self, tail: str) -> str:
        return f"/projects/{quote(self.project, safe='')}/kb/{tail}"

    def _page(self, path: str, tail: str = "") -> str:
        # The URL form drops the leading slash; `fs/` is kept so the path reads the same whatever
        # its first component is called.
        return self._url("pages/" + quote(path.lstrip("/"), safe="/") + tail)

    async def read(self, path: str, version: str | None = None) -> dict[str, Any]:
        return dict(await self.rest.json("GET", self._page(path), params=_some(version=version)))

    async def write(self, path: str, content: str, if_version: str | None) -> dict[str, Any]:
        # Sent as text/markdown: the page's bytes as they are, never inflated by JSON escapes.
        return dict(
            await self.rest.json(
                "PUT",
                self._page(path),
                params=_some(if_version=if_version),
                content=content.encode("utf-8"),
                content_type="text/markdown; charset=utf-8",
            )
        )

    async def listing(self, prefix: str, *, meta: bool = False) -> dict[str, Any]:
        params = _some(prefix=prefix, limit=500, meta=1 if meta else None)
        return dict(await self.rest.json("GET", self._url("pages"), params=params))

    async def delete(self, path: str, if_version: str | None) -> dict[str, Any]:
        return dict(await self.rest.json("DELETE", self._page(path), params=_some(if_version=if_version)))

    async def versions(self, path: str, before: int | None) -> dict[str, Any]:
        params = _some(path=path, before=before, limit=200)
        return dict(await self.rest.json("GET", self._url("versions"), params=params))

    async def revert(self, path: str, version: str, if_version: str | None) -> dict[str, Any]:
        body = _some(version=version, if_version=if_version)
        return dict(await self.rest.json("POST", self._page(path, "/revert"), json=body))

    async def forget(self, path: str) -> dict[str, Any]:
        return dict(await self.rest.json("DELETE", self._url("versions"), params={"path": path}))


@dataclass(frozen=True)
class LocalKb:
    """The knowledge base service of a hub opened on the local data directory."""

    hub: Hub
    caller: Caller
    project: str

    def _req(self, model: Any, **members: Any) -> Any:
        from hubcore.services.requests import parse

        return parse(model, {"project_id": self.project, **members})

    async def read(self, path: str, version: str | None = None) -> dict[str, Any]:
        from hubcore.services.kb.models import KbRead

        return await self.hub.kb.read(self.caller, self._req(KbRead, path=path, version=version))

    async def write(self, path: str, content: str, if_version: str | None) -> dict[str, Any]:
        from hubcore.services.kb.models import KbWrite

        req = self._req(KbWrite, path=path, content=content, if_version=if_version)
        return await self.hub.kb.write(self.caller, req)

    async def listing(self, prefix: str, *, meta: bool = False) -> dict[str, Any]:
        from hubcore.services.kb.models import KbList

        return await self.hub.kb.list(self.caller, self._req(KbList, prefix=prefix, meta=meta))

    async def delete(self, path: str, if_version: str | None) -> dict[str, Any]:
        from hubcore.services.kb.models import KbDelete

        req = self._req(KbDelete, path=path, if_version=if_version)
        return await self.hub.kb.delete(self.caller, req)

    async def versions(self, path: str, before: int | None) -> dict[str, Any]:
        from hubcore.services.kb.models import HISTORY_MAX, KbVersions

        req = self._req(KbVersions, path=path, before=before, limit=HISTORY_MAX)
        return await self.hub.kb.versions(self.caller, req)

    async def revert(self, path: str, version: str, if_version: str | None) -> dict[str, Any]:
        from hubcore.services.kb.models import KbRevert

        req = self._req(KbRevert, path=path, version=version, if_version=if_version)
        return await self.hub.kb.revert(self.caller, req)

    async def forget(self, path: str) -> dict[str, Any]:
        from hubcore.services.kb.models import KbForget

        return await self.hub.kb.forget(self.caller, self._req(KbForget, path=path))


def hub_code(exc: BaseException) -> tuple[str, str] | None:
    """A hub refusal's `(code, message)`, whichever way it reached us (REST or the local service);
    None for anything else (unreachable, token refused)."""
    from hubcli.rest import HubRefused

    if isinstance(exc, HubRefused):
        return exc.refusal.code, exc.refusal.detail
    if isinstance(exc, HubError):
        return exc.code, exc.message
    return None


async def version_or_none(kb: Kb, path: str) -> str | None:
    """The page's version, or None when the hub holds no page there."""
    try:
        return str((await kb.read(path))["version"])
    except (HubError, CliFailure) as exc:
        found = hub_code(exc)
        if found is not None and found[0] == "not_found":
            return None
        raise


def run_kb(settings: Settings, project: str, work: Callable[[Kb], Awaitable[T]]) -> T:
    """Run `work` on the project's knowledge base where the settings point (REST with `HUB_URL`,
    else the local data directory); failures are `CliFailure`s."""
    import anyio

    if settings.client.url:
        from hubcli.rest import Rest

        rest = Rest.from_settings(settings)

        async def over_rest() -> T:
            async with rest.session() as kept:
                return await work(RestKb(kept, project))

        return anyio.run(over_rest)
    from hubcli.local import with_hub

    return with_hub(settings, lambda hub, caller: work(LocalKb(hub, caller, project)))
