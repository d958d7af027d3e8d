"""Artifacts: versioned HTML or markdown an agent publishes for the human (issue 14).

Public API (the adapters call `hub.artifacts`, an `ArtifactService`; every method takes a `Caller`
and one typed request from `hubcore.services.artifacts.models`):

- `publish_artifact(caller, ArtifactPublish)` -> `{artifact_id, version: 1}`
- `update(caller, ArtifactUpdate)` -> `{artifact_id, version}` (seals a live version first)
- `draft(caller, ArtifactDraft)` -> `{artifact_id, live_version, live_rev, viewer_url}`
- `get(caller, ArtifactGet)` (`version`, `live`) -> `{id, project_id, actor, session_id, title, kind,
  description, version, label, size_bytes, protected, envelope, content, live, live_rev,
  live_version, comments_count, comments_open, created_at, updated_at}`
- `versions(caller, ArtifactRef)` -> `{artifact_id, versions: [{version, label, size_bytes,
  protected, actor, session_id, live, created_at, updated_at}]}`, oldest first
- `list(caller, ArtifactList)` (`project_id`, `session_id`, `limit`) -> `{artifacts: [summary]}`,
  newest updated first; a summary is `get` without `envelope`, `content`, `live`, `live_rev`
- `live(caller, ArtifactRef)` -> `{state: live|idle|sealed, version, live_rev, actor, session_id}`
- `raw(caller, ArtifactGet)` -> `(stored text, envelope dict or None)`
- `delete(caller, ArtifactRef)` -> `{ok: true}`

Rules, each in one place here: the title of a markdown artifact falls back to its first heading
when blank (else a blank title is refused); the project's password policy (`off` refuses an
envelope, `required` refuses plain content, each error saying what to send); a protected version is
base64 ciphertext plus the envelope (`models.Envelope`), stored as given; an update's or draft's
omitted envelope keeps the protection (a protected artifact then needs the new envelope), `envelope:
null` makes it plain; a stale `base_version` (against the newest version, the live one included)
is a conflict naming it unless `force`; a draft mints the next version and holds it live, later
drafts change it in place with a rising `live_rev`, another session's live version is a conflict
unless `force`; an update seals the live version, which becomes the current one, then adds its own;
the row's `actor` and `session_id` are the publisher's whoever updates later; idempotency scopes
`artifact:publish` (bound to the project) and `artifact:update` (bound to the artifact); events of
kind `artifact` with `action` `published`/`updated` (under the event ceiling, summary `published
<title>`/`updated <title>`) and `deleted` (exempt); stream messages `artifact-live` when a live
version is drafted, changed or sealed. Missing and denied artifacts answer the same `not_found`
(`rows.artifact_missing`; the MCP adapter shows agents `forbidden`, as for projects). The public (a
page) reads any artifact by id.

Bodies live in the blob store (`hubcore.store.blobs`); `ArtifactService.drop` removes blobs no
version references after the commit that dropped them. Comment tallies `comments_count` and
`comments_open` are columns of `artifacts` that the comment service keeps in its own commands.
"""

from hubcore.services.artifacts.models import (
    ArtifactDraft,
    ArtifactGet,
    ArtifactList,
    ArtifactPublish,
    ArtifactRef,
    ArtifactUpdate,
    Envelope,
)
from hubcore.services.artifacts.service import ArtifactService

__all__ = [
    "ArtifactDraft",
    "ArtifactGet",
    "ArtifactList",
    "ArtifactPublish",
    "ArtifactRef",
    "ArtifactService",
    "ArtifactUpdate",
    "Envelope",
]
