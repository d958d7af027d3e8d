"""The REST artifact routes (admin): reads, `/raw`, delete, share links, the viewer pass and the
page gate, comments. Every refusal is checked for nothing written."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.artifacts import ArtifactDraft, ArtifactPublish, ArtifactUpdate
from hubcore.services.artifacts.scripts import ScriptsSet
from tests.artifacts.support import CIPHERTEXT, ENVELOPE, query, state
from tests.harness import ADMIN, HubClient

pytestmark = pytest.mark.anyio
API = "/api/v1"


def everything(hub: Hub) -> tuple[Any, ...]:
    return (
        *state(hub),
        query(hub, "SELECT * FROM artifact_comments ORDER BY id"),
        query(hub, "SELECT * FROM artifact_shares ORDER BY artifact_id"),
    )


MARKDOWN = "# Report\n\n| a |\n|---|\n| 1 |\n"


async def publish(client: HubClient, project: str = "web", **fields: Any) -> str:
    """An artifact alice published (through the service: its tools are the artifact service's tests)."""
    args = {"project_id": project, "title": "Report", "kind": "markdown", "content": MARKDOWN, **fields}
    found = await client.app.hub.artifacts.publish_artifact(Caller.agent("alice"), ArtifactPublish.model_validate(args))
    return str(found["artifact_id"])


@pytest.fixture
async def alice_token(client: HubClient, hub: Hub) -> str:
    r = await client.post(f"{API}/agents/alice/token", headers=ADMIN)
    return str(r.json()["token"])


async def test_reads(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    r = await client.get(f"{API}/artifacts/{aid}", headers=ADMIN)
    assert r.status_code == 200
    body = r.json()
    assert body["version"] == 1 and body["kind"] == "markdown" and "<table>" in body["rendered"]
    assert body["comments_count"] == 0 and body["comments_open"] == 0
    listing = (await client.get(f"{API}/artifacts", headers=ADMIN)).json()["artifacts"]
    assert [a["id"] for a in listing] == [aid]
    assert (await client.get(f"{API}/artifacts?project=vault", headers=ADMIN)).json() == {
        "artifacts": [],
        "next_cursor": None,
    }
    assert [
        a["id"] for a in (await client.get(f"{API}/projects/web/artifacts", headers=ADMIN)).json()["artifacts"]
    ] == [aid]
    versions = (await client.get(f"{API}/artifacts/{aid}/versions", headers=ADMIN)).json()
    assert [v["version"] for v in versions["versions"]] == [1]
    live = (await client.get(f"{API}/artifacts/{aid}/live", headers=ADMIN)).json()
    assert live["state"] == "sealed" and live["version"] == 1
    raw = await client.get(f"{API}/artifacts/{aid}/raw", headers=ADMIN)
    assert raw.headers["content-type"].startswith("text/plain") and raw.text.startswith("# Report")
    assert (await client.get(f"{API}/artifacts/{aid}?version=1", headers=ADMIN)).json()["version"] == 1


async def test_raw_of_a_protected_artifact_is_the_envelope(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client, kind="html", content=CIPHERTEXT, envelope=ENVELOPE)
    raw = (await client.get(f"{API}/artifacts/{aid}/raw", headers=ADMIN)).json()
    assert raw == {"envelope": ENVELOPE, "ciphertext": CIPHERTEXT}
    got = (await client.get(f"{API}/artifacts/{aid}", headers=ADMIN)).json()
    assert got["protected"] is True and "rendered" not in got


@pytest.mark.parametrize("suffix", ["", "/versions", "/live", "/raw", "/comments", "/share", "/viewer-pass"])
async def test_missing_is_404_on_every_read(client: HubClient, hub: Hub, suffix: str) -> None:
    for odd in ("nope", "%C3%A9t%C3%A9", "x" * 300, "a%20b"):
        r = await client.get(f"{API}/artifacts/{odd}{suffix}", headers=ADMIN)
        assert r.status_code in (400, 404), (odd, r.status_code)
    r = await client.get(f"{API}/artifacts/nope{suffix}", headers=ADMIN)
    assert r.status_code == 404 and r.json()["code"] == "not_found"


async def test_agents_cannot_reach_the_rest_routes(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    before = everything(hub)
    agent = client.agent(alice_token)
    for method, path in (
        ("GET", f"/artifacts/{aid}"),
        ("POST", f"/artifacts/{aid}/share"),
        ("DELETE", f"/artifacts/{aid}/share"),
        ("GET", f"/artifacts/{aid}/viewer-pass"),
        ("POST", f"/artifacts/{aid}/comments"),
        ("DELETE", f"/artifacts/{aid}"),
    ):
        r = await client.request(method, f"{API}{path}", headers=agent, json={"body": "x"})
        assert r.status_code == 401, (method, path)
    assert everything(hub) == before


async def test_bad_queries_are_refused(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    for q in (
        "version=abc",
        "version=0",
        "version=99999999999999999999",
        "live=maybe",
        "color=red",
        "version=1&version=1",
        "version=%EF%BC%91",
    ):
        r = await client.get(f"{API}/artifacts/{aid}?{q}", headers=ADMIN)
        assert r.status_code == 400, q
    assert (await client.get(f"{API}/artifacts/{aid}?version=7", headers=ADMIN)).status_code == 404
    assert (await client.get(f"{API}/artifacts?limit=0", headers=ADMIN)).status_code == 400
    assert (await client.get(f"{API}/artifacts/{aid}/versions?x=1", headers=ADMIN)).status_code == 400


async def test_delete(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    await client.post(f"{API}/artifacts/{aid}/comments", json={"body": "hi"}, headers=ADMIN)
    await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)
    r = await client.delete(f"{API}/artifacts/{aid}", headers=ADMIN)
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert query(hub, "SELECT * FROM artifact_comments") == [] and query(hub, "SELECT * FROM artifact_shares") == []
    assert (
        query(hub, "SELECT payload FROM events WHERE kind = 'artifact' ORDER BY id DESC LIMIT 1")[0][0].find(
            '"deleted"'
        )
        >= 0
    )
    before = everything(hub)
    assert (await client.delete(f"{API}/artifacts/{aid}", headers=ADMIN)).status_code == 404
    assert everything(hub) == before


# -- share links -----------------------------------------------------------------------------------


async def test_share_create_report_rotate_revoke(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    assert (await client.get(f"{API}/artifacts/{aid}/share", headers=ADMIN)).status_code == 404
    r = await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)
    assert r.status_code == 201
    first = r.json()
    assert first["version"] == 1 and first["url"] == f"s/{first['token']}"
    report = (await client.get(f"{API}/artifacts/{aid}/share", headers=ADMIN)).json()
    assert report["token"] == first["token"] and report["version"] == 1 and report["created_at"]
    assert await hub.shares.shared(first["token"]) == (aid, 1)
    second = (await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)).json()
    assert second["token"] != first["token"]
    with pytest.raises(Exception) as gone:
        await hub.shares.shared(first["token"])
    assert str(gone.value) == "share link not found"
    assert (await client.delete(f"{API}/artifacts/{aid}/share", headers=ADMIN)).status_code == 204
    before = everything(hub)
    assert (await client.delete(f"{API}/artifacts/{aid}/share", headers=ADMIN)).status_code == 404
    assert (await client.get(f"{API}/artifacts/{aid}/share", headers=ADMIN)).status_code == 404
    assert everything(hub) == before


async def test_share_is_pinned_to_the_version_active_at_creation(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    await hub.artifacts.draft(
        Caller.agent("alice"), ArtifactDraft.model_validate({"artifact_id": aid, "content": "# draft"})
    )
    share = (await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)).json()
    assert share["version"] == 1  # the live draft is not the active version
    await hub.artifacts.update(
        Caller.agent("alice"), ArtifactUpdate.model_validate({"artifact_id": aid, "content": "# v3"})
    )
    assert await hub.shares.shared(share["token"]) == (aid, 1)


async def test_share_body_is_refused_when_it_holds_members(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    before = everything(hub)
    r = await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN, json={"version": 1})
    assert r.status_code == 400
    r = await client.post(
        f"{API}/artifacts/{aid}/share",
        headers=ADMIN,
        content=b"[1]",
    )
    assert r.status_code in (400, 415)
    assert everything(hub) == before


async def test_public_url_makes_the_share_url_absolute(tmp_path: Any) -> None:
    from tests.harness import hub_client, test_settings

    async with hub_client(test_settings(tmp_path, public_url="https://hub.example/")) as client:
        await client.make_agent("alice")
        await client.make_project("web")
        aid = await publish(client)
        found = (await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)).json()
        assert found["url"] == f"https://hub.example/s/{found['token']}"


async def test_viewer_pass_and_the_page_gate(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    assert (await client.get(f"/artifacts/{aid}")).status_code == 200
    await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)
    unknown = await client.get("/artifacts/zzzz")
    for path in (f"/artifacts/{aid}", f"/artifacts/{aid}/frame"):
        hidden = await client.get(path)
        assert hidden.status_code == 404
        assert hidden.content.replace(aid.encode(), b"zzzz") == unknown.content
        assert (await client.get(f"{path}?pass=deadbeef")).status_code == 404
    r = await client.get(f"{API}/artifacts/{aid}/viewer-pass", headers=ADMIN)
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    good = r.json()["pass"]
    assert len(good) == 64 and query(hub, "SELECT * FROM artifact_shares WHERE token = ?", good) == []
    page = await client.get(f"/artifacts/{aid}?pass={good}")
    assert page.status_code == 200 and f"pass={good}" in page.text
    assert (await client.get(f"/artifacts/{aid}/frame?pass={good}")).status_code == 200
    await client.delete(f"{API}/artifacts/{aid}/share", headers=ADMIN)
    assert (await client.get(f"/artifacts/{aid}")).status_code == 200


async def test_viewer_pass_window(client: HubClient, hub: Hub, alice_token: str, clock: Any) -> None:
    aid = await publish(client)
    await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)
    good = (await client.get(f"{API}/artifacts/{aid}/viewer-pass", headers=ADMIN)).json()["pass"]
    clock.advance(60)
    assert (await client.get(f"/artifacts/{aid}/frame?pass={good}")).status_code == 200
    clock.advance(60)
    assert (await client.get(f"/artifacts/{aid}/frame?pass={good}")).status_code == 404
    again = (await client.get(f"{API}/artifacts/{aid}/viewer-pass", headers=ADMIN)).json()["pass"]
    assert again != good


# -- comments --------------------------------------------------------------------------------------


async def test_comments_over_rest(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    r = await client.post(
        f"{API}/artifacts/{aid}/comments",
        headers=ADMIN,
        json={"body": "  nice  ", "anchor": {"mode": "text", "quote": "Report"}},
    )
    assert r.status_code == 201
    c = r.json()
    assert c["author"] == "human" and c["body"] == "nice" and "delete_token" not in c
    assert c["anchor"] == {"mode": "text", "quote": "Report"} and c["anchor_version"] == 1 and c["done"] is False
    p = await client.post(
        f"{API}/artifacts/{aid}/comments",
        headers=ADMIN,
        json={"body": "here", "anchor": {"mode": "point", "x": 0.5, "y": 1}, "anchor_version": 9},
    )
    assert p.json()["anchor_version"] == 1
    got = (await client.get(f"{API}/artifacts/{aid}", headers=ADMIN)).json()
    assert (got["comments_count"], got["comments_open"]) == (2, 2)
    r = await client.patch(f"{API}/artifacts/{aid}/comments/{c['id']}", headers=ADMIN, json={"done": True})
    assert r.status_code == 200 and r.json()["done"] is True
    got = (await client.get(f"{API}/artifacts/{aid}", headers=ADMIN)).json()
    assert (got["comments_count"], got["comments_open"]) == (2, 1)
    assert (
        await client.patch(f"{API}/artifacts/{aid}/comments/{c['id']}", headers=ADMIN, json={"done": False})
    ).json()["done"] is False
    listing = (await client.get(f"{API}/artifacts/{aid}/comments?limit=1", headers=ADMIN)).json()
    assert [x["id"] for x in listing["comments"]] == [c["id"]] and listing["truncated"] is True
    rest = (await client.get(f"{API}/artifacts/{aid}/comments?after={listing['next_after']}", headers=ADMIN)).json()
    assert [x["id"] for x in rest["comments"]] == [p.json()["id"]] and rest["next_after"] is None
    r = await client.delete(f"{API}/artifacts/{aid}/comments/{c['id']}", headers=ADMIN)
    assert r.status_code == 200 and r.json() == {"ok": True}
    got = (await client.get(f"{API}/artifacts/{aid}", headers=ADMIN)).json()
    assert (got["comments_count"], got["comments_open"]) == (1, 1)


@pytest.mark.parametrize(
    "body",
    [
        {"body": ""},
        {"body": "   "},
        {"body": 5},
        {"body": "x", "anchor": {"mode": "point", "x": 2, "y": 0}},
        {"body": "x", "anchor": {"mode": "point", "x": "0.1", "y": 0}},
        {"body": "x", "anchor": {"mode": "circle"}},
        {"body": "x", "anchor": {"mode": "text", "quote": ""}},
        {"body": "x", "anchor_version": 0},
        {"body": "x", "anchor_version": 2**40},
        {"body": "x", "extra": 1},
        {"body": "x", "anchor": []},
        {"body": "x", "anchor": {"mode": "point", "x": 0.1, "y": 0.1, "z": 1}},
        {"body": "x", "anchor": {"mode": "text", "quote": "y" * 2001}},  # a quote is an anchor's shape: 400
        {"body": "x", "anchor": {"mode": "text", "quote": "é" * 1500}},  # the anchor over 2048 bytes of JSON
    ],
)
async def test_comment_refusals_write_nothing(
    client: HubClient, hub: Hub, alice_token: str, body: dict[str, Any]
) -> None:
    aid = await publish(client)
    before = everything(hub)
    r = await client.post(f"{API}/artifacts/{aid}/comments", headers=ADMIN, json=body)
    assert r.status_code == 400, r.text
    assert everything(hub) == before


@pytest.mark.parametrize(
    "body",
    [
        {"body": "x" * 2001},
        {"body": "é" * 2001},
    ],
)
async def test_huge_comments_are_413(client: HubClient, hub: Hub, alice_token: str, body: dict[str, Any]) -> None:
    aid = await publish(client)
    before = everything(hub)
    r = await client.post(f"{API}/artifacts/{aid}/comments", headers=ADMIN, json=body)
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"
    assert everything(hub) == before


async def test_quote_on_ciphertext_is_refused(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client, kind="html", content=CIPHERTEXT, envelope=ENVELOPE)
    before = everything(hub)
    r = await client.post(
        f"{API}/artifacts/{aid}/comments",
        headers=ADMIN,
        json={"body": "x", "anchor": {"mode": "text", "quote": "secret"}},
    )
    assert r.status_code == 400 and "password protected" in r.json()["detail"]
    assert everything(hub) == before
    ok = await client.post(
        f"{API}/artifacts/{aid}/comments",
        headers=ADMIN,
        json={"body": "x", "anchor": {"mode": "point", "x": 0, "y": 0}},
    )
    assert ok.status_code == 201


async def test_comment_on_missing_things(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client)
    before = everything(hub)
    assert (await client.post(f"{API}/artifacts/nope/comments", headers=ADMIN, json={"body": "x"})).status_code == 404
    for method in ("PATCH", "DELETE"):
        r = await client.request(method, f"{API}/artifacts/{aid}/comments/nope", headers=ADMIN, json={})
        assert r.status_code == 404
        r = await client.request(method, f"{API}/artifacts/nope/comments/nope", headers=ADMIN, json={})
        assert r.status_code == 404
    assert (
        await client.patch(f"{API}/artifacts/{aid}/comments/nope", headers=ADMIN, json={"done": "yes"})
    ).status_code == 400
    assert everything(hub) == before


# -- the password policy (PATCH /projects/:id) -------------------------------------------------------


async def test_password_policy_patch_governs_publishing(client: HubClient, hub: Hub, alice_token: str) -> None:
    r = await client.patch(f"{API}/projects/web", headers=ADMIN, json={"artifact_password_policy": "required"})
    assert r.status_code == 200 and r.json()["artifact_password_policy"] == "required"
    before = everything(hub)
    with pytest.raises(HubError) as refused:
        await publish(client)
    assert refused.value.code == "invalid_argument" and "password" in refused.value.message
    assert everything(hub) == before
    await publish(client, kind="html", content=CIPHERTEXT, envelope=ENVELOPE)
    r = await client.patch(f"{API}/projects/web", headers=ADMIN, json={"artifact_password_policy": "off"})
    assert r.json()["artifact_password_policy"] == "off"
    before = everything(hub)
    with pytest.raises(HubError):
        await publish(client, kind="html", content=CIPHERTEXT, envelope=ENVELOPE)
    assert everything(hub) == before
    await publish(client)
    # A PATCH naming nothing else leaves the policy; null leaves it too.
    r = await client.patch(f"{API}/projects/web", headers=ADMIN, json={"display_name": "Web"})
    assert r.json()["artifact_password_policy"] == "off"
    r = await client.patch(f"{API}/projects/web", headers=ADMIN, json={"artifact_password_policy": None})
    assert r.json()["artifact_password_policy"] == "off"


@pytest.mark.parametrize("value", ["sometimes", "", "OFF", 1, True, ["off"], {"x": 1}, "o" * 10_000])
async def test_password_policy_patch_refusals(client: HubClient, hub: Hub, value: Any) -> None:
    before = query(hub, "SELECT * FROM projects ORDER BY id")
    r = await client.patch(f"{API}/projects/web", headers=ADMIN, json={"artifact_password_policy": value})
    assert r.status_code == 400 and r.json()["code"] == "invalid_argument"
    assert query(hub, "SELECT * FROM projects ORDER BY id") == before


async def test_agents_cannot_set_the_password_policy(client: HubClient, hub: Hub, alice_token: str) -> None:
    before = query(hub, "SELECT * FROM projects ORDER BY id")
    r = await client.patch(
        f"{API}/projects/web", headers=client.agent(alice_token), json={"artifact_password_policy": "off"}
    )
    assert r.status_code == 401  # PATCH /projects is the admin's: the gate answers before the body
    r = await client.patch(
        f"{API}/projects/vault", headers=client.agent(alice_token), json={"artifact_password_policy": "off"}
    )
    assert r.status_code == 401
    assert query(hub, "SELECT * FROM projects ORDER BY id") == before


async def test_revoked_and_rotated_links_answer_as_unknown_tokens(client: HubClient, hub: Hub) -> None:
    aid = await publish(client)
    first = (await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)).json()["token"]
    assert (await client.get(f"/s/{first}")).status_code == 200
    second = (await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)).json()["token"]
    unknown = await client.get("/s/" + "A" * 43)
    assert unknown.status_code == 404
    rotated = await client.get(f"/s/{first}")
    assert (rotated.status_code, rotated.content) == (404, unknown.content)
    await client.delete(f"{API}/artifacts/{aid}/share", headers=ADMIN)
    for path in (f"/s/{second}", f"/s/{second}/frame", f"/s/{second}/og.svg"):
        revoked = await client.get(path)
        assert (revoked.status_code, revoked.content) == (404, unknown.content), path
    for odd in ("%00", "%F0%9F%98%80", "x" * 500, "%2e%2e"):
        r = await client.get(f"/s/{odd}")
        assert r.status_code in (400, 404), odd
    assert query(hub, "SELECT * FROM artifact_shares") == []


