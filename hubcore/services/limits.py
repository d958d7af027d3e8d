"""The limits a client needs before it sends anything (`GET /api/v1/limits`): each read from the
constant the hub enforces it with, so no client copies a number (issue 28: the web app took five
limits by hand and they drifted). A limit over characters says `_chars`, over UTF-8 bytes `_bytes`.
"""

from __future__ import annotations

from typing import Any

from hubcore.services import entries, validate
from hubcore.services.artifacts import comments
from hubcore.services.fields import AGENT_ID_PATTERN, PROJECT_ID_PATTERN
from hubcore.services.kb.models import HISTORY_MAX
from hubcore.services.push.devices import NAME_MAX as DEVICE_NAME_MAX
from hubcore.services.resolutions import NOTE_MAX
from hubcore.services.search.models import FAMILIES
from hubcore.services.search.query import QUERY_MAX_BYTES, TERMS_MAX
from hubcore.services.sessions import HANDOFF_MAX, LISTING_MAX


def limits() -> dict[str, Any]:
    """Every limit the web app shows or checks before sending, from the rule's own constant."""
    return {
        "project_id": {"pattern": PROJECT_ID_PATTERN, "max_chars": validate.PROJECT_ID_MAX},
        "agent_id": {"pattern": AGENT_ID_PATTERN, "max_chars": validate.AGENT_ID_MAX},
        "display_name_chars": validate.DISPLAY_NAME_MAX,
        "comment_body_chars": comments.BODY_MAX,
        "comment_quote_chars": comments.QUOTE_MAX,
        "decision_note_chars": NOTE_MAX,
        "handoff_chars": HANDOFF_MAX,
        "sessions_listing": LISTING_MAX,
        "kb_page_bytes": entries.PAGE_MAX,
        "kb_history_page": HISTORY_MAX,
        "search_query_bytes": QUERY_MAX_BYTES,
        "search_terms": TERMS_MAX,
        "search_types": list(FAMILIES),  # the families the parts declare: a new one needs no app edit
        "push_device_name_chars": DEVICE_NAME_MAX,
    }
