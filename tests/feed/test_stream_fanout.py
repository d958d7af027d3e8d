"""Stream fan-out (issue 27 part 5): each change is encoded once into the change log's byte buffer,
a turn's chunk is one slice of it (filtered only for a stream that may not see every project), the
projects a span names come from a per-project index, and a stream pauses once a turn. These pin
what a subscriber sees through that structure: exactly its own changes, in order, none twice,
none lost, whatever the turns and the ring's wrap."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.changes import Change, ChangeLog, Notifier
from hubhttp.api import stream as stream_module
from tests.feed.test_stream import Stream, open_stream
from tests.harness import ADMIN_TOKEN, HubClient

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def no_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams rest between chunks so writes gather; these tests take many turns quickly."""
    monkeypatch.setattr(stream_module, "COALESCE_SECS", 0.0)
    monkeypatch.setattr(stream_module, "AGENT_COALESCE_SECS", 0.0)


def feed(project: str, n: int) -> Change:
    return Change("feed", project, f"{project}-{n:04d}")


async def ids_until(stream: Stream, last: str) -> list[str]:
    """Every event id the stream carries up to and including `last`, in the order sent."""
    seen: list[str] = []
    while last not in seen:
        for _, data in await stream.events(1):
            seen.append(str(data["event_id"]))
    return seen


def test_a_span_carries_each_change_frame_and_exactly_the_projects_it_names() -> None:
    log = ChangeLog(8)
    for n, project in enumerate(["a", "b", "a", "c", "a", "b", "d", "a", "e", "a", "b"]):
        log.append(feed(project, n))
    # 11 appended into 8 slots: positions 3..10 remain, wrapping the ring.
    assert log.span(2) is None  # overwritten: the stream refreshes instead
    span = log.span(3)
    assert span is not None and (span.start, span.end) == (3, 11)
    held = log.since(3)
    assert held is not None and held == log.changes(3, 11)
    assert [c.event_id for c in held] == [f"{p}-{n:04d}" for n, p in enumerate("abacabdaeab") if n >= 3]
    assert span.data == b"".join(c.frame for c in held) and span.count == 8
    assert span.projects == {"a", "b", "c", "d", "e"}
    assert log.span(7) is not None and log.span(7).projects == {"a", "b", "e"}  # type: ignore[union-attr]
    assert log.span(10) is not None and log.span(10).projects == {"b"}  # type: ignore[union-attr]
    empty = log.span(11)
    assert empty is not None and empty.count == 0 and empty.data == b"" and empty.projects == frozenset()
    assert log.changes(11, 11) == [] and log.changes(2, 11) is None
    assert feed("p", 1).frame == b'event: feed\ndata: {"project_id":"p","event_id":"p-0001"}\n\n'


def test_the_project_index_forgets_projects_that_left_the_ring() -> None:
    log = ChangeLog(4)
    for n in range(1000):
        log.append(feed(f"p{n}", n))  # a new project each time: the index must not grow with them
    assert len(log._latest) <= log.capacity + 1
    span = log.span(996)
    assert span is not None and span.projects == {"p996", "p997", "p998", "p999"}


def test_a_chunk_keeps_only_the_allowed_projects_and_is_shared_when_all_are_allowed() -> None:
    log = ChangeLog(16)
    for n, project in enumerate(["a", "b", "a"]):
        log.append(feed(project, n))
    span = log.span(0)
    assert span is not None
    chunks = stream_module.Chunks(log)
    everything = chunks.render(span, None)
    assert everything == feed("a", 0).frame + feed("b", 1).frame + feed("a", 2).frame
    assert everything is span.data  # the span's own bytes, not a copy
    assert chunks.render(span, frozenset({"a", "b", "z"})) is everything  # sees all it names: shared
    assert chunks.render(span, frozenset({"a"})) == feed("a", 0).frame + feed("a", 2).frame
    assert chunks.render(span, frozenset({"z"})) == b""


def test_the_byte_buffer_holds_every_span_exactly_and_stays_bounded_however_often_it_wraps() -> None:
    """Frames of many lengths, seven times round a ring of 64: every span's bytes and every
    filtered chunk equal the frames of exactly its changes, and the buffer never holds much more
    than the frames of the changes in the ring."""
    log = ChangeLog(64)
    projects = ["p", "project-" + "x" * 40, "q" * 90]
    for n in range(7 * 64):
        log.append(Change("feed", projects[n % 3 if n % 7 else 2], f"e{n}"))
        held = log.since(max(0, log.head - 64))
        assert held is not None
        ring_bytes = sum(len(c.frame) for c in held)
        assert ring_bytes <= len(log._bytes) <= ring_bytes * 9 // 8 + 200, (n, len(log._bytes), ring_bytes)
        for back in (1, 2, 33, 64):
            position = log.head - back
            if position < 0:
                continue
            span = log.span(position)
            changes = log.since(position)
            assert span is not None and changes is not None
            assert span.data == b"".join(c.frame for c in changes)
            some = frozenset({projects[0]})
            assert log.filtered(position, log.head, some) == b"".join(c.frame for c in changes if c.project_id in some)
    assert log.span(log.head - 65) is None and log.filtered(log.head - 65, log.head, frozenset({"p"})) is None


