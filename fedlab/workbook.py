"""Execute the notebooks headlessly (papermill), collect their headline numbers and claims, publish the report.

Every notebook shows its headline numbers (the cell that starts with ``# NBVAL_CHECK_OUTPUT`` calls
:func:`fedlab.headlines.show_headlines`) and its paper claims with :func:`fedlab.claims.show_claims`, which attaches
them to the cell's output as JSON (:data:`fedlab.claims.MIME_TYPE`). :func:`run_workbook` executes the notebooks into the
build folder, stores each notebook's claims next to it (``<notebook>.claims.json``) and all of them in
``claims.json``, then builds the report, a static site (Sphinx, myst-nb and sphinx-book-theme; configuration in
``fedlab/report/``): ``index.html`` is the scoreboard (per chapter its key figure, status, run time and claims
counted by verdict, then one table of every claim) and every executed notebook gets a page, its maths rendered by
a MathJax copied into the site and its exercise solutions collapsed. myst-nb only renders: nothing runs twice.

Modes: ``smoke`` (default, fast), ``full`` (paper scale, offline) and ``paper`` (the real data sets): paper mode
runs only the notebooks that name their data sets in their metadata (:data:`PAPER_DATA_KEY`); a notebook whose
data are absent stops at once (:class:`fedlab.paper_mode.DataAbsent`) and is reported as *data absent* with the fetch
command, its real-data claims counted as *not run*.

The key figure of a chapter is the first figure of a cell tagged ``key-figure``, else the notebook's last figure.
A solution is a cell whose metadata has ``{"jupyter": {"source_hidden": true}}`` or the tag ``solution``.
"""
from __future__ import annotations

import base64
import copy
import io
import json
import os
import re
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from string import Template

from fedlab._validation import check_choice, check_int
from fedlab.claims import MIME_TYPE, Claim, save_claims, tally_by_kind
from fedlab.exercises import REFERENCE_ENV
from fedlab.records import FOLDER as RECORDS, make_record, write_record
from fedlab.headlines import MARK as HEADLINE_MARK
from fedlab.headlines import MIME_TYPE as HEADLINES_MIME
from fedlab.headlines import Headline, compare_headlines
from fedlab.tables import markdown_table

__all__ = ["MODES", "STATUSES", "PAPER_DATA_KEY", "NotebookResult", "find_notebooks", "paper_data",
           "stored_headlines", "headline_numbers", "store_headlines", "headline_differences", "notebook_claims", "key_figure", "is_solution", "page_notebook",
           "execute_notebook", "scoreboard_markdown", "scoreboard_lines", "build_report", "run_workbook"]

MODES = ("smoke", "full", "paper")
PAPER_DATA_KEY = ("fedlab", "paper_data")    # notebook metadata: the data sets of a notebook's paper mode
STATUSES = ("ok", "data absent", "failed")
KEY_FIGURE_TAG = "key-figure"
SOLUTION_TAG = "solution"
ROOT = Path(__file__).resolve().parent.parent
SITE = Path(__file__).resolve().parent / "report"       # the site's configuration, scoreboard page, static files
# Kernel options: figures go into the notebook (and the report) even when the caller's environment selects a
# non-inline backend (e.g. MPLBACKEND=Agg, which the kernel would inherit); the kernel's own log (about its
# transport, and the KeyboardInterrupt of the interrupt that precedes every shutdown) stays out of the terminal:
# what a cell raises is recorded in the executed notebook.
KERNEL_ARGUMENTS = ["--matplotlib=inline", "--IPKernelApp.log_level=CRITICAL"]


