"""The projects-and-agents part: projects, agents and their tokens, identity and health.

It owns the rows every other part hangs off (projects, agents, grants), so it has no share of a
project to purge: deleting the project row itself is the deletion's own last step.
"""

from __future__ import annotations

from hubcore.parts import Part
from hubcore.services.agents import AgentsService
from hubcore.services.auth import AuthService
from hubcore.services.core import Core
from hubcore.services.health import HealthService
from hubcore.services.identity import IdentityService
from hubcore.services.projects import ProjectsService


class ProjectsPart(Part):
    name = "projects-and-agents"

    def __init__(self, core: Core, *, opened_version: int) -> None:
        self.auth = AuthService(core)
        self.projects = ProjectsService(core)
        self.agents = AgentsService(core, credentials_changed=self.auth.forget_tokens)
        self.health = HealthService(core, opened_version=opened_version)
        self.identity = IdentityService(core)
