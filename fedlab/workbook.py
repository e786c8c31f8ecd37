"""Execute the notebooks headlessly (papermill), collect their headline numbers and build an HTML report.

Every notebook's summary cell starts with ``# NBVAL_CHECK_OUTPUT`` and prints ``name: value`` lines;
those lines become the report's headline numbers.
"""
from __future__ import annotations

import html
import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fedlab._validation import check_choice, check_int

__all__ = ["NotebookResult", "find_notebooks", "execute_notebook", "headline_numbers", "build_report", "run_workbook"]

SUMMARY_MARK = "# NBVAL_CHECK_OUTPUT"
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class NotebookResult:
    """Outcome of one notebook run."""

    name: str
    title: str
    summary: str
    status: str                      # "ok" or "failed"
    seconds: float
    headline: dict[str, str] = field(default_factory=dict)
    error: str = ""                  # failing cell and exception, when failed
    html: str = ""                   # rendered page, relative to the build folder


def find_notebooks(folder: str | os.PathLike = ROOT / "notebooks", only: str | None = None) -> list[Path]:
    """Notebooks ``NN_name.ipynb`` in reading order; ``only`` keeps those whose name contains it."""
    paths = sorted(p for p in Path(folder).glob("[0-9][0-9]_*.ipynb"))
    if only is not None:
        paths = [p for p in paths if only in p.stem]
        if not paths:
            raise ValueError(f"only={only!r} matches no notebook in {folder}.")
    return paths


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


def headline_numbers(nb) -> dict[str, str]:
    """``name: value`` lines printed by the notebook's ``# NBVAL_CHECK_OUTPUT`` cells."""
    numbers = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.lstrip().startswith(SUMMARY_MARK):
            for out in cell.get("outputs", []):
                if out.get("output_type") == "stream" and out.get("name") == "stdout":
                    for line in out["text"].splitlines():
                        name, sep, value = line.partition(":")
                        if sep:
                            numbers[name.strip()] = value.strip()
    return numbers


def _failing_cell(nb) -> str | None:
    """``In [n] ('first line'): Error: message`` for the first cell with an error output."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
                return f"In [{cell.get('execution_count')}] ({first[:60]!r}): {out['ename']}: {out['evalue']}"
    return None


def execute_notebook(path: Path, out_dir: Path, *, mode: str = "smoke", timeout: int = 600) -> NotebookResult:
    """Run one notebook with papermill (``INTERACTIVE=False``) into ``out_dir`` and render it as HTML."""
    import nbformat
    import papermill

    out_path = out_dir / path.name
    env_note = {"MODE": mode, "INTERACTIVE": False}
    start = time.perf_counter()
    error = ""
    try:
        # --matplotlib=inline: figures go into the notebook (and the report) even when the caller's environment
        # selects a non-inline backend (the Makefile exports MPLBACKEND=Agg, which the kernel would inherit).
        papermill.execute_notebook(str(path), str(out_path), parameters=env_note, kernel_name="python3",
                                   cwd=str(path.parent), execution_timeout=timeout, progress_bar=False,
                                   log_output=False, extra_arguments=["--matplotlib=inline"])
    except Exception as exc:  # papermill raises PapermillExecutionError with the failing cell
        error = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
    seconds = time.perf_counter() - start
    nb = nbformat.read(out_path if out_path.exists() else path, as_version=4)
    if error:
        error = _failing_cell(nb) or error
    title, summary = _title_and_summary(nb)
    result = NotebookResult(path.stem, title, summary, "failed" if error else "ok", seconds,
                            headline_numbers(nb), error)
    if out_path.exists():
        result.html = _render_html(out_path)
    return result


def _render_html(ipynb: Path) -> str:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_filename(str(ipynb))
    html_path = ipynb.with_suffix(".html")
    html_path.write_text(body, encoding="utf-8")
    return html_path.name


def build_report(results: list[NotebookResult], build: Path, mode: str) -> Path:
    """Write ``index.html`` (one row per chapter) and ``summary.json`` into ``build``."""
    rows = []
    for r in results:
        link = f'<a href="{html.escape(r.html)}">{html.escape(r.title or r.name)}</a>' if r.html else html.escape(r.name)
        numbers = "<br>".join(f"{html.escape(k)}: <b>{html.escape(v)}</b>" for k, v in r.headline.items())
        status = "ok" if r.status == "ok" else f"failed<br><small>{html.escape(r.error)}</small>"
        summary = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(r.summary))
        rows.append(f'<tr class="{r.status}"><td>{link}<br><small>{summary}</small></td>'
                    f"<td>{status}</td><td>{r.seconds:.1f} s</td><td>{numbers}</td></tr>")
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fedlab workbook</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}
table{{border-collapse:collapse;width:100%}}td,th{{border-bottom:1px solid #ddd;padding:.5em;vertical-align:top;text-align:left}}
tr.failed td:nth-child(2){{color:#b00020}}tr.ok td:nth-child(2){{color:#1b5e20}}</style></head>
<body><h1>fedlab workbook</h1>
<p>Heterogeneous federated learning: Marfoq's thesis and companion papers, re-run. Mode: <b>{html.escape(mode)}</b>.</p>
<table><thead><tr><th>Chapter</th><th>Status</th><th>Run time</th><th>Headline numbers</th></tr></thead>
<tbody>{''.join(rows)}</tbody></table></body></html>"""
    (build / "index.html").write_text(page, encoding="utf-8")
    (build / "summary.json").write_text(json.dumps([asdict(r) for r in results], indent=1), encoding="utf-8")
    return build / "index.html"


def run_workbook(*, mode: str = "smoke", only: str | None = None, build: str | os.PathLike = ROOT / "build",
                 jobs: int | None = None, timeout: int = 900, notebooks: str | os.PathLike = ROOT / "notebooks",
                 echo=print) -> list[NotebookResult]:
    """Execute the notebooks (``jobs`` at a time), build the report and print a per-notebook summary."""
    check_choice("mode", mode, ("smoke", "full"))
    jobs = check_int("jobs", jobs if jobs is not None else (os.cpu_count() or 1), low=1)
    check_int("timeout", timeout, low=1)
    # absolute paths: papermill changes the working directory while a notebook runs, and notebooks run in threads
    build = Path(build).resolve()
    build.mkdir(parents=True, exist_ok=True)
    paths = [p.resolve() for p in find_notebooks(notebooks, only)]
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    if mode == "full":  # every sweep stores its runs here, so an interrupted or repeated full run resumes
        os.environ.setdefault("FEDLAB_RESULTS", str(ROOT / "results"))

    def one(path: Path) -> NotebookResult:
        result = execute_notebook(path, build, mode=mode, timeout=timeout)
        echo(f"[{result.status:>6}] {result.name:<28} {result.seconds:7.1f} s"
             + (f"  {result.error}" if result.error else ""))
        return result

    echo(f"Running {len(paths)} notebook(s) in {mode} mode, {jobs} at a time, into {build}/ ...")
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, paths))
    index = build_report(results, build, mode)
    echo("\nSummary")
    for r in results:
        numbers = ", ".join(f"{k}={v}" for k, v in r.headline.items())
        echo(f"  {r.name:<28} {r.status:<6} {r.seconds:6.1f} s  {numbers}")
    echo(f"\nReport: {index}")
    return results