async def test_project_delete_takes_comments_and_share_links(client: HubClient, hub: Hub) -> None:
    await client.make_project("gone")
    aid = await publish(client, "gone")
    await client.post(f"{API}/artifacts/{aid}/comments", json={"body": "bye"}, headers=ADMIN)
    token = (await client.post(f"{API}/artifacts/{aid}/share", headers=ADMIN)).json()["token"]
    kept = await publish(client)
    await client.post(f"{API}/artifacts/{kept}/comments", json={"body": "stays"}, headers=ADMIN)
    assert (await client.delete(f"{API}/projects/gone", headers=ADMIN)).status_code == 204
    assert query(hub, "SELECT body FROM artifact_comments") == [("stays",)]
    assert query(hub, "SELECT * FROM artifact_shares") == []
    assert (await client.get(f"/s/{token}")).status_code == 404


async def test_a_body_over_the_limit_is_413_before_anything(client: HubClient, hub: Hub) -> None:
    aid = await publish(client)
    before = everything(hub)
    r = await client.post(
        f"{API}/artifacts/{aid}/comments",
        headers={**ADMIN, "Content-Type": "application/json"},
        content=b'{"body": "' + b"x" * (5 << 20) + b'"}',
    )
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"
    r = await client.patch(f"{API}/artifacts/{aid}/comments/x", headers=ADMIN, json={"done": True, "pad": "y" * 100})
    assert r.status_code == 400
    assert everything(hub) == before


