"""Client-side protection of artifacts: a `password` argument becomes ciphertext and an envelope.

The stdio bridge and `hub-cli call` accept `password` on `artifact_publish`, `artifact_update` and
`artifact_draft`. They encrypt `content` here, on the agent's machine, and send only the base64
ciphertext and its envelope (DESIGN section 7: AES-256-GCM under a key derived with
PBKDF2-HMAC-SHA256, 600,000 iterations, a fresh random salt and iv); the password never crosses the
wire. The public page decrypts the same envelope in the browser with WebCrypto, whose AES-GCM output
is ciphertext followed by the 16-byte tag, exactly what `cryptography`'s AESGCM produces.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

PROTECTED_TOOLS = frozenset({"artifact_publish", "artifact_update", "artifact_draft"})
ALG, KDF, ITERATIONS = "AES-256-GCM", "PBKDF2-HMAC-SHA256", 600_000
SALT_BYTES, IV_BYTES = 16, 12
PASSWORD_SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": "protect this version: the content is encrypted on this machine with this password "
    "(AES-256-GCM, PBKDF2-HMAC-SHA256) and only ciphertext and its envelope reach the hub; "
    "the reader types the password in the page. Not with `envelope`.",
}


class ProtectError(ValueError):
    """A `password` argument that cannot be honoured (not a non-empty string, no text content,
    or sent beside an envelope). Never carries the password."""


def _key(password: str, salt: bytes, iterations: int = ITERATIONS) -> bytes:
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=iterations)
    return kdf.derive(password.encode("utf-8"))


def encrypt(plaintext: str, password: str) -> tuple[str, dict[str, Any]]:
    """(base64 ciphertext with its tag, envelope) of `plaintext` under `password`."""
    salt, iv = os.urandom(SALT_BYTES), os.urandom(IV_BYTES)
    sealed = AESGCM(_key(password, salt)).encrypt(iv, plaintext.encode("utf-8"), None)
    envelope = {
        "alg": ALG,
        "kdf": KDF,
        "iterations": ITERATIONS,
        "salt": base64.b64encode(salt).decode("ascii"),
        "iv": base64.b64encode(iv).decode("ascii"),
    }
    return base64.b64encode(sealed).decode("ascii"), envelope


def decrypt(content: str, envelope: Mapping[str, Any], password: str) -> str:
    """The plaintext of a protected version; ProtectError for a wrong password or a damaged body."""
    try:
        salt, iv = base64.b64decode(envelope["salt"]), base64.b64decode(envelope["iv"])
        key = _key(password, salt, int(envelope["iterations"]))
        return AESGCM(key).decrypt(iv, base64.b64decode(content), None).decode("utf-8")
    except (InvalidTag, KeyError, ValueError, TypeError):
        raise ProtectError("wrong password, or the ciphertext is damaged") from None


def protect_arguments(tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments to send: without `password`, and with `content` encrypted when it was given."""
    out = dict(arguments)
    if tool not in PROTECTED_TOOLS or "password" not in out:
        return out
    password = out.pop("password")
    if not isinstance(password, str) or not password:
        raise ProtectError("password must be a non-empty string")
    if out.get("envelope") is not None:
        raise ProtectError("send either password or envelope, not both")
    content = out.get("content")
    if not isinstance(content, str) or not content:
        raise ProtectError("password needs the content to encrypt as a non-empty string")
    out["content"], out["envelope"] = encrypt(content, password)
    return out


def advertise(tools: list[Any]) -> list[Any]:
    """A tools/list page with `password` added to the three write tools' input schemas."""
    shown = []
    for tool in tools:
        if isinstance(tool, dict) and tool.get("name") in PROTECTED_TOOLS and isinstance(tool.get("inputSchema"), dict):
            schema = dict(tool["inputSchema"])
            schema["properties"] = {**schema.get("properties", {}), "password": PASSWORD_SCHEMA}
            tool = {**tool, "inputSchema": schema}
        shown.append(tool)
    return shown
