"""One rule, one number (issue 28 part 6): `GET /api/v1/limits` reads each limit from the constant the
hub enforces it with, and the web app copies none of them (it reads that route)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hubcore.services import entries, validate
from hubcore.services.artifacts import comments
from hubcore.services.push import devices
from hubcore.services.resolutions import NOTE_MAX
from hubcore.services.search.models import FAMILIES
from hubcore.services.search.query import QUERY_MAX_BYTES, TERMS_MAX
from hubcore.services.sessions import HANDOFF_MAX
from tests.harness import ADMIN, HubClient

pytestmark = pytest.mark.anyio

PWA_JS = Path(__file__).resolve().parents[2] / "pwa" / "js"


async def test_the_limits_route_answers_the_rules_own_numbers(client: HubClient) -> None:
    r = await client.get("/api/v1/limits", headers=ADMIN)
    assert r.status_code == 200
    got = r.json()
    assert got["project_id"] == {"pattern": "^" + validate.PROJECT_ID_RE.pattern + "$", "max_chars": 63}
    assert got["agent_id"] == {"pattern": "^" + validate.AGENT_ID_RE.pattern + "$", "max_chars": 57}
    assert (got["comment_body_chars"], got["comment_quote_chars"]) == (comments.BODY_MAX, comments.QUOTE_MAX)
    assert (got["decision_note_chars"], got["handoff_chars"]) == (NOTE_MAX, HANDOFF_MAX)
    assert (got["search_query_bytes"], got["search_terms"], got["kb_page_bytes"]) == (
        QUERY_MAX_BYTES,
        TERMS_MAX,
        entries.PAGE_MAX,
    )
    assert got["push_device_name_chars"] == devices.NAME_MAX
    assert got["search_types"] == list(FAMILIES) and set(FAMILIES) == {"feed", "artifact", "brain", "kb"}
    # The id rules stated are the rules enforced: the longest id passes, one more character does not.
    for rule, make in ((got["project_id"], "projects"), (got["agent_id"], "agents")):
        assert re.fullmatch(rule["pattern"], "a" * rule["max_chars"])
        assert not re.fullmatch(rule["pattern"], "a" * (rule["max_chars"] + 1))
        too_long = {"id": "a" * (rule["max_chars"] + 1), "display_name": "X"}
        assert (await client.post(f"/api/v1/{make}", json=too_long, headers=ADMIN)).status_code == 400
        fits = {"id": "b" * rule["max_chars"], "display_name": "X"}
        assert (await client.post(f"/api/v1/{make}", json=fits, headers=ADMIN)).status_code == 201
    assert (await client.get("/api/v1/limits")).status_code == 401  # a token's, like the rest of the API


def test_the_web_app_copies_no_limit() -> None:
    """No number of a hub limit, and no id pattern, is written into the app's code."""
    copied = re.compile(r"\b(2000|4096|8192|1048576)\b|maxLength:\s*\d|\{0,\d+\}|[A-Z_]*(NOTE|QUERY|TERMS)_MAX\s*=")
    found = [
        f"{p.relative_to(PWA_JS)}:{n}: {line.strip()}"
        for p in sorted(PWA_JS.rglob("*.js"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if copied.search(line)
    ]
    assert found == []