# -- scripts in an HTML artifact (issue 28) ---------------------------------------------------------------


def scripts_rows(hub: Hub) -> list[tuple[Any, ...]]:
    return query(hub, "SELECT * FROM artifact_scripts ORDER BY artifact_id")


async def test_scripts_are_off_until_the_human_turns_them_on(client: HubClient, hub: Hub) -> None:
    aid = await publish(client, kind="html", content="<script>1</script>")
    path = f"{API}/artifacts/{aid}/scripts"
    assert (await client.get(path, headers=ADMIN)).json() == {"artifact_id": aid, "scripts": False}
    assert not await hub.scripts.allowed(aid)
    for _ in range(2):  # setting what is set changes nothing
        r = await client.put(path, json={"scripts": True}, headers=ADMIN)
        assert r.status_code == 200 and r.json() == {"artifact_id": aid, "scripts": True}
        assert [row[:2] for row in scripts_rows(hub)] == [(aid, "human")]
    assert await hub.scripts.allowed(aid)
    r = await client.put(path, json={"scripts": False}, headers=ADMIN)
    assert r.json() == {"artifact_id": aid, "scripts": False} and scripts_rows(hub) == []
    await client.put(path, json={"scripts": True}, headers=ADMIN)
    assert (await client.delete(f"{API}/artifacts/{aid}", headers=ADMIN)).status_code == 200
    assert scripts_rows(hub) == []  # the setting goes with its artifact


