"""Command line: ``python -m fedlab run`` executes the workbook and builds the report."""
from __future__ import annotations

import argparse
import sys

from fedlab.workbook import MODES, find_notebooks, run_workbook


class _Parser(argparse.ArgumentParser):
    """An argument parser that reports a bad argument in one line on stderr (exit status 2)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    """A whole number of at least 1 (``--jobs``, ``--timeout``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="fedlab", description="The fedlab workbook: run notebooks, build the report.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute every notebook headlessly and build the report (build/index.html)")
    run.add_argument("--mode", choices=MODES, default="smoke",
                     help="smoke: fast default sizes; full: paper scale (see each notebook for its time)")
    run.add_argument("--only", metavar="NAME", help="run only the notebooks whose name contains NAME")
    run.add_argument("--jobs", type=_positive_int, default=None, help="notebooks executed in parallel (default: cores)")
    run.add_argument("--timeout", type=_positive_int, default=900, help="per-cell timeout in seconds")
    run.add_argument("--build", default="build", help="output folder (default: build)")
    run.add_argument("--update-summaries", action="store_true",
                     help="store each notebook's summary output in the notebook (what the tests compare); smoke mode")
    sub.add_parser("list", help="list the notebooks in reading order")
    args = parser.parse_args(argv)
    if args.command == "list":
        for path in find_notebooks():
            print(path.stem)
        return 0
    try:
        find_notebooks(only=args.only)
    except ValueError as err:
        run.error(f"argument --only: {err}")
    if args.update_summaries and args.mode != "smoke":
        run.error("argument --update-summaries: stores the smoke mode's summaries; drop --mode or use --mode smoke")
    results = run_workbook(mode=args.mode, only=args.only, build=args.build, jobs=args.jobs, timeout=args.timeout,
                           update_summaries=args.update_summaries)
    failed = [r for r in results if r.status != "ok"]
    for r in failed:
        print(f"FAILED {r.name}: {r.error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
