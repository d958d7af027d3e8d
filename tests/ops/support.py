"""A real hub's data directory, written through the services and closed, for the check and doctor
tests to damage; and helpers to read what the commands found."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.ops.findings import Finding
from hubcore.services.requests import parse
from hubcore.services.search.models import SearchRequest
from tests.backup.support import populate
from tests.harness import test_settings


@dataclass(frozen=True)
class Made:
    """A closed data directory holding one of every store file."""

    root: Path
    settings: HubSettings
    session_id: str
    artifact_id: str
    blob: str

    @property
    def brain(self) -> Path:
        return self.root / "brains" / f"{self.session_id}.db"

    @property
    def kb(self) -> Path:
        return self.root / "kb" / "web.db"

    @property
    def blob_path(self) -> Path:
        return self.root / "blobs" / self.blob[:2] / self.blob


async def make_hub_dir(root: Path, *, searched: bool = True) -> Made:
    """Open a hub on `root`, write one of everything through the services (a search, when
    `searched`, so the index holds every source), and close it."""
    settings = test_settings(root)
    async with Hub.open(settings, clock=FakeClock()) as hub:
        made = await populate(hub)
        if searched:
            await hub.search.search(Caller.admin(), parse(SearchRequest, {"q": "remember"}))
    return Made(root, settings, made["session_id"], made["artifact_id"], made["blob"])


def problem_lines(findings: list[Finding]) -> list[str]:
    return [str(f) for f in findings if f.problem]


def readings(findings: list[Finding]) -> dict[str, str]:
    return {f.subject: f.message for f in findings if not f.problem}