@dataclass
class NotebookResult:
    """Outcome of one notebook run."""

    name: str
    title: str
    summary: str
    status: str                      # one of STATUSES
    seconds: float
    headline: dict[str, str] = field(default_factory=dict)
    error: str = ""                  # failing cell and exception, when failed
    html: str = ""                   # the notebook's page, relative to the build folder ("" when none)
    claims: list[Claim] = field(default_factory=list)

    @property
    def tally(self) -> dict[str, dict[str, int]]:
        """The claims counted by kind, then verdict (:func:`fedlab.claims.tally_by_kind`)."""
        return tally_by_kind(self.claims)

    def to_dict(self) -> dict:
        """JSON-ready fields, the claims as :meth:`fedlab.claims.Claim.to_dict`, and their ``tally``."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return {**out, "claims": [c.to_dict() for c in self.claims], "tally": self.tally}


def find_notebooks(folder: str | os.PathLike = ROOT / "notebooks", only: str | None = None, *,
                   paper: bool = False) -> list[Path]:
    """Notebooks ``NN_name.ipynb`` in reading order; ``only`` keeps those whose name contains it, ``paper`` those
    with a paper mode (:func:`paper_data`)."""
    paths = sorted(p for p in Path(folder).glob("[0-9][0-9]_*.ipynb"))
    if only is not None:
        paths = [p for p in paths if only in p.stem]
        if not paths:
            raise ValueError(f"only={only!r} matches no notebook in {folder}.")
    if paper:
        paths = [p for p in paths if paper_data(p)]
        if not paths:
            raise ValueError(f"no notebook{'' if only is None else f' matching {only!r}'} has a paper mode.")
    return paths


def paper_data(path: Path) -> list[str]:
    """The data sets a notebook's paper mode uses (its metadata ``fedlab.paper_data``; empty: no paper mode)."""
    meta = json.loads(Path(path).read_text(encoding="utf-8")).get("metadata", {})
    return list(meta.get(PAPER_DATA_KEY[0], {}).get(PAPER_DATA_KEY[1], []))


def _title_and_summary(nb) -> tuple[str, str]:
    """The first markdown cell's heading, and the first sentence of its first paragraph."""
    for cell in nb.cells:
        if cell.cell_type == "markdown" and "papermill-error-cell-tag" not in cell.metadata.get("tags", []):
            paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", cell.source.strip())]
            title = paragraphs[0].lstrip("# ").strip() if paragraphs else ""
            text = next((p for p in paragraphs[1:] if not p.startswith("#")), "")
            text = re.sub(r"\*+([^*]+)\*+", r"\1", text)                    # drop markdown emphasis
            sentence = re.match(r"(.+?[.?!])(\s|$)", text)
            return title, sentence.group(1) if sentence else text
    return "", ""


def _headline_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith(HEADLINE_MARK)]


def stored_headlines(nb) -> list[dict]:
    """The headlines (:meth:`fedlab.headlines.Headline.to_dict`) shown by the notebook's headline cell."""
    return [h for cell in _headline_cells(nb) for out in cell.get("outputs", [])
            for h in out.get("data", {}).get(HEADLINES_MIME, [])]


def headline_numbers(nb) -> dict[str, str]:
    """The notebook's headline numbers as shown, ``{name: rounded value}``."""
    return dict(Headline.from_dict(h).text().split(": ", 1) for h in stored_headlines(nb))


def store_headlines(source: Path, executed: Path) -> bool:
    """Copy the headline cell's output from an executed notebook into its stored source; True if it changed.

    The stored output is what the test command compares (:func:`fedlab.headlines.compare_headlines`): every other
    cell stays without outputs, so a headline that moves beyond its tolerance fails the tests until it is stored
    again on purpose.
    """
    import nbformat

    src, run = nbformat.read(source, as_version=4), nbformat.read(executed, as_version=4)
    targets, results = _headline_cells(src), _headline_cells(run)
    if len(targets) != 1 or len(results) != 1 or not stored_headlines(run):
        raise ValueError(f"{executed} and {source} must each have one headline cell ({HEADLINE_MARK}) that shows "
                         "its headlines (fedlab.headlines.show_headlines).")
    outputs = [o for o in results[0].outputs if HEADLINES_MIME in o.get("data", {})]
    for out in outputs:
        out.pop("transient", None)
    if targets[0].outputs == outputs:
        return False
    targets[0].outputs, targets[0].execution_count = outputs, None
    nbformat.write(src, source)
    return True


def headline_differences(source: Path, executed: Path) -> list[str]:
    """Each headline of the ``executed`` notebook beyond its tolerance of the one stored in ``source``, one line each
    (:func:`fedlab.headlines.compare_headlines`); empty when all agree."""
    import nbformat

    stored = stored_headlines(nbformat.read(source, as_version=4))
    if not stored:
        return [f"{Path(source).name} stores no headlines: store them with python -m fedlab run --update-headlines"]
    return compare_headlines(stored, stored_headlines(nbformat.read(executed, as_version=4)))


def notebook_claims(nb) -> list[Claim]:
    """The claims that the notebook's cells showed (outputs holding :data:`fedlab.claims.MIME_TYPE`), in order.

    Raises ``ValueError`` naming the cell when an output does not hold valid claims.
    """
    claims = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if MIME_TYPE in out.get("data", {}):
                try:
                    claims += [Claim.from_dict(d) for d in out["data"][MIME_TYPE]]
                except (TypeError, ValueError) as err:
                    raise ValueError(f"In [{cell.get('execution_count')}] shows invalid claims: {err}") from err
    return claims


