"""Dead code in the hub's packages and tools: vulture as pyproject.toml configures it ([tool.vulture]),
less the fields of the REST response models. Prints what is left, one `path:line: what` a line, and
exits 1 when anything is; 0 when clean.

Run: `.venv/bin/python tools/dead_code.py` (about 4 s). tests/foundation/test_dead_code.py runs it.

A response model's field is written into every JSON body and the OpenAPI document by pydantic, and no
Python reads it by name, so vulture would name every one (about 90). They are passed by rule, not
listed: a field of a class that derives from `hubhttp.api.responses.Out`. Everything else vulture
names is either deleted or justified in tools/vulture_whitelist.py.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESPONSE_ROOT = "Out"  # hubhttp.api.responses.Out, the base of every REST response model
FINDING = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): unused variable '(?P<name>[^']+)'")


@cache
def response_fields(path: str) -> frozenset[int]:
    """The lines of the fields declared in `path`'s response models (classes deriving from `Out`,
    directly or through another class of the same module)."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    models: set[str] = set()

    def is_model(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name == RESPONSE_ROOT or name in models:
            return True
        node = classes.get(name)
        if node is None or name in seen:
            return False
        found = any(isinstance(b, ast.Name) and is_model(b.id, seen | {name}) for b in node.bases)
        if found:
            models.add(name)
        return found

    return frozenset(
        stmt.lineno
        for name, node in classes.items()
        if name != RESPONSE_ROOT and is_model(name)
        for stmt in node.body
        if isinstance(stmt, ast.AnnAssign)
    )


def is_response_field(finding: str) -> bool:
    match = FINDING.match(finding)
    return (
        match is not None
        and match["path"].startswith("hubhttp/")
        and int(match["line"]) in response_fields(match["path"])
    )


def findings() -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "vulture"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    if result.returncode not in (0, 3):  # 3: vulture found dead code; anything else: it failed
        raise RuntimeError(f"vulture failed ({result.returncode}): {result.stderr.strip()}")
    return [line for line in result.stdout.splitlines() if line.strip() and not is_response_field(line)]


def main() -> int:
    left = findings()
    for line in left:
        print(line)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
