"""`hub-cli enrol [why]`: ask a hub to admit this agent, wait for the human, keep the token.

Posts `POST /api/v1/enrol`, then long-polls `GET /api/v1/enrol/status?wait=30` with the pending
token until the human decides. Admitted: the hub URL and the token go to the client config
(`[client] url` and `token` in the file `HUB_CONFIG` names, mode 0600) and the agent id is printed.
A token already configured (`HUB_TOKEN` or `[client] token`) is not replaced without `--force`.

Exit codes (spec, Command line): 0 admitted; 1 the hub refused the request (closed, rate limited,
bad input); 2 usage (no reason, a reason over 200 characters, a token already configured); 69 the
hub unreachable; 77 the request refused by the human or abandoned (the pending token is refused);
78 no hub named.
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from hubcli import exits
from hubcli.firstrun import save_setting
from hubcli.rest import api_base
from hubcore.config import Settings, config_path

WHY_MAX_CLI = 200  # the spec's `--why` limit; the hub takes under 200 and says so itself
POLL_WAIT_SECS = 30
POLL_MARGIN_SECS = 15  # the status request's own timeout is the wait plus this


class EnrolFailed(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Ask:
    url: str
    display_name: str
    why: str
    suggested_id: str | None


def _err(message: str) -> None:
    sys.stderr.write(f"hub-cli enrol: {message}\n")


def plan(
    settings: Settings,
    *,
    why_arg: str | None,
    why: str | None,
    name: str | None,
    agent_id: str | None,
    url: str | None,
    force: bool,
) -> Ask:
    """What to ask, from the flags and the settings; `EnrolFailed` for usage errors."""
    hub_url = url or settings.client.url
    if not hub_url:
        raise EnrolFailed(exits.NOT_CONFIGURED, "no hub named: pass --url or set HUB_URL")
    if why_arg is not None and why is not None and why_arg != why:
        raise EnrolFailed(exits.USAGE, "give the reason once: as the argument or as --why")
    reason = (why if why is not None else why_arg or "").strip()
    if not reason:
        raise EnrolFailed(exits.USAGE, 'say why the hub should admit you: hub-cli enrol "<one line>"')
    if len(reason) > WHY_MAX_CLI:
        raise EnrolFailed(exits.USAGE, f"the reason is {len(reason)} characters; at most {WHY_MAX_CLI}")
    if settings.client.token and not force:
        raise EnrolFailed(
            exits.USAGE,
            "a token is already configured (HUB_TOKEN or [client] token); pass --force to enrol anyway and replace it",
        )
    display = (name or settings.client.agent_id or socket.gethostname() or "agent").strip()
    return Ask(hub_url, display, reason, agent_id or settings.client.agent_id)


def _problem(r: httpx.Response) -> str:
    try:
        body: Any = r.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return f"{body['code']}: {body.get('detail') or body.get('title') or ''}"
    return f"HTTP {r.status_code}"


def _request(http: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
    try:
        return http.request(method, url, **kwargs)
    except httpx.HTTPError as exc:
        raise EnrolFailed(exits.UNREACHABLE, f"cannot reach the hub at {url}: {exc}") from None


def ask_to_join(http: httpx.Client, ask: Ask) -> dict[str, Any]:
    body: dict[str, Any] = {"display_name": ask.display_name, "why": ask.why}
    if ask.suggested_id:
        body["suggested_id"] = ask.suggested_id
    r = _request(http, "POST", api_base(ask.url) + "/enrol", json=body)
    if r.status_code != 202:
        raise EnrolFailed(exits.REFUSED, f"the hub refused the request: {_problem(r)}")
    answer: dict[str, Any] = r.json()
    return answer


def wait_for_decision(http: httpx.Client, url: str, token: str) -> str:
    """Poll until admitted (returns the agent id); refused or abandoned is `EnrolFailed` 77."""
    status_url = api_base(url) + "/enrol/status"
    while True:
        r = _request(
            http,
            "GET",
            status_url,
            params={"wait": POLL_WAIT_SECS},
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(POLL_WAIT_SECS + POLL_MARGIN_SECS),
        )
        if r.status_code == 401:
            raise EnrolFailed(
                exits.TOKEN_REFUSED, "the request was refused, or abandoned before the human decided; nothing was saved"
            )
        if r.status_code != 200:
            raise EnrolFailed(exits.REFUSED, f"the hub refused the status poll: {_problem(r)}")
        status: dict[str, Any] = r.json()
        if status.get("status") == "approved":
            return str(status["agent_id"])


def run_enrol(
    settings: Settings,
    *,
    why_arg: str | None,
    why: str | None,
    name: str | None,
    agent_id: str | None,
    url: str | None,
    force: bool,
) -> int:
    try:
        ask = plan(settings, why_arg=why_arg, why=why, name=name, agent_id=agent_id, url=url, force=force)
        verify = ask.url.startswith("https:")
        with httpx.Client(timeout=httpx.Timeout(settings.client.timeout), verify=verify) as http:
            pending = ask_to_join(http, ask)
            _err(
                f"asked {ask.url} to admit agent {pending['agent_id']}; waiting for the human to decide "
                "(it shows in their inbox)"
            )
            admitted = wait_for_decision(http, ask.url, str(pending["token"]))
        path: Path = settings.path or config_path()
        save_setting(path, "client", "url", ask.url)
        save_setting(path, "client", "token", str(pending["token"]))
    except EnrolFailed as failure:
        _err(failure.message)
        return failure.code
    _err(f"admitted; the hub URL and token are saved in {path}")
    sys.stdout.write(f"{admitted}\n")
    return exits.OK
