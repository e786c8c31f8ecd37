"""The Makefile's commands as a newcomer types them (dry runs: nothing is installed or started)."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("uid", ["0", "1000"])
def test_make_lab_allows_root_exactly_when_run_as_root(tmp_path, uid):
    venv, fake_bin = tmp_path / "venv", tmp_path / "fake_bin"
    for script, body in ((venv / "bin" / "jupyter", 'echo "jupyter $*"'), (fake_bin / "id", f"echo {uid}")):
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
    dry = subprocess.run(["make", "-n", "lab", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True)
    [line] = [ln for ln in dry.stdout.splitlines() if "jupyter lab" in ln]
    # the command make would run, with the fake jupyter (which echoes its arguments) and a fake `id -u`
    shell = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True,
                           env={"PATH": f"{fake_bin}:/usr/bin:/bin"})
    assert shell.stdout.split() == ["jupyter", "lab", "notebooks/"] + (["--allow-root"] if uid == "0" else [])