def key_figure(nb) -> bytes | None:
    """PNG bytes of the chapter's key figure: the first figure of a cell tagged ``key-figure``, else the last one."""
    tagged = last = None
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            png = out.get("data", {}).get("image/png")
            if png:
                last = png
                if tagged is None and KEY_FIGURE_TAG in cell.metadata.get("tags", []):
                    tagged = png
    figure = tagged or last
    return base64.b64decode(figure) if figure else None


def is_solution(cell) -> bool:
    """Whether the cell is an exercise solution (``jupyter.source_hidden`` metadata, or the tag ``solution``)."""
    return bool(cell.metadata.get("jupyter", {}).get("source_hidden")) or SOLUTION_TAG in cell.metadata.get("tags", [])


def page_notebook(nb):
    """A copy of ``nb`` as its page on the report shows it: solutions collapsed (HTML ``<details>``), claims as a table.

    A markdown solution is wrapped in ``<details class="solution">``; a code solution gets myst-nb's ``hide-cell``
    tag (source and outputs in a ``<details>``), with "Show solution" as its prompt. The claims' JSON
    (:data:`fedlab.claims.MIME_TYPE`) and the headlines' (:data:`fedlab.headlines.MIME_TYPE`) leave the outputs: the
    scoreboard holds them and the page shows the text of the same outputs.
    """
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            out.get("data", {}).pop(MIME_TYPE, None)
            out.get("data", {}).pop(HEADLINES_MIME, None)
        if not is_solution(cell):
            continue
        if cell.cell_type == "markdown":
            cell.source = f'<details class="solution">\n<summary>Solution</summary>\n\n{cell.source}\n\n</details>'
        elif cell.cell_type == "code":
            cell.metadata["tags"] = [*cell.metadata.get("tags", []), "hide-cell"]
            cell.metadata["mystnb"] = {"code_prompt_show": "Show solution", "code_prompt_hide": "Hide solution"}
    return nb


def _error_output(nb) -> tuple[object, dict] | None:
    """The first cell with an error output, and that output."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return cell, out
    return None


def _failing_cell(nb) -> str | None:
    """``In [n] ('first line'): Error: message`` for the first cell with an error output."""
    found = _error_output(nb)
    if found is None:
        return None
    cell, out = found
    first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
    return f"In [{cell.get('execution_count')}] ({first[:60]!r}): {out['ename']}: {out['evalue']}"


def _status(nb, error: str) -> tuple[str, str]:
    """``("ok", "")``, ``("data absent", the fetch command)`` or ``("failed", the failing cell)``."""
    if not error:
        return "ok", ""
    found = _error_output(nb)
    if found is not None and found[1].get("ename") == "DataAbsent":
        return "data absent", found[1].get("evalue", "")
    return "failed", _failing_cell(nb) or error


def _papermill(path: Path, out_path: Path, mode: str, timeout: int) -> str:
    """Execute ``path`` into ``out_path``; the error's last line, or ``""`` when every cell ran.

    The kernel talks to papermill over IPC sockets in a private temporary folder (not over TCP on localhost).
    """
    import papermill
    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix="fedlab-kernel-") as sockets:
        config = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}})
        try:
            papermill.execute_notebook(str(path), str(out_path), parameters={"MODE": mode, "INTERACTIVE": False},
                                       kernel_name="python3", cwd=str(path.parent), execution_timeout=timeout,
                                       progress_bar=False, log_output=False, extra_arguments=KERNEL_ARGUMENTS,
                                       config=config)
        except Exception as exc:  # papermill raises PapermillExecutionError with the failing cell
            text = str(exc).strip()
            return text.splitlines()[-1] if text else type(exc).__name__
    return ""


def execute_notebook(path: Path, out_dir: Path, *, mode: str = "smoke", timeout: int = 600) -> NotebookResult:
    """Run one notebook with papermill (``INTERACTIVE=False``) into ``out_dir``; its claims go next to it.

    The executed notebook is ``out_dir/<name>.ipynb`` and its claims ``out_dir/<name>.claims.json``; a notebook
    whose claims cannot be read fails with that reason.
    """
    import nbformat

    out_path = out_dir / path.name
    start = time.perf_counter()
    error = _papermill(path, out_path, mode, timeout)
    seconds = time.perf_counter() - start
    nb = nbformat.read(out_path if out_path.exists() else path, as_version=4)
    status, error = _status(nb, error)
    try:
        claims = notebook_claims(nb)
    except ValueError as err:
        claims, status, error = [], "failed", error or str(err)
    title, summary = _title_and_summary(nb)
    result = NotebookResult(path.stem, title, summary, status, seconds, headline_numbers(nb), error, claims=claims)
    if out_path.exists():
        save_claims(claims, out_dir / f"{path.stem}.claims.json")
        result.html = f"{path.stem}.html"
    return result


# ---------------------------------------------------------------------------------------------------- the report

def _inline(text) -> str:
    """``text`` as one line of markdown (whitespace collapsed), for a table cell."""
    return " ".join(str(text).split())


def _code(text: str) -> str:
    """``text`` as a markdown code span (fenced by more backticks than it holds)."""
    text = _inline(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def _table(css_class: str, header: list[str], rows: list[list[str]]) -> str:
    """A markdown table in a MyST ``table`` directive that gives it ``css_class``."""
    return f":::{{table}}\n:class: {css_class}\n{markdown_table(header, rows)}\n:::"


def _verdict(verdict: str, text: str | None = None) -> str:
    """``text`` (default: the verdict) styled as ``verdict``."""
    return f"[{text or verdict}]{{.verdict .{verdict.replace(' ', '-')}}}"


def _page(r: NotebookResult, text: str) -> str:
    """``text`` linked to the notebook's page, when it has one."""
    return f"[{text}]({r.name}.ipynb)" if r.html else text


