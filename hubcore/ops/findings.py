"""What `check` and `doctor` say about a data directory: one line per finding, naming its subject
(a file relative to the directory, or the reading) and what was found."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Finding:
    """A reading (`problem` False: reported, never fails the command) or a problem."""

    subject: str
    message: str
    problem: bool = True

    def __str__(self) -> str:
        return f"{self.subject}: {self.message}"


def problems(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.problem]


def not_a_directory(root: Path) -> Finding:
    return Finding(str(root), "not a directory" if root.exists() else "no such directory")
