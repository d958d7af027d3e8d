"""The REST API fuzzed from its own OpenAPI document with schemathesis, bounded and derandomised.

For every operation (but the stream, which stays open), a few generated requests, valid ones and
then ones that break the document, go to a real hub with the admin token: none may answer 5xx,
every answer must match its documented schema (the harness client checks each one against the
document, tests/openapi_check.py), and a refused request (any 4xx) must leave hub.db as it was.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.from_thread
import orjson
import schemathesis
from hypothesis import HealthCheck, given
from hypothesis import settings as budget
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core import NotSet
from schemathesis.core.result import Ok

from hubcore.config import HubSettings
from hubhttp.openapi import document as openapi_document
from tests.harness import ADMIN, HubClient, hub_client

EXAMPLES = 8  # per operation: the whole walk stays well under a minute on the shared machine
SKIPPED = {("GET", "/api/v1/stream")}  # a stream answers only when it ends


def fingerprint(db: Path) -> str:
    """Every row of every table of hub.db, read through a read-only connection."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        digest = hashlib.sha256()
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY 1'):
                digest.update(repr(row).encode())
        return digest.hexdigest()
    finally:
        conn.close()


async def seed(client: HubClient) -> None:
    """Something for the generated requests to find: a project, an agent with a grant."""
    await client.make_project("demo")
    await client.make_agent("bot")
    r = await client.post("/api/v1/agents/bot/grants", json={"project_id": "demo"}, headers=ADMIN)
    assert r.status_code in (200, 201), r.text


async def send(client: HubClient, case: Any) -> tuple[int, str]:
    kwargs: dict[str, Any] = {"params": case.query or None,
                              "headers": {**{k: v for k, v in (case.headers or {}).items()
                                             if k.lower() != "authorization"}, **ADMIN}}
    if not isinstance(case.body, NotSet):
        body = case.body
        # stdlib json: it writes integers past 64 bits; a negative case may bring raw bytes.
        kwargs["content"] = body if isinstance(body, bytes) else json.dumps(body).encode()
        kwargs["headers"]["Content-Type"] = "application/json"
    r = await client.request(case.method, case.formatted_path, **kwargs)
    return r.status_code, r.text[:300]


def test_the_rest_api_fuzzed_from_its_document(settings: HubSettings) -> None:
    with anyio.from_thread.start_blocking_portal("asyncio") as portal, \
            portal.wrap_async_context_manager(hub_client(settings)) as client:
        portal.call(seed, client)
        db = Path(client.app.settings.data_dir) / "hub.db"
        document = orjson.loads(openapi_document(client.app.quart))
        results = list(schemathesis.openapi.from_dict(document).get_all_operations())
        operations = [r.ok() for r in results if isinstance(r, Ok)]
        assert len(operations) == len(results)  # every operation of the document reads
        answers: Counter[tuple[str, int]] = Counter()

        def call(case: Any) -> tuple[int, str]:
            status, text = portal.call(send, client, case)
            answers[(f"{case.method} {case.path}", status)] += 1
            return status, text

        walked = [op for op in operations if (op.method.upper(), op.path) not in SKIPPED]
        for operation in walked:
            walk(operation, GenerationMode.POSITIVE, call, lambda: fingerprint(db))
        positive = set(answers)
        for operation in walked:
            walk(operation, GenerationMode.NEGATIVE, call, lambda: fingerprint(db))
    assert len(walked) == len(operations) - len(SKIPPED) >= 35
    assert {route for route, _ in positive} == {f"{op.method.upper()} {op.path}" for op in walked}
    assert any(status < 300 for _, status in positive), positive  # not all refused at the door
    assert sum(answers.values()) > sum(answers[key] for key in positive)  # the negative walk ran


def walk(operation: Any, mode: GenerationMode, call: Callable[[Any], tuple[int, str]],
         state: Callable[[], str]) -> None:
    """`EXAMPLES` requests for the operation: valid ones (POSITIVE), or each breaking the
    document somewhere (NEGATIVE: a wrong type, a missing member, a value past its limit)."""

    @budget(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
            suppress_health_check=list(HealthCheck))
    @given(operation.as_strategy(generation_mode=mode))
    def one(case: Any) -> None:
        before = state()
        status, text = call(case)
        where = f"{case.method} {case.formatted_path} query={case.query!r}"
        assert status < 500, f"{where}: {status} {text}"
        if status >= 400:
            assert state() == before, f"{where}: refused with {status} yet hub.db changed"

    try:
        one()
    except Unsatisfiable:
        assert mode is GenerationMode.NEGATIVE  # an operation taking no input has nothing to break

