"""The built wheel is a complete hub: `python -m build` makes a wheel and an sdist from a copy of the
source tree, the wheel is installed into a fresh virtualenv, and `hub-cli serve` from that venv
(run in an empty directory, no source tree on any path) serves the web app, a public artifact
page with its assets and the bootstrap guide.

The fresh venv gets the wheel alone (`--no-deps`); its dependencies are read from the test's own
environment through a `.pth` line appended after the venv's site-packages, so the test needs no
network and no download, while everything of the hub itself comes from the wheel (checked: the
served process's modules live in the venv). `tools/serve` on a bare clone exercises the full
dependency install (README, Quick start).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tarfile
import time
import venv
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.foundation.test_serve_e2e import free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "wheel-test-admin-token-0123456789abcdef"
# What a source copy leaves out: environments, caches, data, VCS.
SKIP = shutil.ignore_patterns(
    ".git",
    ".venv",
    "__pycache__",
    "*.egg-info",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "data",
    "build",
    "dist",
    "node_modules",
    ".node",
)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and the sdist, built from a copy of the tree (the build writes egg-info beside
    the sources; the checkout is shared by parallel tests)."""
    work = tmp_path_factory.mktemp("build")
    src = work / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=SKIP)
    out = work / "dist"
    run = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
        env=clean_env(),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel; returns its bin directory."""
    env_dir = tmp_path_factory.mktemp("venv") / "venv"
    venv.create(env_dir, with_pip=False)  # this environment's pip installs into it (`--python`)
    bin_dir = env_dir / "bin"
    wheel = next(dist.glob("agent_hub-*.whl"))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(bin_dir / "python"),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    purelib = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies, from this environment's site-packages (after the venv's own, so nothing of
    # the hub is found there first; the editable install's finder is not loaded from a .pth path).
    deps = [p for p in {sysconfig.get_path("purelib"), *site.getsitepackages()} if p != purelib]
    (Path(purelib) / "zz_test_dependencies.pth").write_text("\n".join(deps) + "\n")
    return bin_dir


def clean_env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH (it would put the source tree on the path) and no hub settings."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith(("HUB_", "VIRTUAL_ENV"))}
    env.update(extra)
    return env


def test_the_wheel_and_the_sdist_carry_the_web_app_the_page_assets_and_the_agent_guide(dist: Path) -> None:
    pwa = {
        p.relative_to(ROOT / "pwa").as_posix()
        for p in (ROOT / "pwa").rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }
    assert {"index.html", "sw.js", "manifest.webmanifest", "icons/icon-192.png"} <= pwa
    wheel = zipfile.ZipFile(next(dist.glob("agent_hub-*.whl")))
    with wheel:
        names = set(wheel.namelist())
    assert {f"hubhttp/pwa/{rel}" for rel in pwa} <= names  # every file of the app, icons and libraries
    assert {
        "hubhttp/pages/assets/viewer.js",
        "hubhttp/pages/assets/mermaid.min.js",
        "hubmcp/bootstrap.md",
        "hubmcp/skill/SKILL.md",
    } <= names
    assert not any(n.startswith(("tests/", "tools/", "pwa/")) for n in names)
    with tarfile.open(next(dist.glob("agent_hub-*.tar.gz"))) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name and m.isfile()}
    assert {f"hubhttp/pwa/{rel}" for rel in pwa} <= members  # a wheel built from the sdist is complete too


def test_the_installed_wheel_serves_the_app_pages_and_guide_from_no_source_tree(
    installed: Path, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    (tmp_path / "config.toml").write_text(f'[hub]\nadmin_token = "{ADMIN}"\n')
    env = clean_env(
        HUB_CONFIG=str(tmp_path / "config.toml"),
        HUB_DATA_DIR=str(tmp_path / "data"),
        HUB_BIND=f"127.0.0.1:{port}",
        HUB_MIN_FREE_BYTES="0",
        HUB_SHUTDOWN_GRACE_SECS="3",
    )
    with served(installed, env, tmp_path) as proc:
        wait_ready(url, proc)
        with httpx.Client(base_url=url, timeout=10) as http:
            index = http.get("/")
            assert index.status_code == 200 and "text/html" in index.headers["content-type"]
            assert '<script type="module"' in index.text
            sw = http.get("/sw.js")
            assert sw.status_code == 200 and "__SHELL_DIGEST__" not in sw.text
            shell = http.get("/app/shell.json").json()
            assert "/app/js/screens/home.js" in shell["files"] and "/app/icons/icon-192.png" in shell["files"]
            screen = http.get("/app/js/screens/home.js")
            assert screen.status_code == 200
            assert screen.content == (ROOT / "pwa/js/screens/home.js").read_bytes()
            assert http.get("/app/icons/icon-192.png").content == (ROOT / "pwa/icons/icon-192.png").read_bytes()
            guide = http.get("/bootstrap/SKILL.md")
            assert guide.status_code == 200 and url in guide.text
            artifact = publish(installed, env, url, http)
            page = http.get(f"/artifacts/{artifact}")
            assert page.status_code == 200
            assets = sorted(set(re.findall(r"/assets/[A-Za-z0-9._-]+", page.text)))
            assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets), page.text
            for asset in assets:
                got = http.get(asset)
                assert got.status_code == 200 and got.content, asset
            mermaid = http.get("/assets/mermaid-11.17.2.min.js")
            assert mermaid.status_code == 200
            assert mermaid.content == (ROOT / "hubhttp/pages/assets/mermaid.min.js").read_bytes()
        where = subprocess.run(
            [str(installed / "python"), "-c", "import hubhttp, hubcore; print(hubhttp.__file__)"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=True,
        ).stdout
        assert where.startswith(str(installed.parent)), where  # the hub came from the wheel
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0


def publish(bin_dir: Path, env: dict[str, str], url: str, http: httpx.Client) -> str:
    """A markdown artifact with a diagram, published by an agent with the installed `hub-cli call`."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    assert http.post("/api/v1/agents", headers=admin, json={"id": "coder", "display_name": "Coder"}).status_code == 201
    token = http.post("/api/v1/agents/coder/token", headers=admin).json()["token"]
    assert http.post("/api/v1/projects", headers=admin, json={"id": "webshop"}).status_code == 201
    args = json.dumps(
        {
            "project_id": "webshop",
            "title": "Plan",
            "kind": "markdown",
            "content": "# Plan\n\n```mermaid\ngraph TD; A-->B\n```\n",
        }
    )
    run = subprocess.run(
        [str(bin_dir / "hub-cli"), "call", "artifact_publish", args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "HUB_URL": url, "HUB_TOKEN": token},
        cwd=Path(env["HUB_DATA_DIR"]).parent,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return str(json.loads(run.stdout)["artifact_id"])


@contextmanager
def served(bin_dir: Path, env: dict[str, str], cwd: Path) -> Iterator[subprocess.Popen[str]]:
    """`hub-cli serve` from the venv, in a directory with no source tree."""
    with subprocess.Popen(
        [str(bin_dir / "hub-cli"), "serve"],
        env=env,
        cwd=cwd,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def wait_ready(url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError("the installed hub never became ready")