EXPERIMENT_VERDICTS = ("reproduced", "direction only", "inconclusive", "not reproduced", "not run")
"""The verdicts an experiment can take: the scoreboard's headline columns."""
OTHER_KINDS = {"analytic": "Analytic", "consistency": "Consistency", "erratum": "Errata"}


def _experiment_counts(counts: dict[str, dict[str, int]]) -> list[str]:
    return [str(counts["experiment"].get(v, 0)) for v in EXPERIMENT_VERDICTS]


def _kind_text(counts: dict[str, int]) -> str:
    """``"12 reproduced, 1 not reproduced"`` (empty when the kind has no claim)."""
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def _chapter_row(r: NotebookResult, thumbnail: str | None) -> list[str]:
    title = _inline(r.title or r.name)
    figure = _page(r, f"![Key figure of {title}]({thumbnail}){{.thumbnail}}") if thumbnail else ""
    chapter = _page(r, title) + (f" [{_inline(r.summary)}]{{.summary}}" if r.summary else "")
    status = "[ok]{.status .ok}" if r.status == "ok" else \
        f"[{r.status}]{{.status .{r.status.replace(' ', '-')}}} {_code(r.error)}{{.error}}"
    return [figure, chapter, status, f"{r.seconds:.1f}\u00a0s", *_experiment_counts(r.tally),
            *(_kind_text(r.tally[k]) for k in OTHER_KINDS)]


def _claim_rows(r: NotebookResult) -> list[list[str]]:
    chapter = _page(r, _inline(r.title.split(":")[0] or r.name))
    rows = []
    for c in r.claims:
        source, statement, kind, paper, measured, rule, verdict, why = map(_inline, c.row())
        verdict = f"{_verdict(c.verdict, verdict)} [{rule}]{{.rule}}"
        rows.append([chapter, source, statement, f"{kind} ({c.scale})", paper, measured, verdict, why])
    return rows


def _headline(claims: list[Claim]) -> str:
    """The index's lead: experiments counted by verdict, then the other kinds beside them."""
    counts = tally_by_kind(claims)
    lead = " · ".join(_verdict(v, f"{n} {v}") for v, n in counts["experiment"].items())
    others = "; ".join(f"{name.lower()} {_kind_text(counts[k])}" for k, name in OTHER_KINDS.items() if counts[k])
    return (f"**{sum(counts['experiment'].values())} experiments re-run:** {lead or 'none'}"
            + (f"  \nBeside them, never counted as reproductions: {others}." if others else ""))


