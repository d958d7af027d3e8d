"""Settings: a TOML file with `[hub]` and `[client]` sections, overridden by `HUB_*` variables.

The file is `$HUB_CONFIG`, else `$XDG_CONFIG_HOME/agent-hub/config.toml`, else
`~/.config/agent-hub/config.toml`. Every setting the spec names is recognised here, including those
whose feature arrives later, so `config --check` can tell a typo from a real key.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Final, get_args, get_origin, get_type_hints

from hubcore.errors import HubError


class ConfigError(HubError):
    """The config file or an override cannot be used; names the offending key or file."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid_argument", message)


def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("HUB_CONFIG"):
        return Path(env["HUB_CONFIG"])
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "agent-hub" / "config.toml"


@dataclass(frozen=True)
class HubSettings:
    bind: str = "127.0.0.1:8080"
    data_dir: str = "./data"
    admin_token: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    public_url: str | None = None
    min_free_bytes: int = 256 * 1024 * 1024
    synchronous: str = "normal"
    shutdown_grace_secs: float = 10.0
    log_level: str = "info"
    backup_dir: str | None = None
    integrity_sample_secs: int = 0
    enrol: str = "on"
    trust_proxy: list[str] = field(default_factory=list)
    enrol_pending_max: int = 20
    enrol_pending_ttl_secs: int = 86400
    notify_url: str | None = None
    notify_token: str | None = None
    notify_interval_secs: int = 60
    # The VAPID `sub` claim (RFC 8292): how a push service reaches the hub's operator (mailto: or https:).
    push_contact: str = "mailto:operator@agent-hub.invalid"
    events_per_project: int = 1_000_000
    inbox_open_per_agent: int = 100
    inbox_open_per_project: int = 1000
    prune_undo_secs: int = 60
    # Writer actors kept open per pool of per-file stores (session brains; knowledge bases), the
    # least recently used idle one closed past it: each costs a thread, a write connection (3
    # files) and about 220 KiB. 256 holds the writers of 200 busy sessions without reopening
    # files (a reopen costs about 1.5 ms of CPU and its close a checkpoint).
    open_stores_max: int = 256
    # Read-only connections kept open across session brain files (reads never open a writer
    # actor): each costs 2 or 3 files and about 120 KiB.
    open_readers_max: int = 512
    store_idle_secs: float = 60.0  # an actor or reader connection idle this long is closed
    body_idle_secs: float = 30.0  # a request body with no byte for this long is cut (408)
    body_min_rate: int = 1024  # bytes a second, on average, a body must keep up once idle_secs passed
    streams_per_token: int = 8  # open `GET /api/v1/stream` responses per token; 0: no cap

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser().resolve()

    @property
    def host_port(self) -> tuple[str, int]:
        return split_bind(self.bind)


@dataclass(frozen=True)
class ClientSettings:
    url: str | None = None
    token: str | None = None
    agent_id: str | None = None
    project: str | None = None
    timeout: float = 30.0


@dataclass(frozen=True)
class Key:
    """One recognised setting: its type, default and environment variable."""

    kind: type
    default: Any
    env: str


def _base_type(hint: object) -> type:
    """`str | None` -> str, `list[str]` -> list, `int` -> int."""
    if get_origin(hint) is list:
        return list
    args = [a for a in get_args(hint) if a is not type(None)]
    base = args[0] if args else hint
    if not isinstance(base, type):
        raise TypeError(f"a setting must be a plain type, a list, or one of them or None: {hint!r}")
    return base


def _keys(settings: type) -> dict[str, Key]:
    """The recognised keys of a settings dataclass, read from its fields: the dataclass is the one
    place a setting's type and default are written. Every variable is `HUB_` + the key's name."""
    hints = get_type_hints(settings)
    keys: dict[str, Key] = {}
    for f in fields(settings):
        kind = _base_type(hints[f.name])
        default = f.default_factory() if f.default_factory is not MISSING else f.default
        keys[f.name] = Key(kind, default, f"HUB_{f.name.upper()}")
    return keys


HUB_KEYS: Final[dict[str, Key]] = _keys(HubSettings)
CLIENT_KEYS: Final[dict[str, Key]] = _keys(ClientSettings)
SECTIONS: Final[dict[str, dict[str, Key]]] = {"hub": HUB_KEYS, "client": CLIENT_KEYS}


@dataclass(frozen=True)
class Settings:
    hub: HubSettings
    client: ClientSettings
    path: Path


def split_bind(bind: str) -> tuple[str, int]:
    host, sep, port = bind.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"bind {bind!r} is not host:port")
    return host.strip("[]") or "127.0.0.1", int(port)


