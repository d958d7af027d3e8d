"""First run: with no admin token configured on a loopback bind, make one and keep it."""

from __future__ import annotations

import os
from pathlib import Path

import tomlkit

from hubcore.tokens import new_token


def save_setting(path: Path, section: str, key: str, value: str) -> None:
    """Set `[section] key = value` in the TOML file, keeping everything else as written.

    The file is written beside itself and renamed into place, at mode 0600: it holds secrets.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    table = doc.get(section)
    if table is None:
        table = tomlkit.table()
        doc[section] = table
    table[key] = value
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(tomlkit.dumps(doc))
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def make_admin_token(config_file: Path) -> str:
    token = new_token()
    save_setting(config_file, "hub", "admin_token", token)
    return token
