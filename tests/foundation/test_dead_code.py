"""No dead code: vulture over hubcore, hubhttp, hubmcp, hubcli and tools finds nothing that is not
justified in tools/vulture_whitelist.py (or a REST response model's field, passed by rule)."""

from __future__ import annotations

import ast
import re

from tools.dead_code import ROOT, findings, is_response_field


def test_vulture_finds_no_dead_code() -> None:
    left = findings()
    assert not left, "unused code (delete it, or justify it in tools/vulture_whitelist.py):\n" + "\n".join(left)


def field_line(path: str, cls: str, name: str) -> int:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return next(s.lineno for s in node.body if isinstance(s, ast.AnnAssign) and getattr(s.target, "id", "") == name)


def test_only_response_model_fields_pass_by_rule() -> None:
    """A field of a class deriving from `Out` passes; a dataclass field in hubhttp and a request
    model's field in hubcore do not, and neither does a function."""
    model = field_line("hubhttp/api/responses.py", "Project", "owner_agent")
    assert is_response_field(f"hubhttp/api/responses.py:{model}: unused variable 'owner_agent' (60% confidence)")
    other = field_line("hubhttp/gate.py", "BodyPace", "min_rate")
    assert not is_response_field(f"hubhttp/gate.py:{other}: unused variable 'min_rate' (60% confidence)")
    request = field_line("hubcore/services/push/devices.py", "DeviceCreate", "expirationTime")
    assert not is_response_field(
        f"hubcore/services/push/devices.py:{request}: unused variable 'expirationTime' (60% confidence)"
    )
    assert not is_response_field(f"hubhttp/api/responses.py:{model}: unused function 'owner_agent' (60% confidence)")


def test_the_whitelist_names_only_what_vulture_would_report() -> None:
    """Every whitelisted name still exists in the code it justifies (a stale entry hides new dead
    code of the same name)."""
    whitelist = (ROOT / "tools/vulture_whitelist.py").read_text(encoding="utf-8")
    names = [n.attr for n in ast.walk(ast.parse(whitelist)) if isinstance(n, ast.Attribute)]
    assert names, "the whitelist is empty or unreadable"
    files = (
        p
        for package in ("hubcore", "hubhttp", "hubmcp", "hubcli", "tools")
        for p in sorted((ROOT / package).rglob("*.py"))
        if p.name != "vulture_whitelist.py" and "node_modules" not in p.parts
    )
    sources = "\n".join(p.read_text(encoding="utf-8") for p in files)
    missing = [n for n in names if not re.search(rf"\b{re.escape(n)}\b", sources)]
    assert not missing, f"whitelisted names no longer in the code: {missing}"
