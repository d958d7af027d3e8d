"""Probes: every readiness leg made to fail for real; metrics gated and measured."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from hubcore.config import HubSettings
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient, hub_client

pytestmark = pytest.mark.anyio


async def test_healthz_needs_no_token(client: HubClient) -> None:
    r = await client.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}


async def test_readyz_when_all_legs_pass(client: HubClient) -> None:
    r = await client.get("/readyz")
    assert r.status_code == 200
    assert r.json()["status"] == "ready" and r.json()["schema_version"] == client.app.hub.schema_version


def leg_of(r: object) -> str:
    doc = assert_problem(r, 503, "unavailable")
    return str(doc["details"]["leg"])


async def test_free_space_leg(settings: HubSettings) -> None:
    async with hub_client(replace(settings, min_free_bytes=1 << 62)) as client:
        assert leg_of(await client.get("/readyz")) == "free_space"


async def test_identity_leg_when_the_data_directory_is_replaced(client: HubClient) -> None:
    data = Path(client.app.settings.data_dir)
    moved = data.with_name("data-moved")
    data.rename(moved)
    shutil.copytree(moved, data)
    try:
        assert leg_of(await client.get("/readyz")) == "identity"
    finally:
        shutil.rmtree(data)
        moved.rename(data)
    assert (await client.get("/readyz")).status_code == 200


async def test_identity_leg_when_hub_db_is_replaced(client: HubClient) -> None:
    db = Path(client.app.settings.data_dir) / "hub.db"
    copy = db.with_name("hub.db.copy")
    shutil.copy2(db, copy)
    original = db.with_name("hub.db.orig")
    os.link(db, original)
    os.replace(copy, db)
    try:
        r = await client.get("/readyz")
        assert leg_of(r) == "identity" and "hub.db" in r.json()["detail"]
    finally:
        os.replace(original, db)


async def test_identity_leg_when_hub_db_is_gone(client: HubClient) -> None:
    db = Path(client.app.settings.data_dir) / "hub.db"
    aside = db.with_name("aside.db")
    db.rename(aside)
    try:
        assert leg_of(await client.get("/readyz")) == "identity"
    finally:
        aside.rename(db)


async def test_schema_leg_when_the_store_moves_ahead(client: HubClient) -> None:
    # As a newer hub would have left it; written through the running hub's actor, not behind it.
    await client.app.hub.core.store.execute(
        lambda conn: conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)")
    )
    r = await client.get("/readyz")
    assert leg_of(r) == "schema" and "999" in r.json()["detail"]


async def test_content_leg_when_the_store_is_not_a_hub_store(client: HubClient) -> None:
    await client.app.hub.core.store.execute(
        lambda conn: conn.execute("UPDATE hub_meta SET value = 'something-else' WHERE key = 'store_kind'")
    )
    assert leg_of(await client.get("/readyz")) == "content"


async def test_metrics_are_admin_gated_and_carry_storage_gauges(client: HubClient) -> None:
    assert_problem(await client.get("/metrics"), 401, "unauthenticated")
    r = await client.get("/metrics", headers=ADMIN)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    values = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in r.text.splitlines()
        if line and not line.startswith("#")
    }
    db = Path(client.app.settings.data_dir) / "hub.db"
    assert values["hub_db_size_bytes"] == db.stat().st_size
    assert values["hub_db_wal_bytes"] == db.with_name("hub.db-wal").stat().st_size
    assert values["hub_data_free_bytes"] > 0


async def test_readiness_reports_a_broken_store_instead_of_failing(client: HubClient) -> None:
    from hubcore.errors import StoreBroken

    async def broken(_fn: object) -> None:
        raise StoreBroken("store hub.db is broken")

    client.app.hub.core.store.read = broken  # type: ignore[method-assign]
    assert leg_of(await client.get("/readyz")) == "schema"