def scoreboard_markdown(results: list[NotebookResult], mode: str, thumbnails: dict[str, str] | None = None) -> str:
    """The report's index page (MyST markdown, from ``fedlab/report/scoreboard.md``): totals, chapters, claims.

    One row per chapter links its page and shows its key figure (``thumbnails`` maps a notebook's name to the
    figure's path relative to the page), its status (with the error of a failed run), its run time, its experiments
    counted by verdict and its analytic, consistency and erratum claims beside them; a last row sums them. Then one
    table of every claim (with its kind and scale), in which a chapter is named by its title up to the first colon.
    """
    check_choice("mode", mode, MODES)
    thumbnails = thumbnails or {}
    claims = [c for r in results for c in r.claims]
    total = tally_by_kind(claims)
    chapters = [_chapter_row(r, thumbnails.get(r.name)) for r in results]
    chapters.append(["", "**All chapters**", _status_counts(results),
                     f"{sum(r.seconds for r in results):.1f}\u00a0s", *_experiment_counts(total),
                     *(_kind_text(total[k]) for k in OTHER_KINDS)])
    claim_rows = [row for r in results for row in _claim_rows(r)]
    return Template((SITE / "scoreboard.md").read_text(encoding="utf-8")).substitute(
        mode=mode, headline=_headline(claims),
        chapters=_table("scoreboard", ["Key figure", "Chapter", "Status", "Run time",
                                       *(f"Experiments {v}" for v in EXPERIMENT_VERDICTS),
                                       *OTHER_KINDS.values()], chapters),
        claims=(_table("claims", ["Chapter", "Source", "Claim", "Kind (scale)", "Paper", "Measured", "Verdict",
                                  "Why"], claim_rows)
                if claim_rows else "No chapter has shown claims yet (`fedlab.claims.show_claims`)."),
        pages="\n".join(r.name for r in results if r.html))


def _status_counts(results: list[NotebookResult]) -> str:
    """``"7 ok, 1 failed"``, with ``data absent`` when some notebook's real data were absent."""
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    return ", ".join(f"{n} {s}" for s, n in counts.items() if n or s != "data absent")


def scoreboard_lines(results: list[NotebookResult]) -> list[str]:
    """The scoreboard as text: per chapter its status, run time, experiments by verdict and the other kinds' counts;
    then the totals."""
    def line(name, status, seconds, counts):
        others = sum(sum(counts[k].values()) for k in OTHER_KINDS)
        return (f"  {name:<28} {status:<11} {seconds:7.1f} s  "
                + "  ".join(f"{counts['experiment'].get(v, 0):>{len(v)}}" for v in EXPERIMENT_VERDICTS)
                + f"  {others:>6}")

    failed = sum(r.status == "failed" for r in results)
    absent = sum(r.status == "data absent" for r in results)
    total = tally_by_kind(c for r in results for c in r.claims)
    return ([f"  {'chapter':<28} {'status':<11} {'run time':>9}  experiments: " + "  ".join(EXPERIMENT_VERDICTS)
             + "  others"]
            + [line(r.name, r.status, r.seconds, r.tally) for r in results]
            + [line(f"all {len(results)} chapters", f"{failed} failed", sum(r.seconds for r in results), total)]
            + ["  others: " + "; ".join(f"{name.lower()} {_kind_text(total[k]) or 'none'}"
                                        for k, name in OTHER_KINDS.items())]
            + ([f"  {absent} chapter(s) stopped: real data absent (python -m fedlab data list shows them)"]
               if absent else []))


def _stage(results: list[NotebookResult], build: Path, source: Path) -> dict[str, str]:
    """Copy the executed notebooks into the site's ``source`` (solutions collapsed) and write their key figures.

    Returns the key figures' paths relative to ``source``, by notebook name.
    """
    import nbformat

    thumbnails = {}
    (source / "_figures").mkdir(parents=True)
    for r in results:
        if not r.html:
            continue
        nb = nbformat.read(build / f"{r.name}.ipynb", as_version=4)
        nbformat.write(page_notebook(nb), source / f"{r.name}.ipynb")
        png = key_figure(nb)
        if png is not None:
            thumbnails[r.name] = f"_figures/{r.name}.png"
            (source / thumbnails[r.name]).write_bytes(png)
    return thumbnails


def _sphinx(source: Path, build: Path, doctrees: Path) -> list[str]:
    """Build the HTML site of ``source`` into ``build`` with the configuration in ``fedlab/report``; its warnings."""
    from sphinx.application import Sphinx
    from sphinx.util.console import nocolor
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    nocolor()                                          # plain-text warnings
    log = io.StringIO()
    with patch_docutils(SITE), docutils_namespace(), warnings.catch_warnings():
        # the theme's and myst's uses of Sphinx APIs that a later Sphinx removes: theirs to update, not ours
        for category in (DeprecationWarning, PendingDeprecationWarning):
            warnings.filterwarnings("ignore", category=category, module=r"(sphinx_book_theme|myst_parser|myst_nb)\.")
        app = Sphinx(source, SITE, build, doctrees, "html", status=None, warning=log, freshenv=True)
        app.build()
    return [line for line in log.getvalue().splitlines() if line.strip()]


