"""The projects-and-agents part: projects, agents and their tokens, identity and health.

It owns the rows every other part hangs off (projects, agents, grants), so it has no share of a
project to purge: deleting the project row itself is the deletion's own last step.
"""

from __future__ import annotations

from collections.abc import Sequence

from hubcore.parts.protocol import Part
from hubcore.services.agents import AgentsService
from hubcore.services.auth import AuthService
from hubcore.services.core import Core
from hubcore.services.health import HealthService
from hubcore.services.identity import IdentityService
from hubcore.services.projects import ProjectsService
from hubcore.services.projects_schema import MIGRATIONS
from hubcore.store.migrations import Migration


class ProjectsPart(Part):
    name = "projects-and-agents"

    def __init__(self, core: Core, *, opened_version: int, supported_version: int) -> None:
        self.auth = AuthService(core)
        self.projects = ProjectsService(core)
        self.agents = AgentsService(core, credentials_changed=self.auth.forget_tokens)
        self.health = HealthService(core, opened_version=opened_version, supported_version=supported_version)
        self.identity = IdentityService(core)

    @classmethod
    def migrations(cls) -> Sequence[Migration]:
        return MIGRATIONS
