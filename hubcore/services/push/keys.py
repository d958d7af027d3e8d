"""The hub's Web Push keys: the VAPID key pair (RFC 8292) and the secret that signs action
capabilities, made at the first start and kept in `<data_dir>/push/keys.json` (mode 0600).

The file is copied verbatim into every backup and back on restore, so a restored hub signs with the
same key and the devices subscribed to it keep working (a push service binds a subscription to the
application server's public key).
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from hubcore.store.fsync import fsync_dir

# cryptography (6.7 MB resident, 11 ms to import) is imported where a key is made or read, not with
# the module: a hub whose keys exist reads them as text at its start and needs it only to push.

KEYS_PATH = "push/keys.json"  # relative to the data directory (backup lists it by this name)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class PushKeys:
    private_pem: str  # PKCS#8 PEM of the P-256 VAPID key
    act_secret: bytes  # 32 random bytes: the HMAC key of action capabilities

    @property
    def public_key(self) -> str:
        """The VAPID public key as the browser's `applicationServerKey` takes it (base64url, 65 bytes)."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = serialization.load_pem_private_key(self.private_pem.encode("ascii"), password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        raw = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return b64url(raw)


def _new() -> PushKeys:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")
    return PushKeys(pem, secrets.token_bytes(32))


def _write(path: Path, keys: PushKeys) -> None:
    """Temp file at 0600, fsync, rename: a crash leaves the old file or the new one, never half."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = path.with_suffix(".tmp")
    data = json.dumps({"vapid_private_pem": keys.private_pem, "act_secret": b64url(keys.act_secret)}).encode()
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)
    fsync_dir(path.parent)


def load_or_create(data_dir: Path) -> PushKeys:
    """The data directory's push keys, made (and saved at 0600) when there are none yet."""
    path = data_dir / KEYS_PATH
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        keys = _new()
        _write(path, keys)
        return keys
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)  # a restore or a hand copy widened it: the key is a secret
    return PushKeys(str(raw["vapid_private_pem"]), unb64url(str(raw["act_secret"])))
