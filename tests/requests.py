"""Typed requests for tests that call a service directly: parsed as an adapter parses them, so a
refusal is the same `HubError` a REST or MCP caller gets."""

from __future__ import annotations

from typing import Any

from hubcore.services.agents import AgentCreate, GrantAdd
from hubcore.services.attention import NotifyWait, Subscribe
from hubcore.services.brains import BrainDelete, BrainGet, BrainList, BrainPut
from hubcore.services.brief import SessionBrief
from hubcore.services.feed import FeedPage, FeedRead, FeedSeen
from hubcore.services.inbox import InboxMark, InboxRead, InboxWait, ReadAll
from hubcore.services.posts import IdeaPost, QuestionPost, SignalAppend
from hubcore.services.projects import ProjectCreate, ProjectUpdate
from hubcore.services.requests import parse
from hubcore.services.resolutions import AnswerPost, DecisionPost
from hubcore.services.sessions import SessionEnd, SessionList, SessionReassign, SessionStart
from hubcore.services.storage import PruneAll, PruneProject, PruneSession, PruneUndo


def a_signal(**fields: Any) -> SignalAppend:
    return parse(SignalAppend, fields)


def an_idea(**fields: Any) -> IdeaPost:
    return parse(IdeaPost, fields)


def an_answer(**fields: Any) -> AnswerPost:
    return parse(AnswerPost, fields)


def a_decision(**fields: Any) -> DecisionPost:
    return parse(DecisionPost, fields)


def a_feed_read(**fields: Any) -> FeedRead:
    return parse(FeedRead, fields)


def a_feed_page(**fields: Any) -> FeedPage:
    return parse(FeedPage, fields)


def a_question(**fields: Any) -> QuestionPost:
    return parse(QuestionPost, fields)


def an_inbox_read(**fields: Any) -> InboxRead:
    return parse(InboxRead, fields)


def an_inbox_wait(**fields: Any) -> InboxWait:
    return parse(InboxWait, fields)


def a_notify_wait(**fields: Any) -> NotifyWait:
    return parse(NotifyWait, fields)


def a_subscription(**fields: Any) -> Subscribe:
    return parse(Subscribe, fields)


def a_project(**fields: Any) -> ProjectCreate:
    return parse(ProjectCreate, fields)


def a_project_update(**fields: Any) -> ProjectUpdate:
    return parse(ProjectUpdate, fields)


def a_session_end(**fields: Any) -> SessionEnd:
    return parse(SessionEnd, fields)


def a_reassign(**fields: Any) -> SessionReassign:
    return parse(SessionReassign, fields)


def a_prune(**fields: Any) -> PruneAll | PruneProject | PruneSession:
    """A prune of one session (`session_id`), one project's (`project_id`), or all (neither)."""
    model = PruneSession if "session_id" in fields else PruneProject if "project_id" in fields else PruneAll
    return parse(model, fields)


def an_undo(token: Any) -> PruneUndo:
    return parse(PruneUndo, {"token": token})


def an_agent(**fields: Any) -> AgentCreate:
    return parse(AgentCreate, fields)


def a_grant(**fields: Any) -> GrantAdd:
    return parse(GrantAdd, fields)


def a_session_list(**fields: Any) -> SessionList:
    return parse(SessionList, fields)


def a_brief(**fields: Any) -> SessionBrief:
    return parse(SessionBrief, fields)


def a_read_all(**fields: Any) -> ReadAll:
    return parse(ReadAll, fields)


def an_inbox_mark(**fields: Any) -> InboxMark:
    return parse(InboxMark, fields)


def a_seen(**fields: Any) -> FeedSeen:
    return parse(FeedSeen, fields)


def a_brain_get(**fields: Any) -> BrainGet:
    return parse(BrainGet, fields)


def a_brain_list(**fields: Any) -> BrainList:
    return parse(BrainList, fields)


def a_brain_put(**fields: Any) -> BrainPut:
    return parse(BrainPut, fields)


def a_brain_delete(**fields: Any) -> BrainDelete:
    return parse(BrainDelete, fields)


def a_session_start(project_id: Any, name: Any, source: Any = None) -> SessionStart:
    """`source` is the request's `from` (a Python keyword)."""
    return parse(SessionStart, {"project_id": project_id, "name": name, "from": source})


def nested(depth: int) -> Any:
    """A JSON value `depth` lists deep: a wrong type for any member, and a parser's depth test."""
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value
