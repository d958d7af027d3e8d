"""`KbService`: the knowledge base as the adapters call it (REST routes, MCP tools, resources).

Every method takes a `Caller` and the operation's typed request (`hubcore.services.kb.models`),
and answers a JSON-ready dict (the spec's response members) or raises a `HubError`. A project the
caller cannot see is `not_found` (MCP maps it to `forbidden` for agents). Review and forget need
the admin; every other operation needs read access to the project (spec: "read access to the
project is the whole read rule"), writes included.

    write(caller, KbWrite)      -> {ok, path, version, size_bytes, lint[], warnings[]}
    read(caller, KbRead)        -> {path, content, version, size_bytes, last_write: {actor, at}}
                                   with version: {path, content, version, size_bytes, current, at, actor}
    list(caller, KbList)        -> {entries[], truncated}; entry {path, type, size_bytes, children},
                                   with meta: the page row fields too
    delete(caller, KbDelete)    -> {ok, path}
    review(caller, KbReview)    -> {ok, path, version}
    revert(caller, KbRevert)    -> {ok, path, store, version, size_bytes, lint[], warnings[], changed}
    promote(caller, KbPromote)  -> {ok, path, version, lint[]}
    history(caller, KbHistory)  -> {rows[], total, next_before, truncated}; row {op, path, actor, at, version}
    versions(caller, KbVersions)-> {path, current_version, versions[], total, next_before, truncated};
                                   row {id, op, actor, at, version, size_bytes, summary, kept, current}
    forget(caller, KbForget)    -> {ok, path, versions_forgotten, bytes_forgotten, unreferenced_forgotten}
    lint(caller, KbLint)        -> {checked_at, findings[]}; finding {code, path, message, line?, meta?}
    backlinks(caller, KbBacklinks) -> [{path, title}]
    stats(caller, KbProject)    -> {pages, bytes, unverified, stale, last_change_at, last_change_by,
                                    needs_review: {unverified, machine_confirmed, edited_since_review, total}}

Paths in the models are canonical page paths (`/fs/...`); a REST route turns its URL form into one
with `paths.from_url` (the leading slash dropped, `fs` optional) before parsing. `KbRead` serves
`resources/read` too; `walk(project_id)` gives every page (`views.Walk.pages`, path order) for
`resources/list`.

The rest of the hub reaches the knowledge base through its part (`hubcore/parts/kb.py`): the
brief's `stale_pages`, stats `kb_pages`, storage `kb_bytes`, the file's removal with its project.
"""

from __future__ import annotations

from hubcore.services.core import Core
from hubcore.services.kb.files import KbFiles
from hubcore.services.kb.history import HistoryService
from hubcore.services.kb.pages import BrainEntry, PagesService


class KbService(PagesService, HistoryService):
    def __init__(self, core: Core, files: KbFiles, brain_entry: BrainEntry | None = None) -> None:
        PagesService.__init__(self, core, files, brain_entry)
