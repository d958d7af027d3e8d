"""The `Part` protocol: what one feature brings to the hub (DESIGN section 1, "Parts").

A part declares what it brings by overriding the members of `Part`; every member has a default
meaning "brings none", so a part overrides only what it has. Each part owns its data: its hub.db
steps (`migrations`), its store files (`files`), the SQL over its rows, what it feeds the search
index (`search_*`) and its stats and storage members. `Hub` builds its parts from one list
(`hubcore.hub.build_parts`, their classes `hubcore.parts.catalog.PART_TYPES`) and loops over them; no part holds a
reference to another, and adding a part touches no other part's module. A feature that is absent is
simply not in the list: what it would have counted reads as null, what it would have stored as
nothing. What must be known without a hub (hub.db's steps, store files) or of an absent part (its
stats members, its storage kinds) is declared on the class.

The hub-wide loops (project deletion, project stats, Home, the brief, storage rows, the search
index, commit observers, background tasks, decision hooks) read `Core.parts`, set once by `Hub`.
"""

from __future__ import annotations

import inspect
import re
import sqlite3
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from prometheus_client.registry import Collector

    from hubcore.caller import Caller
    from hubcore.ops.findings import Finding
    from hubcore.services.changes import Effects
    from hubcore.store.migrations import Migration

Task = Callable[[], Coroutine[Any, Any, None]]
# Runs inside a decision's command, after the answer event is written (enrolment admits or refuses
# the pending agent here): (conn, inbox item row, "approved" | "declined", now).
DecisionHook = Callable[[sqlite3.Connection, sqlite3.Row, str, float], None]


@dataclass(frozen=True)
class ResourceTemplate:
    """A URI template of resources a part serves (MCP `resources/templates/list`)."""

    uri_template: str
    name: str
    title: str = ""
    description: str = ""
    mime_type: str = "text/plain"


@dataclass(frozen=True)
class Resource:
    """One read-only view a part lists (MCP `resources/list`), e.g. a knowledge base page."""

    uri: str
    name: str
    mime_type: str = "text/plain"


SNIPPET_MAX = 200
_SPACE = re.compile(r"\s+")


def snippet_of(text: str) -> str:
    """The opening of `text` as one line of plain text, at most `SNIPPET_MAX` characters: every
    family's snippet is cut the same way."""
    # Flattening never lengthens text, so a long text's snippet is decided by its opening: when
    # the opening alone flattens to more than SNIPPET_MAX + 1 characters, the whole text's flat
    # form starts with all of them but the last (a closing space may merge with what follows), so
    # it is longer than SNIPPET_MAX and its cut is the opening's. A 2 KiB entry is flattened in
    # 4 x SNIPPET_MAX characters, not whole (each brain put's document is cut here on the loop).
    opening = _SPACE.sub(" ", text[: 4 * SNIPPET_MAX]).lstrip()
    if len(opening) > SNIPPET_MAX + 1:
        return opening[: SNIPPET_MAX - 1].rstrip() + "…"
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= SNIPPET_MAX else flat[: SNIPPET_MAX - 1].rstrip() + "…"


@dataclass(frozen=True)
class SearchDoc:
    """One document of the search index. `key` is unique within the family (an event id, an
    artifact id, `<session_id>:<path>`, `<project_id>:<path>`); `text` is indexed, `snippet` (at
    most 200 characters of plain text) shown; `meta` carries the family's hit fields."""

    family: str
    key: str
    project_id: str
    text: str
    snippet: str
    session_id: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


# Inside the index's write command: the documents whose rows still stand (None: the source went).
Still = Callable[[sqlite3.Connection, Sequence[SearchDoc]], Sequence[SearchDoc] | None]


@dataclass(frozen=True)
class SearchBatch:
    """What a part hands the index for one source: with `replace`, the source's documents are
    exactly `docs` (the old ones go); without, `docs` are added or replaced by key and the
    documents `gone` names ((family, key) pairs) are removed. `mark` is the source's mark once the
    batch is in; `more` asks for the next batch from that mark. `still`, run inside the index's
    write command on hub.db, gives the documents whose rows still stand, or None when the source
    itself went (its documents and mark are dropped): a pass reads a source before it writes, and
    a deletion may commit in between."""

    docs: Sequence[SearchDoc]
    mark: str
    replace: bool = True
    more: bool = False
    gone: Sequence[tuple[str, str]] = ()
    still: Still | None = None


# A hit's own members from its row and its document's meta.
HitOf = Callable[[sqlite3.Row, Mapping[str, Any]], dict[str, Any]]


class Touched(set[str]):
    """What a part changed since the index last took it (session, project or artifact ids, which
    the part names as its search sources): noting one (`add`) wakes the index's pass on the write
    side (`wake`, the hub's `Core.nudge.note`), so a query finds the index caught up and only reads."""

    def __init__(self, wake: Callable[[], None]) -> None:
        super().__init__()
        self._wake = wake

    def add(self, source: str) -> None:
        super().add(source)
        self._wake()

    def take(self) -> set[str]:
        """Every source noted so far, forgotten here (the index has them now)."""
        taken = set(self)
        self.clear()
        return taken


