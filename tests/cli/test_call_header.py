"""`hub-cli call` writes the `Mcp-Name` header itself (the mcp SDK's import would be most of the
command's start): its encoding must stay the SDK's, which the hub decodes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.inbound import decode_header_value, encode_header_value

from hubcli.client import header_value

CASES = [
    "whoami",
    "",
    "kb_read",
    "with space",
    " edge",
    "edge ",
    "tab\there",
    "caf\u00e9",
    "\u2603",
    "=?base64?d2hvYW1p?=",
    "=?base64?not base64?=",
    "line\nbreak",
    "\x7f",
    "~!@#$%^&*()",
]


@pytest.mark.parametrize("value", CASES)
def test_the_same_as_the_sdk(value: str) -> None:
    assert header_value(value) == encode_header_value(value)
    assert decode_header_value(header_value(value)) == value


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_the_same_as_the_sdk_for_any_text(value: str) -> None:
    assert header_value(value) == encode_header_value(value)
    assert decode_header_value(header_value(value)) == value