def read_file(path: Path) -> dict[str, Any]:
    """The parsed file, or `{}` when it does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def unknown_keys(raw: Mapping[str, Any]) -> list[str]:
    """Dotted names of keys under `[hub]` or `[client]` that no setting knows."""
    found = []
    for section, keys in SECTIONS.items():
        table = raw.get(section, {})
        if not isinstance(table, dict):
            found.append(section)
            continue
        found.extend(f"{section}.{name}" for name in table if name not in keys)
    return found


def _coerce(name: str, key: Key, value: Any, *, from_env: bool) -> Any:
    if value is None:
        return None
    if key.kind is list:
        if from_env:
            return [part.strip() for part in str(value).split(",") if part.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        raise ConfigError(f"{name} must be a list of strings")
    if key.kind is bool or isinstance(value, bool):
        raise ConfigError(f"{name} must be a {key.kind.__name__}")
    try:
        if key.kind is int:
            if isinstance(value, float):
                raise ValueError
            return int(value)
        if key.kind is float:
            return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, not {value!r}") from None
    if not isinstance(value, str):
        raise ConfigError(f"{name} must be a string")
    return value


def _section(section: str, table: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, key in SECTIONS[section].items():
        if key.env in env and env[key.env] != "":
            values[name] = _coerce(key.env, key, env[key.env], from_env=True)
        elif name in table:
            values[name] = _coerce(f"{section}.{name}", key, table[name], from_env=False)
    return values


def load(env: Mapping[str, str] | None = None, *, path: Path | None = None) -> Settings:
    """Settings from the file and the environment. Unknown keys are tolerated here (serve keeps
    running on an old file); `config --check` is where they are reported."""
    env = os.environ if env is None else env
    path = path or config_path(env)
    raw = read_file(path)
    hub_table = raw.get("hub", {}) if isinstance(raw.get("hub"), dict) else {}
    client_table = raw.get("client", {}) if isinstance(raw.get("client"), dict) else {}
    hub_values = _section("hub", hub_table, env)
    hub = HubSettings(**{f.name: hub_values[f.name] for f in fields(HubSettings) if f.name in hub_values})
    client_values = _section("client", client_table, env)
    client = ClientSettings(**client_values)
    validate(hub)
    return Settings(hub=hub, client=client, path=path)


def validate(hub: HubSettings) -> None:
    split_bind(hub.bind)
    if hub.synchronous not in ("normal", "full"):
        raise ConfigError("hub.synchronous must be 'normal' or 'full'")
    if hub.enrol not in ("on", "off"):
        raise ConfigError("hub.enrol must be 'on' or 'off'")
    if bool(hub.tls_cert) != bool(hub.tls_key):
        raise ConfigError("hub.tls_cert and hub.tls_key must be set together")
    if not hub.push_contact.startswith(("mailto:", "https://")):
        raise ConfigError("hub.push_contact must be a mailto: or https:// address (the VAPID sub claim)")
    for name in (
        "min_free_bytes",
        "events_per_project",
        "notify_interval_secs",
        "prune_undo_secs",
        "inbox_open_per_agent",
        "inbox_open_per_project",
        "enrol_pending_max",
        "enrol_pending_ttl_secs",
        "streams_per_token",
        "body_idle_secs",
        "body_min_rate",
        "integrity_sample_secs",
    ):
        if getattr(hub, name) < 0:
            raise ConfigError(f"hub.{name} must not be negative")
    for entry in hub.trust_proxy:  # an entry that names nothing would silently trust nobody
        try:
            ipaddress.ip_network(entry.strip(), strict=False)
        except ValueError:
            raise ConfigError(f"hub.trust_proxy entry {entry!r} is not an IP address or network") from None
    if hub.open_stores_max < 1:
        raise ConfigError("hub.open_stores_max must be at least 1")
    if hub.open_readers_max < 1:
        raise ConfigError("hub.open_readers_max must be at least 1")
    if hub.backup_dir and _within(Path(hub.backup_dir).expanduser(), hub.data_path):
        raise ConfigError(
            f"hub.backup_dir {hub.backup_dir} lies inside the data directory {hub.data_path} "
            "(symlinks resolved): backups must live outside it"
        )


def _within(path: Path, root: Path) -> bool:
    """`path` is `root` or beneath it, symlinks resolved (the backup service re-checks each time)."""
    resolved = path.resolve()
    return resolved == root or root in resolved.parents


def check(env: Mapping[str, str] | None = None, *, path: Path | None = None) -> list[str]:
    """Problems with the configuration, one line each; empty when it is usable as it stands."""
    env = os.environ if env is None else env
    path = path or config_path(env)
    try:
        raw = read_file(path)
    except ConfigError as exc:
        return [exc.message]
    problems = [f"unknown key {name} in {path}" for name in unknown_keys(raw)]
    try:
        load(env, path=path)
    except ConfigError as exc:
        problems.append(exc.message)
    return problems


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")
