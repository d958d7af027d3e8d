"""Trust as a table: each case a sequence of writes, reviews, deletes, reverts and waits through
the service on a fake clock, and the trust the page must read after it (spec "Knowledge base
page": the five-minute stamp rule, retries, restoring the verified bytes, removing the newest
entry); then the rule for log rows an older hub wrote without the note, and the pure function."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock, iso
from hubcore.hub import Hub
from hubcore.services.kb import models
from hubcore.services.kb.frontmatter import Verified
from hubcore.services.kb.trust import Note, brings_verification, trust
from tests.kb.support import get, put, req, trust_of

pytestmark = pytest.mark.anyio

PATH = "/fs/page.md"
ALICE = Caller.agent("alice")


def text(body: str = "Body.", *entries: tuple[str, float]) -> str:
    """A page whose verified block holds `entries` ((by, seconds from the test's start), ...)."""
    lines = ["---", "type: Concept", "title: Page"]
    if entries:
        lines.append("verified:")
        for by, offset in entries:
            lines += [f"  - by: {by}", f"    at: {iso(START + offset)}"]
    return "\n".join([*lines, "---", body, ""])


START = FakeClock().now()
Step = tuple[Any, ...]

CASES: list[tuple[str, list[Step], str]] = [
    ("a page without entries", [("put", text())], "unverified"),
    ("a review", [("put", text()), ("review",)], "human_reviewed"),
    ("an edit after a review", [("put", text()), ("review",), ("wait", 60), ("edit",)], "edited_since_review"),
    ("an edit dropping the block", [("put", text()), ("review",), ("put", text("Edited."))], "unverified"),
    (
        "a retry of the reviewed bytes is no edit",
        [("put", text()), ("review",), ("wait", 900), ("again", 1)],
        "human_reviewed",
    ),
    (
        "restoring the verified bytes reads as verified",
        [("put", text()), ("review",), ("edit",), ("wait", 900), ("again", 1)],
        "human_reviewed",
    ),
    (
        "reverting to the verified version reads as verified",
        [("put", text()), ("review",), ("edit",), ("revert", 1)],
        "human_reviewed",
    ),
    (
        "restored after a delete",
        [("put", text()), ("review",), ("delete",), ("wait", 900), ("again", 1)],
        "human_reviewed",
    ),
    ("an agent's entry stamped now", [("put", text("x", ("bot", 0)))], "machine_confirmed"),
    ("stamped exactly five minutes before", [("wait", 300), ("put", text("x", ("bot", 0)))], "machine_confirmed"),
    ("stamped a second past five minutes", [("wait", 301), ("put", text("x", ("bot", 0)))], "edited_since_review"),
    ("stamped five minutes ahead", [("put", text("x", ("bot", 300)))], "machine_confirmed"),
    (
        "an entry the replaced page had brings nothing",
        [("put", text("x", ("bot", 0))), ("wait", 900), ("put", text("y", ("bot", 0)))],
        "edited_since_review",
    ),
    (
        "removing the newest entry to show an older one is an edit",
        [
            ("put", text("x", ("bot", 0))),
            ("wait", 60),
            ("put", text("x", ("bot", 0), ("carol", 60))),
            ("put", text("x", ("bot", 0))),
        ],
        "edited_since_review",
    ),
    ("a review after an agent's entry", [("put", text("x", ("bot", 0))), ("review",)], "human_reviewed"),
    (
        "an agent confirming after the human",
        [("put", text()), ("review",), ("wait", 10), ("confirm", "bot")],
        "machine_confirmed",
    ),
]


async def run(hub: Hub, clock: FakeClock, steps: list[Step]) -> None:
    versions: list[str] = []
    contents: list[str] = []
    for step in steps:
        if step[0] == "wait":
            clock.advance(step[1])
            continue
        if step[0] == "put":
            wrote = await put(hub, ALICE, PATH, step[1])
        elif step[0] == "again":
            wrote = await put(hub, ALICE, PATH, contents[step[1]])
        elif step[0] == "edit":  # the body changes, the verified block stays
            current = (await get(hub, ALICE, PATH))["content"]
            wrote = await put(hub, ALICE, PATH, current.replace("Body.", "Edited."))
        elif step[0] == "review":
            wrote = await hub.kb.review(Caller.admin(), req(models.KbReview, path=PATH))
        elif step[0] == "confirm":  # an agent appends its own entry, stamped now
            current = (await get(hub, ALICE, PATH))["content"]
            entry = f"  - by: {step[1]}\n    at: {iso(clock.now())}\n"
            wrote = await put(
                hub,
                ALICE,
                PATH,
                current.replace("\n---\n", "\n" + entry.rstrip("\n") + "\n---\n", 1)
                if current.count("---") >= 2
                else current,
            )
        elif step[0] == "delete":
            await hub.kb.delete(ALICE, req(models.KbDelete, path=PATH))
            continue
        else:  # revert to the version stored by an earlier step
            wrote = await hub.kb.revert(ALICE, req(models.KbRevert, path=PATH, version=versions[step[1]]))
        versions.append(wrote["version"])
        contents.append((await get(hub, ALICE, PATH))["content"])


@pytest.mark.parametrize(("name", "steps", "expected"), CASES, ids=[c[0] for c in CASES])
async def test_trust_after_a_sequence(hub: Hub, clock: FakeClock, name: str, steps: list[Step], expected: str) -> None:
    await run(hub, clock, steps)
    assert await trust_of(hub, PATH) == expected


async def test_rows_without_the_note_fall_back_to_time(hub: Hub, clock: FakeClock) -> None:
    """An older hub's log rows carry no note: the page is edited when its newest write is later
    than the newest verified `at`, to the second. That row is made through the kb file's actor."""
    await put(hub, ALICE, PATH, text("x", ("bot", 0)))
    await hub.kb.files.execute("web", lambda conn: conn.execute("UPDATE log SET verifies = NULL"))
    clock.advance(0.9)  # still the stamp's second
    await put(hub, ALICE, PATH, text("x", ("bot", 0)) + "\n")  # noted: brings nothing; the old row decides
    assert await trust_of(hub, PATH) == "machine_confirmed"
    clock.advance(1)
    await put(hub, ALICE, PATH, text("x", ("bot", 0)) + "\n\n")
    assert await trust_of(hub, PATH) == "edited_since_review"


def v(by: str, at: float) -> Verified:
    return Verified(by, iso(START + at))


@pytest.mark.parametrize(
    ("stored", "replaced", "at", "expected"),
    [
        ((), None, 0, False),
        ((v("bot", 0),), None, 0, True),
        ((v("bot", 0),), (v("bot", 0),), 0, False),
        ((v("bot", 0),), (v("bot", 1),), 0, True),
        ((v("bot", 0), v("ann", 1)), (v("ann", 1),), 0, False),  # the block must END with the new entry
        ((v("bot", 0),), None, 300, True),
        ((v("bot", 0),), None, 300.001, False),
        ((v("bot", 0),), None, -300, True),
        ((Verified("bot", "not a time"),), None, 0, False),
    ],
)
def test_whether_a_write_brings_in_the_verification(
    stored: tuple[Verified, ...], replaced: Any, at: float, expected: bool
) -> None:
    assert brings_verification(stored, replaced, START + at) is expected


@pytest.mark.parametrize(
    ("verified", "notes", "expected"),
    [
        ((), [Note(START, "a", True)], "unverified"),
        ((v("human", 0),), [Note(START, "a", True)], "human_reviewed"),
        ((v("bot", 0),), [Note(START, "a", True)], "machine_confirmed"),
        ((v("bot", 0),), [Note(START, "b", False), Note(START, "a", True)], "edited_since_review"),
        (
            (v("bot", 0),),
            [Note(START, "a", False), Note(START, "b", False), Note(START, "a", True)],
            "machine_confirmed",
        ),
        ((v("bot", 0),), [Note(START, "a", False)], "edited_since_review"),
        ((v("bot", 0),), [Note(START + 0.99, "a", None)], "machine_confirmed"),
        ((v("bot", 0),), [Note(START + 1, "a", None)], "edited_since_review"),
        ((v("bot", 0),), [Note(START + 5, "a", False), Note(START, "a", None)], "edited_since_review"),
        ((Verified("bot", "garbled"),), [Note(START, "a", None)], "edited_since_review"),
    ],
)
def test_trust_from_the_notes(verified: tuple[Verified, ...], notes: list[Note], expected: str) -> None:
    assert trust(verified, notes, str(notes[0].version)) == expected
