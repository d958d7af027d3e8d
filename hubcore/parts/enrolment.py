"""The enrolment part: agents that ask to join (`hubcore.services.enrolment`).

What it brings: the decision hook that admits or refuses the pending agent inside the decision's
command, the commit observer that forgets cached tokens once a request is decided, and the sweeper
that removes requests past `enrol_pending_ttl_secs`. Its rows live in tables other parts own (the
agent, its personal space, the request event and inbox item), so it has no store of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from hubcore.parts.protocol import DecisionHook, Part, Task
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.enrolment import KIND, Decide, EnrolmentService, admit_or_refuse


class EnrolmentPart(Part):
    name = "enrolment"

    def __init__(self, core: Core, *, decide: Decide, credentials_changed: Callable[[], None]) -> None:
        self.enrolment = EnrolmentService(core, decide=decide, credentials_changed=credentials_changed)

    def decision_hooks(self) -> Mapping[str, DecisionHook]:
        return {KIND: admit_or_refuse}

    def on_commit(self, effects: Effects) -> None:
        self.enrolment.on_commit(effects)

    def background(self) -> Sequence[Task]:
        return (self.enrolment.run_sweeper,)