def test_a_filtered_chunk_whose_changes_left_the_ring_meanwhile_is_a_refresh() -> None:
    """A stream that may see some of its span's projects filters after it learns which (an
    await): if the ring wrapped past the span meanwhile, the chunk is None and the stream refreshes."""
    log = ChangeLog(4)
    for n, project in enumerate(["a", "b"]):
        log.append(feed(project, n))
    span = log.span(0)
    assert span is not None
    for n in range(4):
        log.append(feed("c", 10 + n))  # the span's changes are overwritten
    chunks = stream_module.Chunks(log)
    assert chunks.render(span, frozenset({"a"})) is None
    assert chunks.render(span, None) == feed("a", 0).frame + feed("b", 1).frame  # its bytes were taken whole


async def test_a_project_filtered_subscriber_gets_exactly_its_events_in_order_none_twice(
    client: HubClient, hub: Hub, bot: Caller
) -> None:
    await client.make_project("secret", confidential=True)
    visible = [feed("proj", n) for n in range(300)]
    async with open_stream(client, client.bot_token) as agent, open_stream(client, ADMIN_TOKEN) as admin:  # type: ignore[attr-defined]
        await agent.chunk()
        await admin.chunk()
        for n in range(0, 300, 7):  # bursts of mixed projects, with turns between some of them
            batch = [c for m in range(n, min(n + 7, 300)) for c in (visible[m], feed("secret", m))]
            hub.changes.publish(batch)
            if n % 3 == 0:
                await anyio.lowlevel.checkpoint()
        seen = await ids_until(agent, "proj-0299")
        everything = await ids_until(admin, "secret-0299")
    assert seen == [c.event_id for c in visible]  # its project only, every one, in order, once
    assert everything == [c.event_id for m in range(300) for c in (visible[m], feed("secret", m))]


async def test_a_subscriber_opened_mid_burst_hears_everything_from_its_opening(client: HubClient, hub: Hub) -> None:
    hub.changes.publish([feed("proj", n) for n in range(50)])
    async with open_stream(client, ADMIN_TOKEN) as early:
        await early.chunk()
        hub.changes.publish([feed("proj", n) for n in range(50, 100)])
        async with open_stream(client, ADMIN_TOKEN) as late:
            await late.chunk()
            hub.changes.publish([feed("proj", n) for n in range(100, 150)])
            got_late = await ids_until(late, "proj-0149")
        got_early = await ids_until(early, "proj-0149")
    assert got_early == [f"proj-{n:04d}" for n in range(50, 150)]
    assert got_late == [f"proj-{n:04d}" for n in range(100, 150)]  # nothing before it opened, nothing lost after


class CountingBudget(stream_module.TurnBudget):
    def __init__(self, log: ChangeLog) -> None:
        super().__init__(log, rate=1000.0, banked=1000.0)
        self.turns = 0

    def take(self) -> float:
        self.turns += 1
        return super().take()


async def test_a_stream_spends_one_budget_turn_and_one_pause_per_chunk(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    notifier = Notifier()
    pauses: list[float] = []
    until_closed = notifier.until_closed

    async def pause(seconds: float) -> None:
        pauses.append(seconds)
        await until_closed(seconds)

    monkeypatch.setattr(notifier, "until_closed", pause)
    budget = CountingBudget(notifier.log)
    reader = notifier.open_stream("agent:x", 0)
    visible = stream_module.Visible(hub, Caller.admin())
    messages = stream_module.messages(reader, visible, stream_module.Chunks(notifier.log), budget, 0.0)
    chunks = [await anext(messages)]
    for n in range(20):
        notifier.publish([feed("proj", n)])
        with anyio.fail_after(2):
            chunks.append(await anext(messages))
        notifier.publish([feed("proj", 100 + n)])  # pending as the turn ends: its turn is queued now
    await messages.aclose()
    assert chunks[0] == stream_module.CONNECTED
    sent = b"".join(chunks[1:])
    expected = [feed("proj", 0)] + [c for n in range(1, 20) for c in (feed("proj", 99 + n), feed("proj", n))]
    assert sent == b"".join(c.frame for c in expected)  # the last change was never taken
    assert len(chunks) == 21 and budget.turns == 20  # one turn per chunk
    assert len(pauses) == 19  # after each chunk but the last: the rest and the queued turn in one
    assert notifier.streams_open == 0


async def test_shutdown_cuts_a_pause_short_and_a_cancelled_pause_leaves_nothing_behind() -> None:
    notifier = Notifier()
    with anyio.move_on_after(0.01):
        await notifier.until_closed(60)
    assert not notifier._sleepers
    with anyio.fail_after(1):  # the task group exits only once the 60-second pause returned
        async with anyio.create_task_group() as tg:
            tg.start_soon(notifier.until_closed, 60)
            await anyio.sleep(0.01)
            assert len(notifier._sleepers) == 1
            notifier.close()
    assert not notifier._sleepers
    await notifier.until_closed(60)  # closed: returns at once


async def test_a_stream_whose_span_left_the_ring_while_it_learned_what_it_may_see_refreshes(hub: Hub) -> None:
    notifier = Notifier(capacity=4)

    class Busy(stream_module.Visible):
        """Sees only project a; while it answers, the hub writes past the whole ring."""

        async def allowed(self, projects: frozenset[str]) -> frozenset[str] | None:
            notifier.publish([feed("c", 100 + n) for n in range(4)])
            return frozenset({"a"})

    reader = notifier.open_stream("agent:x", 0)
    messages = stream_module.messages(reader, Busy(hub, Caller.admin()), stream_module.Chunks(notifier.log), None, 0.0)
    assert await anext(messages) == stream_module.CONNECTED
    notifier.publish([feed("a", 0), feed("b", 1)])
    with anyio.fail_after(2):
        assert await anext(messages) == stream_module.REFRESH  # not a chunk missing what went past
    await messages.aclose()