def build_report(results: list[NotebookResult], build: Path, mode: str) -> tuple[Path, list[str]]:
    """Write ``summary.json``, ``claims.json`` (every chapter's claims) and the site into ``build``.

    Returns the scoreboard's path (``build/index.html``) and the site builder's warnings (also written to
    ``build/report-warnings.txt`` when there are any).
    """
    check_choice("mode", mode, MODES)
    (build / "summary.json").write_text(json.dumps([r.to_dict() for r in results], indent=1, ensure_ascii=False),
                                        encoding="utf-8")
    save_claims([c for r in results for c in r.claims], build / "claims.json")
    with tempfile.TemporaryDirectory(prefix="fedlab-site-") as tmp:
        source = Path(tmp) / "source"
        thumbnails = _stage(results, build, source)
        (source / "index.md").write_text(scoreboard_markdown(results, mode, thumbnails), encoding="utf-8")
        notes = _sphinx(source, build, Path(tmp) / "doctrees")
    report_warnings = build / "report-warnings.txt"
    report_warnings.unlink(missing_ok=True)
    if notes:
        report_warnings.write_text("\n".join(notes) + "\n", encoding="utf-8")
    return build / "index.html", notes


def run_workbook(*, mode: str = "smoke", only: str | None = None, build: str | os.PathLike = ROOT / "build",
                 jobs: int | None = None, timeout: int = 900, notebooks: str | os.PathLike = ROOT / "notebooks",
                 update_headlines: bool = False, record: bool = False, records_folder: str | os.PathLike = RECORDS,
                 echo=print) -> list[NotebookResult]:
    """Execute the notebooks (``jobs`` at a time), build the report and print the scoreboard.

    Every argument is checked, and the notebooks found, before anything is created. ``update_headlines`` (default
    mode only) stores each successful notebook's headlines in the notebook (:func:`store_headlines`); ``record``
    (full mode only) stores each successful notebook's claims and headlines in ``records_folder``
    (:mod:`fedlab.records`).
    """
    check_choice("mode", mode, MODES)
    if update_headlines and mode != "smoke":
        raise ValueError(f"update_headlines stores the default (smoke) mode's headlines; got mode={mode!r}.")
    if record and mode != "full":
        raise ValueError(f"record stores the full mode's verdicts; got mode={mode!r}.")
    jobs = check_int("jobs", jobs if jobs is not None else (os.cpu_count() or 1), low=1)
    check_int("timeout", timeout, low=1)
    paths = [p.resolve() for p in find_notebooks(notebooks, only, paper=mode == "paper")]
    # absolute paths: papermill changes the working directory while a notebook runs, and notebooks run in threads
    build = Path(build).resolve()
    build.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault(REFERENCE_ENV, "1")   # exercise checkers check their reference answers (fedlab.exercises)
    if mode != "smoke":  # every sweep stores its runs here, so an interrupted or repeated full run resumes
        os.environ.setdefault("FEDLAB_RESULTS", str(ROOT / "results"))

    def one(path: Path) -> NotebookResult:
        result = execute_notebook(path, build, mode=mode, timeout=timeout)
        echo(f"[{result.status:>6}] {result.name:<28} {result.seconds:7.1f} s"
             + (f"  {result.error}" if result.error else ""))
        return result

    echo(f"Running {len(paths)} notebook(s) in {mode} mode, {jobs} at a time, into {build}/ ...")
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, paths))
    if update_headlines:
        for r, path in zip(results, paths):
            if r.status == "ok" and store_headlines(path, build / path.name):
                echo(f"stored the new headlines of {path.name}")
    if record:
        for r, path in zip(results, paths):
            if r.status == "ok":
                saved = write_record(make_record(path, seconds=r.seconds, claims=r.claims,
                                                 headlines=r.headline), records_folder)
                echo(f"recorded {path.name} in {saved}")
    echo("\nSummary (claims by verdict)")
    for line in scoreboard_lines(results):
        echo(line)
    start = time.perf_counter()
    index, notes = build_report(results, build, mode)
    echo(f"\nReport: {index} (built in {time.perf_counter() - start:.1f} s"
         + (f"; {len(notes)} warnings in {build / 'report-warnings.txt'})" if notes else ")"))
    return results