async def test_scripts_setting_refusals_write_nothing(client: HubClient, hub: Hub, alice_token: str) -> None:
    aid = await publish(client, kind="html", content="<p>x</p>")
    path = f"{API}/artifacts/{aid}/scripts"
    before = scripts_rows(hub)
    for body in (
        {},
        {"scripts": "yes"},
        {"scripts": 1},
        {"scripts": None},
        {"scripts": True, "extra": 1},
        {"scripts": True, "artifact_id": "01" + "a" * 24},
    ):
        r = await client.put(path, json=body, headers=ADMIN)
        assert r.status_code == 400 and r.json()["code"] == "invalid_argument", (body, r.text)
    r = await client.put(path, content=b"{not json", headers={**ADMIN, "Content-Type": "application/json"})
    assert r.status_code == 400
    r = await client.put(f"{API}/artifacts/{'0' * 26}/scripts", json={"scripts": True}, headers=ADMIN)
    assert r.status_code == 404
    for method in ("get", "put"):  # an agent never reads nor turns on its own scripts
        r = await client.request(
            method.upper(), path, json={"scripts": True} if method == "put" else None, headers=client.agent(alice_token)
        )
        assert r.status_code == 401
    with pytest.raises(HubError) as refused:
        await hub.scripts.set(Caller.agent("alice"), ScriptsSet(artifact_id=aid, scripts=True))
    assert refused.value.code == "forbidden"
    assert (await client.post(path, json={"scripts": True}, headers=ADMIN)).status_code == 405
    assert scripts_rows(hub) == before
