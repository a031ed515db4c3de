"""The user's path (README, docs/quickstart.md): a built wheel carries the front end, and
installs and draws a host where no Node.js is on the PATH.

Building the wheel runs the JS build (hatch-jupyter-builder, npm) as a developer's machine does;
installing it must not: a wheel is never built again on install. The fresh venv gets the
wheel with ``--no-deps``, and the dependencies from this venv's site-packages through a ``.pth``
file placed after its own (so ``lineup_jupyter`` comes from the wheel, never the checkout): a
full install from the registry is the same minus minutes of downloads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.build

REPO = Path(__file__).resolve().parents[2]
BUNDLES = ("lineup.js", "appcenter.js", "inspector.js", "waiting.js")

CHECK = """
import json, shutil, sys
import lineup_jupyter
from lineup_jupyter import Host
from lineup_jupyter.widgets import _widget
host = Host(conversation_id="wheel")
host.connect_agent("agent_wheel").open("a.1", html="<p>hi</p>")
assert host.widget is not None
print(json.dumps({
    "file": lineup_jupyter.__file__,
    "node": shutil.which("node"),
    "bundle": _widget.BUNDLE.is_file() and _widget.BUNDLE.stat().st_size,
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        check=True,
        timeout=600,
    )
    [built] = out.glob("lineup_jupyter-*.whl")
    return built


def test_the_wheel_carries_the_front_end(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for bundle in BUNDLES:
            name = f"lineup_jupyter/static/{bundle}"
            assert name in names, f"{name} is not in {wheel.name}"
            assert archive.getinfo(name).file_size > 1000
    assert not any(n.startswith(("js/", "node_modules/", "tests/")) for n in names)


def test_the_wheel_installs_and_draws_a_host_without_node(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "fresh"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]  # this pip, into that venv
    subprocess.run(
        [*pip, "install", "--no-deps", "-q", str(wheel)],
        check=True,
        timeout=300,
        env={"PATH": str(env_dir / "bin"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The dependencies, after the fresh venv's own site-packages (a .pth line is appended).
    (Path(site) / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    result = subprocess.run(
        [str(python), "-c", CHECK],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            "PATH": str(env_dir / "bin"),
            "HOME": str(tmp_path),
            "LINEUP_JUPYTER_HOME": str(tmp_path / "home"),
        },
        cwd=tmp_path,
    )
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["file"].startswith(site), seen  # the wheel's copy, not the checkout's
    assert seen["node"] is None  # no Node.js reachable
    assert seen["bundle"] and seen["bundle"] > 100_000, seen
    assert os.path.commonpath([seen["file"], str(REPO)]) != str(REPO)
