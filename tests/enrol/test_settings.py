"""Enrolment's settings: refused at load when they cannot mean anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubcore.config import ConfigError, load


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"HUB_TRUST_PROXY": "10.0.0.1, proxy.lan"}, "hub.trust_proxy entry 'proxy.lan'"),
        ({"HUB_TRUST_PROXY": "10.0.0.0/33"}, "hub.trust_proxy entry '10.0.0.0/33'"),
        ({"HUB_ENROL_PENDING_TTL_SECS": "-1"}, "hub.enrol_pending_ttl_secs must not be negative"),
        ({"HUB_ENROL_PENDING_MAX": "-1"}, "hub.enrol_pending_max must not be negative"),
        ({"HUB_ENROL": "closed"}, "hub.enrol must be 'on' or 'off'"),
    ],
)
def test_unusable_values_are_refused_naming_the_key(tmp_path: Path, env: dict[str, str], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(env, path=tmp_path / "none.toml")
    assert words in caught.value.message


def test_addresses_and_networks_load(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[hub]\ntrust_proxy = ["127.0.0.1", "::1", "100.64.0.0/10"]\nenrol = "off"\n')
    hub = load({}, path=path).hub
    assert (hub.trust_proxy, hub.enrol) == (["127.0.0.1", "::1", "100.64.0.0/10"], "off")
