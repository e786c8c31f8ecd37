"""Each notebook's full mode timed before and after a change: both checkouts run turn about, from one process.

``python benchmarks/full_mode.py --before REV [--only NAME ...] [--repeats 1] [--mode full]`` checks ``REV`` and
this checkout (its committed files and their uncommitted changes; untracked files are left out) out into two
temporary git worktrees and, for every notebook (or those whose names contain an ``--only``), runs
``python -m fedlab run --mode full --only NOTEBOOK --jobs 1`` in each, alternating which goes first from one repeat
to the next. Every run starts without stored sweep results (the notebooks' stores are emptied, and
``$FEDLAB_RESULTS`` is unset), so none resumes another's work. Each run is a fresh process tree started from this
one process; the table shows its wall time, its CPU time (user + system of the run and of the kernel and sweep
workers it waited for), and before/after ratios of the medians (above 1: the change made the notebook faster). Wall
times depend on the load, so run it on an idle machine and read the ratios. ``--mode smoke`` times the smoke runs
instead (a quick check of the script itself).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fedlab.workbook import find_notebooks

ROOT = Path(__file__).resolve().parents[1]


def notebooks(tree: Path, only: list[str]) -> list[str]:
    """The notebooks of ``tree`` whose names contain one of ``only`` (all when it is empty), in order."""
    return [p.stem for p in find_notebooks(tree / "notebooks") if not only or any(o in p.stem for o in only)]


def timed_run(tree: Path, notebook: str, mode: str, build: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of ``python -m fedlab run`` of one notebook with the code of ``tree`` (a worktree
    of this script's: its stored sweep results are deleted first)."""
    shutil.rmtree(tree / "notebooks" / "results", ignore_errors=True)
    command = [sys.executable, "-m", "fedlab", "run", "--mode", mode, "--only", notebook, "--jobs", "1",
               "--build", str(build)]
    env = {k: v for k, v in os.environ.items() if k != "FEDLAB_RESULTS"}
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env={**env, "PYTHONPATH": str(tree)}, capture_output=True, text=True)
    wall = time.perf_counter() - start
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{notebook} failed in {tree} (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return wall, (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)


def worktree(rev: str, folder: Path) -> Path:
    """``rev`` of this repository checked out (detached) into ``folder``."""
    done = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(folder), rev],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"benchmarks/full_mode.py: cannot check out {rev!r}: {done.stderr.strip()}")
    return folder


def this_checkout() -> str:
    """A commit of this checkout's tracked files as they are now (``git stash create``; HEAD when unchanged)."""
    git = ["git", "-C", str(ROOT)]
    snapshot = subprocess.run(git + ["stash", "create"], capture_output=True, text=True, check=True).stdout.strip()
    return snapshot or subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True,
                                      check=True).stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the git revision to compare with (e.g. HEAD~3, a tag)")
    parser.add_argument("--only", action="append", default=[], help="notebooks whose name contains this (repeatable)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each checkout per notebook (medians shown)")
    parser.add_argument("--mode", choices=("full", "smoke"), default="full")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    names = notebooks(ROOT, args.only)
    if not names:
        parser.error(f"no notebook name contains any of {args.only}")
    with tempfile.TemporaryDirectory(prefix="fedlab-full-mode-") as scratch:
        trees = {"before": worktree(args.before, Path(scratch) / "before")}
        try:
            trees["after"] = worktree(this_checkout(), Path(scratch) / "after")
            missing = sorted(set(names) - set(notebooks(trees["before"], [])))
            if missing:
                parser.error(f"--before {args.before} has no notebook {missing[0]}")
            print(f"{args.mode} mode of each notebook, {args.before} (before) against this checkout (after), "
                  f"{args.repeats} run(s) each, turn about; wall and CPU seconds, medians")
            print(f"{'notebook':<22}{'wall before':>12}{'wall after':>12}{'ratio':>8}{'CPU before':>12}"
                  f"{'CPU after':>11}{'ratio':>8}")
            for name in names:
                times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
                for repeat in range(args.repeats):
                    for side in (("before", "after") if repeat % 2 == 0 else ("after", "before")):
                        times[side].append(timed_run(trees[side], name, args.mode, Path(scratch) / f"build-{side}"))
                (wb, cb), (wa, ca) = ((statistics.median(t[0] for t in times[s]),
                                       statistics.median(t[1] for t in times[s])) for s in ("before", "after"))
                print(f"{name:<22}{wb:11.1f}s{wa:11.1f}s{wb / wa:7.2f}x{cb:11.1f}s{ca:10.1f}s{cb / ca:7.2f}x",
                      flush=True)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
