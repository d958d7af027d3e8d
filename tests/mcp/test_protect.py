"""Client-side protection (hubmcp.protect): the stdio bridge and `hub-cli call` turn a `password`
into ciphertext and an envelope on the agent's machine; what they send holds no password and
decrypts with it. The browser's side (WebCrypto) is tests/browser."""

from __future__ import annotations

import base64
import json

import pytest
from mcp_types import JSONRPCRequest, JSONRPCResponse

from hubmcp.protect import ITERATIONS, ProtectError, decrypt, encrypt, protect_arguments
from hubmcp.stdio import Pump, refusal
from tests.mcp.live import error_in_text

PASSWORD = "correct horse battery staple"
TEXT = "<h1>Quarterly numbers</h1><p>growth: 12%</p>"


def test_encrypt_writes_the_envelope_and_decrypts_only_with_the_password() -> None:
    content, envelope = encrypt(TEXT, PASSWORD)
    assert envelope["alg"] == "AES-256-GCM" and envelope["kdf"] == "PBKDF2-HMAC-SHA256"
    assert envelope["iterations"] == ITERATIONS == 600_000
    assert len(base64.b64decode(envelope["salt"])) == 16 and len(base64.b64decode(envelope["iv"])) == 12
    assert len(base64.b64decode(content)) == len(TEXT.encode()) + 16  # ciphertext and the GCM tag
    assert decrypt(content, envelope, PASSWORD) == TEXT
    with pytest.raises(ProtectError):
        decrypt(content, envelope, "wrong")
    again, other = encrypt(TEXT, PASSWORD)
    assert again != content and other["salt"] != envelope["salt"]  # fresh salt and iv each time


def test_protect_arguments_sends_no_password() -> None:
    sent = protect_arguments(
        "artifact_publish", {"project_id": "web", "kind": "html", "title": "Q", "content": TEXT, "password": PASSWORD}
    )
    assert "password" not in sent and sent["project_id"] == "web"
    wire = json.dumps(sent)
    assert PASSWORD not in wire and "Quarterly" not in wire
    assert decrypt(sent["content"], sent["envelope"], PASSWORD) == TEXT
    plain = {"project_id": "web", "content": TEXT}
    assert protect_arguments("artifact_publish", plain) == plain
    assert protect_arguments("signal_append", {"password": "x"}) == {"password": "x"}  # not a write tool


@pytest.mark.parametrize(
    "arguments",
    [
        {"content": TEXT, "password": ""},
        {"content": TEXT, "password": 7},
        {"content": TEXT, "password": PASSWORD, "envelope": {"alg": "AES-256-GCM"}},
        {"password": PASSWORD},
        {"content": 5, "password": PASSWORD},
    ],
)
def test_protect_arguments_refusals_never_carry_the_password(arguments: dict[str, object]) -> None:
    with pytest.raises(ProtectError) as refused:
        protect_arguments("artifact_update", {"artifact_id": "a1", **arguments})
    assert PASSWORD not in str(refused.value)


def test_the_bridge_encrypts_outbound_calls_and_advertises_password() -> None:
    pump = Pump()
    call = JSONRPCRequest(
        jsonrpc="2.0",
        id=3,
        method="tools/call",
        params={"name": "artifact_draft", "arguments": {"artifact_id": "a1", "content": TEXT, "password": PASSWORD}},
    )
    sent = pump.outbound(call)
    wire = sent.model_dump_json()
    assert PASSWORD not in wire and "Quarterly" not in wire
    arguments = sent.params["arguments"]
    assert set(arguments) == {"artifact_id", "content", "envelope"}
    assert decrypt(arguments["content"], arguments["envelope"], PASSWORD) == TEXT

    listing = JSONRPCRequest(jsonrpc="2.0", id=4, method="tools/list", params={})
    assert pump.outbound(listing) is listing
    tools = [
        {"name": "artifact_publish", "inputSchema": {"type": "object", "properties": {"content": {}}}},
        {"name": "whoami", "inputSchema": {"type": "object", "properties": {}}},
    ]
    shown = pump.inbound(JSONRPCResponse(jsonrpc="2.0", id=4, result={"tools": tools}))
    assert set(shown.result["tools"][0]["inputSchema"]["properties"]) == {"content", "password"}
    assert shown.result["tools"][1]["inputSchema"]["properties"] == {}


def test_the_bridge_refuses_a_bad_password_locally() -> None:
    pump = Pump()
    call = JSONRPCRequest(
        jsonrpc="2.0",
        id=5,
        method="tools/call",
        params={"name": "artifact_publish", "arguments": {"content": TEXT, "password": ""}},
    )
    with pytest.raises(ProtectError) as refused:
        pump.outbound(call)
    answer = refusal(5, str(refused.value))
    assert answer.result["isError"] is True
    assert error_in_text(answer.result)["code"] == "invalid_argument"
