"""Command line: ``python -m fedlab run`` executes the workbook and builds the report."""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fedlab", description="The fedlab workbook: run notebooks, build the report.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute every notebook headlessly and build build/index.html")
    run.add_argument("--mode", choices=("smoke", "full"), default="smoke",
                     help="smoke: fast default sizes; full: paper scale (see each notebook for its time)")
    run.add_argument("--only", metavar="NAME", help="run only the notebooks whose name contains NAME")
    run.add_argument("--jobs", type=int, default=None, help="notebooks executed in parallel (default: cores)")
    run.add_argument("--timeout", type=int, default=900, help="per-cell timeout in seconds")
    run.add_argument("--build", default="build", help="output folder (default: build)")
    sub.add_parser("list", help="list the notebooks in reading order")
    args = parser.parse_args(argv)

    from fedlab.workbook import find_notebooks, run_workbook

    if args.command == "list":
        for path in find_notebooks():
            print(path.stem)
        return 0
    results = run_workbook(mode=args.mode, only=args.only, build=args.build, jobs=args.jobs, timeout=args.timeout)
    failed = [r for r in results if r.status != "ok"]
    for r in failed:
        print(f"FAILED {r.name}: {r.error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