@dataclass(frozen=True)
class SearchFamily:
    """A family of search documents a part feeds (the `type` of its hits): `hit` gives a hit's own
    members from its row (the index's columns plus the parts' `SearchScope.columns`) and its
    document's `meta`."""

    name: str
    hit: HitOf


@dataclass(frozen=True)
class SearchScope:
    """What a part adds to every search query so that its own rows decide which documents are
    shown: `joins` onto the index's documents (`search_docs d`), `columns` read for its hits, and
    `live`, a condition every hit must meet (e.g. a brain hit's session exists unpruned); `session`,
    from the part that owns sessions, a statement giving a row when `:sid` is a session the caller
    may search within (`{visible}`: the caller's visibility over the projects `p`). The project's
    visibility to the caller is the hub's own rule (`services.access`)."""

    joins: str = ""
    columns: str = ""
    live: str = ""
    session: str = ""


@dataclass(frozen=True)
class FileStore:
    """A directory of per-file SQLite stores a part keeps under the data directory
    (`<directory>/<name>.db`), as the ops tools read it without a hub: `schema_version` is the
    newest `user_version` this binary makes there, `noun` what one file holds ("brain": doctor
    counts "brain files" and their "brain ... logs")."""

    directory: str
    schema_version: int
    noun: str


class Part:
    """What one feature brings to the hub. Override what the feature has; leave the rest."""

    name = "part"
    # Declared on the class, so that a hub lacking the part still knows the names (`Core.part_types`,
    # the binary's parts): a stats member the part fills reads as null where it is absent, and a
    # storage kind as zero bytes held.
    stats_members: ClassVar[Sequence[str]] = ()  # its members of `GET /projects/:id/stats`
    storage_kinds: ClassVar[Mapping[str, str]] = {}  # storage kind -> the report row's column
    # The families of the search documents it feeds (the `type` of their hits), in the order the
    # search request lists them: its `search_families` name these, in this order.
    search_family_names: ClassVar[Sequence[str]] = ()

    # -- stores --------------------------------------------------------------------------------

    @classmethod
    def migrations(cls) -> Sequence[Migration]:
        """The part's steps of hub.db's schema (its tables, indexes and triggers), each with its
        version in the one linear chain of the file: the hub gathers every part's steps and runs
        them in version order (`hubcore.hub.hub_migrations`), so a new part's step takes the next
        free number. Asked of the class: the hub migrates before it builds its parts."""
        return ()

    # -- its files, as the ops tools (`hub-cli check`, `doctor`, `backup`, `restore`) see them ------
    # All asked of the class: they run on a data directory, without a hub.

    file_stores: ClassVar[Sequence[FileStore]] = ()  # its per-file SQLite stores
    # What the first start on a restored directory removes of the part's (`sweep_restored`), as
    # doctor names it ("blobs", "brain files").
    restore_sweeps: ClassVar[str] = ""

    @classmethod
    def files(cls, data_dir: Path) -> Iterable[Path]:
        """The store files the part keeps under `data_dir`, for backup and integrity check: by
        default every `*.db` of its `file_stores`' directories."""
        return [path for store in cls.file_stores for path in sorted((data_dir / store.directory).glob("*.db"))]

    @classmethod
    def copied_files(cls, data_dir: Path) -> Iterable[Path]:
        """Files outside SQLite a backup copies byte for byte (the artifacts' blobs), temporary
        files left out."""
        return ()

    @classmethod
    def check_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        """`hub-cli check`: a problem per file hub.db (`conn`, read-only) says the part holds that
        is missing or differs from what hub.db records."""
        return ()

    @classmethod
    def doctor_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        """`hub-cli doctor`: the part's readings of the files hub.db references (cheaper than the
        check: presence, not content)."""
        return ()

    @classmethod
    def sweep_restored(cls, conn: sqlite3.Connection, data_dir: Path) -> int:
        """On a restored directory's first start (after migrations, before the stores open): remove
        the part's files hub.db (`conn`) does not reference; how many went."""
        return 0

    @classmethod
    def key_files(cls, data_dir: Path) -> Iterable[Path]:
        """Secrets the part keeps as plain files under `data_dir` (a backup copies them verbatim,
        a restore writes them 0600). Asked of the class, like `files`."""
        return ()

    def writes(self) -> int:
        """Writes to the part's stores outside hub.db so far; the hub's memoised measurements of
        the data directory are renewed when this or hub.db's command count moves."""
        return 0

    # -- a project's share ---------------------------------------------------------------------

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        """Remove the project's rows; runs inside the delete's command (same transaction as the
        project row), so a refused delete purges nothing."""

    async def after_delete(self, project_id: str) -> None:
        """Remove the project's files outside hub.db, after the delete committed."""

    async def project_stats(self, project_id: str) -> Mapping[str, int | None]:
        """The part's members of `GET /projects/:id/stats` (those `stats_members` names), and its
        `disk_bytes`, which adds up across parts."""
        return {}

    async def project_bytes(self) -> Mapping[str, Mapping[str, int | None]]:
        """Bytes each project holds in the part's stores, by the storage kinds it declares
        (`storage_kinds`): {kind: {project_id: bytes, or None when unmeasurable}}."""
        return {}

    # -- what the human and the agents read ----------------------------------------------------

    async def home(self) -> Mapping[str, Any]:
        """Members of the Home payload the part provides (e.g. `prunable`, `storage`)."""
        return {}

    def brief(
        self, conn: sqlite3.Connection, caller: Caller, project_id: str, since: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """Sections of `session_brief` the part provides, read in the brief's own read transaction
        on hub.db (e.g. the knowledge base's `stale_pages`); `since` is the brief's window."""
        return {}

    # -- what the part feeds the search index (the search part reads these; see `SearchBatch`) --

    def search_touched(self) -> set[str]:
        """The search sources the part changed since the last call, taken (an in-memory note: a
        crash loses it, and the start's reconcile through `search_sources` makes up for that)."""
        return set()

    async def search_sources(self) -> Mapping[str, str]:
        """Every search source the part holds with its mark (what changes whenever the source's
        indexed text does: a highest id, a write count, a digest). A source whose mark differs from
        the one indexed is indexed again; an indexed source no longer listed is removed."""
        return {}

    def search_pushed(self, marks: Mapping[str, str | None]) -> dict[str, SearchBatch]:
        """Batches for some of the touched sources (each given the mark it was indexed at) that
        the part's own writes handed over, so the pass needs no read of the part's stores; taken
        (given once). Each adds (`replace` False) and leaves the index exactly where
        `search_documents` from that mark would. A source left out is read as usual."""
        return {}

    async def search_documents(self, source: str, mark: str | None) -> SearchBatch | None:
        """The documents of `source` to index, given the mark it was indexed at (None: never);
        None when the source is gone (its documents are removed)."""
        return None

    def search_families(self) -> Sequence[SearchFamily]:
        """The families of the documents the part feeds (`search_family_names`), with how their
        hits read."""
        return ()

    def search_scope(self) -> SearchScope | None:
        """What every search query adds so that the part's rows decide visibility (None: nothing)."""
        return None

    def search_project_sources(self, project_id: str) -> Iterable[str]:
        """The part's search sources that a deletion of `project_id` ends, asked inside the
        delete's command after every part's `purge_rows` (their marks go with the project)."""
        return ()

    # -- resources (read-only views the MCP surface lists and reads) ----------------------------

    def resource_templates(self) -> Sequence[ResourceTemplate]:
        """URI templates of the resources the part serves."""
        return ()

    async def resources(self, caller: Caller, after: str | None, limit: int) -> Sequence[Resource]:
        """Up to `limit` resources `caller` may read, in the part's listing order, after the
        resource `after` (a URI of the part's own, as `owns_resource` says; None: from the start).
        A listing page is read from where it resumes, never by walking what came before it."""
        return ()

    def owns_resource(self, uri: str) -> bool:
        """Whether `uri` is in the part's URI space (a listing resuming after it resumes here)."""
        return False

    async def read_resource(self, caller: Caller, uri: str) -> tuple[str, str] | None:
        """(text, MIME type) of `uri` when it is in the part's URI space, None when it is not;
        a URI in its space that names nothing raises `not_found`, an unreadable one `forbidden`."""
        return None

    # -- reacting and running ------------------------------------------------------------------

    def on_commit(self, effects: Effects) -> None:
        """Every committed write's effects, after waiters and streams were handed them. Called on
        the event loop: never block, never raise."""

    def decision_hooks(self) -> Mapping[str, DecisionHook]:
        """Per inbox kind, what a decision on such an item also writes, in the same command."""
        return {}

    def review_subject(self, conn: sqlite3.Connection, project_id: str, artifact_id: str) -> dict[str, Any] | None:
        """What an approval naming `artifact_id` records as its `review` (None: not the part's),
        inside the approval's command; a refusal raises."""
        return None

    def review_of(self, conn: sqlite3.Connection, subject: dict[str, Any], verdict: str) -> dict[str, Any] | None:
        """What a decision on an approval whose payload holds `review` (`subject`) carries as its
        own `review` with `verdict` (`approved`, `changes_requested`, or `expired` when the hub
        resolved it at its deadline), inside the decision's command (None: not the part's)."""
        return None

    def background(self) -> Sequence[Task]:
        """Background tasks (sweepers, senders), started after the stores and cancelled before
        they close."""
        return ()

    def collectors(self) -> Sequence[Collector]:
        """Prometheus collectors the part's metrics are read through, at scrape time."""
        return ()


def overrides(part: Part, member: str) -> bool:
    """Whether the part brings something for `member` (it overrides the default; read statically,
    so a class-level member such as `migrations` compares as declared, not as a new bound method)."""
    return inspect.getattr_static(type(part), member) is not inspect.getattr_static(Part, member)


def add(*values: int | None) -> int | None:
    """A sum that is unknown when any part is unknown."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)
