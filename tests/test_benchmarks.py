"""The benchmark scripts' command lines (their measurements are not tests)."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_paper_times_covers_every_notebook_with_a_paper_mode():
    with_paper_mode = {path.stem for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")
                       if json.loads(path.read_text())["metadata"].get("fedlab", {}).get("paper_data")}
    chapters = _load("paper_times").CHAPTERS
    assert set(chapters) == with_paper_mode
    for package in chapters.values():
        assert callable(importlib.import_module(f"fedlab.{package}.real_data").expected_seconds)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("script", ["paper_times", "engine", "replicas"])
def test_asking_for_an_absent_gpu_says_so(script):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), "--device", "cuda"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "nothing to measure on it here" in done.stderr


def test_the_replicas_benchmark_runs_and_prints_its_ratios():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "replicas.py"), "--quick", "--repeats", "1"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[-2:] == ["turn/1", "replicas/1"] and len(lines) == 5
    assert all(line.endswith("x") for line in lines[1:])


def test_the_cnn_benchmark_runs_and_names_the_auto_choice():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cnn.py"), "--quick", "--only", "cifar-20"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    assert "cifar-20" in done.stdout and "auto chose" in done.stdout


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout (it compares two revisions)")
def test_the_full_mode_benchmark_times_both_checkouts_and_cleans_up():
    worktrees = subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True).stdout
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "full_mode.py"), "--before", "HEAD",
                           "--mode", "smoke", "--only", "00_primer"],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    row = done.stdout.splitlines()[-1].split()
    assert row[0] == "00_primer" and row[3].endswith("x") and row[-1].endswith("x")
    assert float(row[1].rstrip("s")) > 0 and float(row[4].rstrip("s")) > 0
    assert subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], capture_output=True,
                          text=True).stdout == worktrees


def test_the_full_mode_benchmark_names_a_missing_notebook():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "full_mode.py"), "--before", "HEAD",
                           "--only", "no_such_notebook"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no_such_notebook" in done.stderr
