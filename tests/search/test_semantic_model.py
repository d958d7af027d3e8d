"""The semantic model loads from its own wheel with networking off, and a hub without the
`semantic` extra (no numpy, no wordllama) still answers `mode=semantic`, lexically."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Any connection attempt fails loudly and is reported, whatever the sandbox allows.
NO_NETWORK = textwrap.dedent("""
    import socket
    attempts = []
    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("networking is off")
    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse
""")


def run(code: str, *, isolate_network: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", code]
    # A network namespace of its own (no interface but loopback) where the sandbox allows one.
    if (
        isolate_network
        and shutil.which("unshare")
        and subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode == 0
    ):
        command = ["unshare", "-rn", *command]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_the_model_loads_and_embeds_with_networking_off() -> None:
    done = run(
        NO_NETWORK
        + textwrap.dedent("""
        from hubcore.services.search.vectors import load_wordllama
        model = load_wordllama()
        vectors = model.embed(["the nightly database backup", "when is our data saved"])
        print(vectors.shape, round(float((vectors[0] ** 2).sum()), 3), len(attempts))
    """),
        isolate_network=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(2,", "256)", "1.0", "0"]  # unit vectors, no connection tried


def test_without_the_extra_semantic_mode_answers_lexically(tmp_path: Path) -> None:
    done = run(
        textwrap.dedent(f"""
        import sys
        sys.modules["numpy"] = None  # import numpy -> ImportError: the extra is not installed
        sys.modules["wordllama"] = None
        import anyio
        from hubcore.caller import Caller
        from hubcore.config import HubSettings
        from hubcore.hub import Hub
        from hubcore.services.posts import SignalAppend
        from hubcore.services.projects import ProjectCreate
        from hubcore.services.requests import parse
        from hubcore.services.search.models import SearchRequest

        async def main():
            admin = Caller.admin()
            settings = HubSettings(data_dir={str(tmp_path / "data")!r}, admin_token="x" * 43, min_free_bytes=0)
            async with Hub.open(settings) as hub:
                await hub.projects.create(admin, parse(ProjectCreate, {{"id": "web"}}))
                await hub.posts.signal_append(admin, parse(SignalAppend, {{"project_id": "web",
                                                                           "summary": "nightly backups"}}))
                for q in ("backups", "when is our data saved"):
                    r = await hub.search.search(admin, parse(SearchRequest, {{"q": q, "mode": "semantic"}}))
                    print(r["backend"], r["count"])
        anyio.run(main)
    """)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["fts-fallback", "1", "fts-fallback", "0"]


def test_every_text_embeds_to_a_unit_vector() -> None:
    import numpy as np
    import pytest

    vectors = pytest.importorskip("hubcore.services.search.vectors")
    model = vectors.load_wordllama()
    out = model.embed(["", " ", "ℵℵ", "🙂", "\x00", "a" * 5000, "the nightly backup"])
    assert out.shape == (7, 256) and not np.isnan(out).any()
    assert np.allclose(np.linalg.norm(out, axis=1), 1, atol=1e-3)
