"""Command line: ``python -m fedlab run`` executes the workbook and builds the report; ``python -m fedlab data
fetch NAME...`` downloads the real data sets once and ``data list`` shows what is present."""
from __future__ import annotations

import argparse
import sys

from fedlab._validation import check_folder
from fedlab.data.fetch import DATASETS, DownloadError, dataset_status, fetch
from fedlab.data.vision import data_dir
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
                     help="smoke: fast default sizes; full: paper scale, offline (see each notebook for its time); "
                          "paper: the notebooks with a paper mode, on the real data sets (python -m fedlab data fetch)")
    run.add_argument("--only", metavar="NAME", help="run only the notebooks whose name contains NAME")
    run.add_argument("--jobs", type=_positive_int, default=None, help="notebooks executed in parallel (default: cores)")
    run.add_argument("--timeout", type=_positive_int, default=900, help="per-cell timeout in seconds")
    run.add_argument("--build", default="build", help="output folder (default: build)")
    run.add_argument("--update-headlines", action="store_true",
                     help="store each notebook's headline numbers in the notebook (what the tests compare); smoke mode")
    run.add_argument("--record", action="store_true",
                     help="full mode: store each notebook's claims and headlines under records/full/ (the report's "
                          "full-scale verdicts)")
    sub.add_parser("list", help="list the notebooks in reading order")
    data = sub.add_parser("data", help="the real data sets of paper mode: fetch them once, list what is present")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    get = data_sub.add_parser("fetch", help="download data sets into $FEDLAB_DATA (resumable, checksums verified)")
    get.add_argument("names", nargs="+", metavar="NAME", help=f"one or more of: {', '.join(DATASETS)} (or all)")
    get.add_argument("--quiet", action="store_true", help="no progress bars")
    data_sub.add_parser("list", help="each data set: present or absent, its size on disk and its folder")
    args = parser.parse_args(argv)
    if args.command == "list":
        for path in find_notebooks():
            print(path.stem)
        return 0
    if args.command == "data":
        return _data(args, data, get)
    try:
        find_notebooks(only=args.only, paper=args.mode == "paper")
    except ValueError as err:
        run.error(f"argument --only: {err}")
    try:
        check_folder("--build", args.build)
    except ValueError as err:
        run.error(f"argument {str(err).rstrip('.')}")
    if args.update_headlines and args.mode != "smoke":
        run.error("argument --update-headlines: stores the smoke mode's headlines; drop --mode or use --mode smoke")
    if args.record and args.mode != "full":
        run.error("argument --record: stores the full mode's verdicts; add --mode full")
    results = run_workbook(mode=args.mode, only=args.only, build=args.build, jobs=args.jobs, timeout=args.timeout,
                           update_headlines=args.update_headlines, record=args.record)
    failed = [r for r in results if r.status == "failed"]
    for r in results:
        if r.status == "data absent":
            print(f"DATA ABSENT {r.name}: {r.error}")
    for r in failed:
        print(f"FAILED {r.name}: {r.error}", file=sys.stderr)
    return 1 if failed else 0


def _data(args, data: _Parser, get: _Parser) -> int:
    """``data list`` and ``data fetch``: a bad argument or ``$FEDLAB_DATA`` is reported in one line (exit status 2),
    a failed download too (exit status 1)."""
    try:
        data_dir()
    except ValueError as err:
        (get if args.data_command == "fetch" else data).error(str(err).rstrip("."))
    if args.data_command == "list":
        for row in dataset_status():
            size = f"{row['bytes'] / 1e6:,.1f} MB"
            print(f"{row['name']:<12} {row['status']:<17} {size:>11}  {row['folder']}\n"
                  f"{'':<12} {row['description']}; clients: {row['clients']}")
        return 0
    if "all" in args.names and len(args.names) > 1:
        get.error(f"argument NAME: 'all' fetches every data set and cannot be combined with names, got "
                  f"{' '.join(args.names)}; give all alone or only names")
    names = list(DATASETS) if args.names == ["all"] else args.names
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        get.error(f"argument NAME: unknown data set(s) {', '.join(unknown)}; choose from {', '.join(DATASETS)} or all")
    try:
        fetch(names, progress=not args.quiet)
    except ValueError as err:
        get.error(str(err).rstrip("."))
    except DownloadError as err:
        print(f"fedlab data fetch: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
