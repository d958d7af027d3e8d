"""Readiness: every leg the spec lists, each able to fail on its own and say which it is."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from hubcore.errors import HubError, StoreBroken, StoreClosed, unavailable
from hubcore.metrics import free_bytes
from hubcore.services.core import Core
from hubcore.store.migrations import STORE_KIND, read_version


@dataclass(frozen=True)
class Identity:
    device: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> Identity:
        st = os.stat(path)
        return cls(st.st_dev, st.st_ino)


class HealthService:
    def __init__(self, core: Core, *, opened_version: int, supported_version: int) -> None:
        self.core = core
        self.opened_version = opened_version
        self.supported_version = supported_version  # the newest of the parts' hub.db steps
        self.data_dir = core.settings.data_path
        self.db_path = self.data_dir / "hub.db"
        self.dir_identity = Identity.of(self.data_dir)
        self.db_identity = Identity.of(self.db_path)

    async def ready(self) -> dict[str, object]:
        """The legs' readings; raises `unavailable` naming the first leg that fails."""
        self._check_identity()
        version = await self._check_schema()
        await self._check_content()
        free = self._check_free_space()
        return {"status": "ready", "schema_version": version, "free_bytes": free}

    def _fail(self, leg: str, message: str) -> HubError:
        return unavailable(f"not ready: {message}", leg=leg)

    def _check_identity(self) -> None:
        for what, path, expected in (
            ("data_dir", self.data_dir, self.dir_identity),
            ("hub_db", self.db_path, self.db_identity),
        ):
            try:
                now = Identity.of(path)
            except OSError:
                raise self._fail("identity", f"{what} {path} is gone") from None
            if now != expected:
                raise self._fail("identity", f"{what} {path} was replaced since the hub opened it")

    async def _check_schema(self) -> int:
        try:
            version = await self.core.store.read(read_version)
        except (sqlite3.Error, StoreBroken, StoreClosed) as exc:
            raise self._fail("schema", f"schema version unreadable: {exc}") from None
        if version > self.supported_version:
            raise self._fail("schema", f"schema v{version} is newer than supported v{self.supported_version}")
        if version != self.opened_version:
            raise self._fail("schema", f"schema v{version} differs from v{self.opened_version} opened")
        return version

    async def _check_content(self) -> None:
        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM hub_meta WHERE key = 'store_kind'").fetchone()
            return None if row is None else str(row[0])

        try:
            kind = await self.core.store.read(read)
        except (sqlite3.Error, StoreBroken, StoreClosed) as exc:
            raise self._fail("content", f"hub store unreadable: {exc}") from None
        if kind != STORE_KIND:
            raise self._fail("content", "hub.db does not hold a hub store")

    def _check_free_space(self) -> int:
        free = free_bytes(self.data_dir)
        margin = self.core.settings.min_free_bytes
        if free is None:
            raise self._fail("free_space", "free space on the data volume cannot be measured")
        if free <= margin:
            raise self._fail("free_space", f"{free} bytes free, at or below the {margin}-byte margin")
        return free
