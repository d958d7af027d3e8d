"""Brain entries held on the event loop, so a get of a busy brain needs no thread.

A get reads its entry from the brain file on a worker thread: the hand-over costs the event loop
about as much as the rest of the call (docs/benchmarks.md, "Seventh session"). The entries a get
read and those a put wrote are kept here, by (session id, path), at most `ENTRY_CACHE_BYTES` of
values (least recently used out first; a value over `ENTRY_CACHED_MAX` is never kept), and only
while the session's brain is busy: a session none of whose entries was read or written for the
stores' idle time is forgotten (`sweep`, beside the idle reader connections' close), so the
memory goes back once agents stop.

The brains service is the only writer of entries, so it keeps this current itself: every entry
write and delete is bracketed by `writing` (its caller waits for the outcome even when cancelled,
since a queued command runs anyway), which ends by setting the entry it wrote or dropping the one
it deleted. A refusal (`HubError`) changed nothing; any other failure leaves the outcome unknown (a
broken store), so the session's entries are forgotten. A file replaced or removed whole (a fork's
copy, a removal) forgets its session's.

A read that missed fills the cache only when no write of that session began or ended while it
read (`moment` before, `fill` after): a snapshot older than a write that finished is never stored
over it, and the write that is still under way sets the entry when it ends.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from hubcore.errors import HubError
from hubcore.store.brain import Entry

ENTRY_CACHE_BYTES = 4 * 1024 * 1024  # values held at most (the machine the hub targets is small)
ENTRY_CACHED_MAX = 64 * 1024  # a larger value is read from its file each time


class EntryCache:
    """Brain entries by (session id, path); used on the event loop only."""

    def __init__(
        self,
        max_bytes: int = ENTRY_CACHE_BYTES,
        entry_max: int = ENTRY_CACHED_MAX,
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_bytes = max_bytes
        self.entry_max = entry_max
        self._monotonic = monotonic
        self._used: dict[str, float] = {}  # when each session held here was last read or written
        self._entries: OrderedDict[tuple[str, str], Entry] = OrderedDict()  # least recently used first
        self._paths: dict[str, set[str]] = {}  # the paths held, by session
        self.held_bytes = 0  # the values' sizes summed
        self._writes: dict[str, int] = {}  # writes ended, by session (what a read's fill compares)
        self._writing: dict[str, int] = {}  # writes under way, by session

    def get(self, session_id: str, path: str) -> Entry | None:
        entry = self._entries.get((session_id, path))
        if entry is not None:
            self._entries.move_to_end((session_id, path))
            self._used[session_id] = self._monotonic()
        return entry

    def moment(self, session_id: str) -> int | None:
        """Taken before a read of the session's file: what `fill` checks (None: a write is under
        way, so the read fills nothing)."""
        if self._writing.get(session_id):
            return None
        return self._writes.get(session_id, 0)

    def fill(self, session_id: str, entry: Entry, moment: int | None) -> None:
        """Keep what a read found, unless a write of the session began or ended since `moment`."""
        if moment is not None and not self._writing.get(session_id) and self._writes.get(session_id, 0) == moment:
            self._set(session_id, entry)

    @contextmanager
    def writing(self, session_id: str) -> Iterator[Write]:
        """Around one entry write or delete of the session: the entry is set or dropped as the
        block says (`Write`); a refusal changes nothing, any other exception forgets the
        session's entries."""
        self._writing[session_id] = self._writing.get(session_id, 0) + 1
        done = Write()
        try:
            yield done
        except HubError:
            raise
        except BaseException:
            self.forget(session_id)
            raise
        finally:
            self._writing[session_id] -= 1
            if not self._writing[session_id]:
                del self._writing[session_id]
            self._writes[session_id] = self._writes.get(session_id, 0) + 1
        if done.entry is not None:
            self._set(session_id, done.entry)
        elif done.removed is not None:
            self._drop((session_id, done.removed))

    def forget(self, session_id: str) -> None:
        """Drop every entry of the session (its file was replaced, removed, or may hold what is
        not known here); a read under way fills nothing."""
        self._writes[session_id] = self._writes.get(session_id, 0) + 1
        for path in list(self._paths.get(session_id, ())):
            self._drop((session_id, path))

    def sweep(self, idle_secs: float) -> int:
        """Forget the sessions none of whose entries was read or written for `idle_secs`; how many."""
        cutoff = self._monotonic() - idle_secs
        idle = [sid for sid, used in self._used.items() if used <= cutoff]
        for sid in idle:
            self.forget(sid)
        return len(idle)

    def _set(self, session_id: str, entry: Entry) -> None:
        key = (session_id, entry.path)
        self._drop(key)
        if len(entry.value) > self.entry_max:
            return
        self._entries[key] = entry
        self._paths.setdefault(session_id, set()).add(entry.path)
        self._used[session_id] = self._monotonic()
        self.held_bytes += len(entry.value)
        while self.held_bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: tuple[str, str]) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.held_bytes -= len(old.value)
            paths = self._paths[key[0]]
            paths.discard(key[1])
            if not paths:
                del self._paths[key[0]]
                del self._used[key[0]]

    def __len__(self) -> int:
        return len(self._entries)


class Write:
    """What an entry write did, told to `EntryCache.writing` by its block: the entry it wrote,
    or the path whose entry it deleted."""

    __slots__ = ("entry", "removed")

    def __init__(self) -> None:
        self.entry: Entry | None = None
        self.removed: str | None = None
