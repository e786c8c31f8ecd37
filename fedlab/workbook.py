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
import contextlib
import copy
import functools
import html
import io
import json
import os
import re
import shutil
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from string import Template
from urllib.parse import quote

from fedlab._validation import check_choice, check_int
from fedlab.claims import MIME_TYPE, SCALES, Claim, save_claims, summary, tally_by_kind
from fedlab.exercises import REFERENCE_ENV
from fedlab.engine import ALLOCATOR_ENV
from fedlab.records import FOLDER as RECORDS, load_records, make_record, write_record
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
EXERCISE_TAG = "exercise"
EXERCISE_HEADING = re.compile(r"#{1,6}\s*Exercise\s+(\d+)\.(\d+)\b\s*[·:.\-–—]?\s*(.*?)\s*$", re.M)
"""The first line of a numbered exercise: ``### Exercise 5.2 · title``."""
PLUMBING_TAGS = {"parameters", "injected-parameters"}    # papermill's cells: in the notebook, not on its page
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
LONG_CODE_LINES = 15                                    # longer code cells are collapsed on the page
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


def is_exercise(cell) -> bool:
    """Whether the cell is a numbered exercise: markdown tagged ``exercise`` whose first line is
    ``### Exercise N.k · title``."""
    return (cell.cell_type == "markdown" and EXERCISE_TAG in cell.metadata.get("tags", [])
            and EXERCISE_HEADING.match(cell.source.lstrip()) is not None)


def _notebook_name(nb) -> str:
    """The notebook's stem, from papermill's record of its input (``""`` when unknown)."""
    path = nb.metadata.get("papermill", {}).get("input_path") or ""
    return Path(path).stem


def _chapter_number(name: str) -> str:
    """``"3"`` for ``"03_fedem"`` (the thesis-style chapter number of figures and exercises), ``""`` when none."""
    return str(int(name[:2])) if name[:2].isdigit() else ""


def _tags(cell) -> list:
    return cell.metadata.setdefault("tags", [])


def _add_tags(cell, *tags: str) -> None:
    _tags(cell).extend(t for t in tags if t not in _tags(cell))


def _fence(body: str, char: str = "`") -> str:
    """A directive fence longer than any run of ``char`` in ``body``."""
    return char * max(3, max((len(run) for run in re.findall(f"{re.escape(char)}+", body)), default=0) + 1)


def _directive(name: str, argument: str, options: dict, body: str = "") -> str:
    """A MyST directive block (backtick fence) with ``options`` and ``body``."""
    fence = _fence(body)
    head = f"{fence}{{{name}}} {argument}".rstrip()
    opts = "".join(f":{k}: {v}".rstrip() + "\n" for k, v in options.items())
    return f"{head}\n{opts}\n{body}\n{fence}" if body else f"{head}\n{opts}{fence}"


_MATH_OR_CODE = re.compile(r"(\$\$.+?\$\$|\$[^$\n]+?\$|`+[^`]*?`+|```.*?```)", re.S)


def _outside_math(text: str, change) -> str:
    """``text`` with ``change`` applied to the parts outside maths and code."""
    parts = _MATH_OR_CODE.split(text)
    return "".join(part if i % 2 else change(part) for i, part in enumerate(parts))


_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_EQUATION_NUMBER = re.compile(r"\\q?quad\s*\((\d+\.\d+[a-z]?)\)")


def _label_equations(source: str, taken: frozenset = frozenset()) -> tuple[str, set[str]]:
    r"""Display maths numbered as ``\qquad (3.12)`` at their end get ``\tag{3.12}\label{eq-3.12}`` (MathJax numbers
    and links them), unless ``taken`` (labelled earlier on the page); returns the new source and the numbers
    labelled."""
    numbers = set()

    def one(match):
        tail = re.search(r"\\q?quad\s*\((\d+\.\d+[a-z]?)\)\s*[.,;]?\s*$", match.group(1))
        # one number, at the end, on a one-line display (Sphinx wraps multi-line maths in split, where \tag fails)
        if (len(_EQUATION_NUMBER.findall(match.group(1))) != 1 or tail is None or "\\\\" in match.group(1)
                or tail.group(1) in taken | numbers):
            return match.group(0)
        numbers.add(tail.group(1))
        body = match.group(1)[:tail.start()].rstrip()
        return f"$${body} \\tag{{{tail.group(1)}}}\\label{{eq-{tail.group(1)}}}$$"

    return _DISPLAY_MATH.sub(one, source), numbers


def _link_equations(source: str, numbers: set[str]) -> str:
    r"""Plain-text equation numbers ``(3.12)`` of equations on the page become MathJax links (``\eqref``)."""
    if not numbers:
        return source
    pattern = re.compile(r"\((\d+\.\d+[a-z]?)\)")
    return _outside_math(source, lambda text: pattern.sub(
        lambda m: f"$\\eqref{{eq-{m.group(1)}}}$" if m.group(1) in numbers else m.group(0), text))


@functools.lru_cache(maxsize=1)
def bibliography_keys() -> frozenset[str]:
    """The citation keys of the report's bibliography (``fedlab/report/references.bib``): the thesis's labels."""
    text = (SITE / "references.bib").read_text(encoding="utf-8")
    return frozenset(re.findall(r"^@\w+\{([^,\s]+),", text, re.M))


def _cite(source: str) -> str:
    """``[McM+17]`` and ``[Bac92, Thm. 3.23]`` as citations of the bibliography (``{cite:p}``); other brackets stay."""
    keys = bibliography_keys()

    def one(match):
        key, note = match.group(1), (match.group(2) or "").strip()
        if key not in keys:
            return match.group(0)
        return f"{{cite:p}}`{key}{{{note}}}`" if note else f"{{cite:p}}`{key}`"

    return _outside_math(source, lambda text: re.sub(r"\[([^\[\]\s,{}]+)(?:,\s*([^\[\]{}]+))?\](?!\()", one, text))


def _is_interactive(cell) -> bool:
    return cell.cell_type == "code" and re.search(r"\binteract(ive)?\s*\(", cell.source) is not None


def _interactive_note(name: str) -> "nbformat.NotebookNode":
    from nbformat.v4 import new_markdown_cell

    link = f'<a href="_sources/{name}.ipynb" download>{name}.ipynb</a>' if name else "the notebook"
    return new_markdown_cell(_directive(
        "admonition", "Interactive in Jupyter", {"class": "interactive-note"},
        f"In Jupyter this section has sliders: download {link} and run it in JupyterLab (`make lab`). This page "
        "shows the figure for the default settings."))


def _figure_cell(output, caption: str, label: str):
    """An input-less cell holding one figure output, captioned (myst-nb's ``mystnb.figure`` metadata; no name, so
    that Sphinx's own figure numbers stay out of the caption, which carries the chapter's)."""
    from nbformat.v4 import new_code_cell

    # a source myst-nb renders (it skips empty cells), removed from the page by the tag
    cell = new_code_cell(f"# {label}", metadata={"tags": ["remove-input"],
                                                  "mystnb": {"figure": {"caption": caption}}})
    cell.outputs = [output]
    return cell


def _rest_cell(outputs):
    from nbformat.v4 import new_code_cell

    cell = new_code_cell("# outputs", metadata={"tags": ["remove-input"]})
    cell.outputs = outputs
    return cell


def _heading_text(source: str) -> str | None:
    """The text of the last markdown heading in ``source`` (numbering such as ``4.`` dropped)."""
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", source, re.M)
    return re.sub(r"^\d+[a-z]?(\.\d+)*\.?\s+(·\s+)?", "", headings[-1]) if headings else None


def _captions(cell) -> list[str]:
    """The captions the notebook gives a cell's figures: ``metadata.fedlab.captions`` (one per figure), else
    myst-nb's ``metadata.mystnb.figure.caption``."""
    listed = cell.metadata.get("fedlab", {}).get("captions")
    if isinstance(listed, list):
        return [str(c) for c in listed]
    one = cell.metadata.get("mystnb", {}).get("figure", {}).get("caption")
    return [str(one)] if one else []


def _split_figures(cell, chapter: str, first: int, section: str | None) -> list:
    """``cell`` followed by one captioned cell per figure it shows (and the outputs between them), numbered from
    ``first`` as ``Figure <chapter>.<k>``; a figure without a caption of its own is named after its section."""
    images = [i for i, out in enumerate(cell.get("outputs", [])) if "image/png" in out.get("data", {})]
    if not images:
        return [cell]
    authored = _captions(cell)
    cell.metadata.get("mystnb", {}).pop("figure", None)
    outputs, cell.outputs = cell.outputs, cell.outputs[:images[0]]
    cells, rest = [cell], []
    for k, i in enumerate(images):
        if k:
            rest = outputs[images[k - 1] + 1:i]
            if rest:
                cells.append(_rest_cell(rest))
        number = f"{chapter}.{first + k}" if chapter else str(first + k)
        text = authored[k] if k < len(authored) else (section or "Output of the cell above") + \
            (f" ({k + 1} of {len(images)})" if len(images) > 1 and len(authored) <= k else "")
        cells.append(_figure_cell(outputs[i], f"**Figure {number}.** {text}", f"fig-{number.replace('.', '-')}"))
    if outputs[images[-1] + 1:]:
        cells.append(_rest_cell(outputs[images[-1] + 1:]))
    return cells


def _exercise_cell(cell, chapter: str) -> tuple[object, str]:
    """The exercise as a ``sphinx-exercise`` block titled ``Exercise N.k · title``; returns the cell and its label."""
    first, _, body = cell.source.lstrip().partition("\n")
    match = EXERCISE_HEADING.match(first)
    number, title = f"{match.group(1)}.{match.group(2)}", match.group(3).strip()
    label = f"ex-{number.replace('.', '-')}"
    cell.source = _directive("exercise", f"{number} · {title}" if title else number,
                             {"label": label, "nonumber": "", "class": "numbered-exercise"}, body.strip())
    return cell, label


def _solution_gate(start: str | None):
    from nbformat.v4 import new_markdown_cell

    if start is None:
        return new_markdown_cell(_directive("solution-end", "", {}))
    return new_markdown_cell(_directive("solution-start", start, {"class": "dropdown"}))


def _old_solution(cell) -> None:
    """A solution outside a numbered exercise: markdown in ``<details>``, code in myst-nb's collapsed cell."""
    if cell.cell_type == "markdown":
        cell.source = f'<details class="solution">\n<summary>Solution</summary>\n\n{cell.source}\n\n</details>'
    elif cell.cell_type == "code":
        _add_tags(cell, "hide-cell")
        cell.metadata["mystnb"] = {**cell.metadata.get("mystnb", {}), "code_prompt_show": "Show solution",
                                   "code_prompt_hide": "Hide solution"}


def _is_plumbing(cell) -> bool:
    """The papermill parameters cells and the headline cell: kept in the notebook, removed from the page."""
    return (bool(PLUMBING_TAGS & set(cell.metadata.get("tags", [])))
            or (cell.cell_type == "code" and cell.source.lstrip().startswith(HEADLINE_MARK)))


def _drop_widgets(nb) -> None:
    """No widget state or views on the page (they would load require.js and the widget manager from a CDN)."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.get("outputs", []) if WIDGET_MIME not in o.get("data", {})]


def page_notebook(nb, *, name: str | None = None, record=None):
    """A copy of ``nb`` as its page on the report shows it.

    - a verdict box after the title (:func:`verdict_box`: full-scale record, smoke run, findings, links);
    - the papermill ``parameters``/``injected-parameters`` cells and the ``# NBVAL_CHECK_OUTPUT`` headline cell
      removed (``remove-cell``), widget state and views dropped, code cells longer than :data:`LONG_CODE_LINES`
      lines collapsed (``hide-input``), the cells that show claims without their code;
    - the claims' JSON (:data:`fedlab.claims.MIME_TYPE`) and the headlines' (:data:`fedlab.headlines.MIME_TYPE`) out
      of the outputs; a claims table grouped by kind, not-run claims one line per reason (:func:`claims_markdown`);
    - every figure its own captioned, numbered cell (``Figure 3.2``; the caption from the cell's metadata
      ``fedlab.captions`` or ``mystnb.figure.caption``, else its section's heading);
    - each numbered exercise (:func:`is_exercise`) a ``sphinx-exercise`` block, its solution cells one drop-down;
      older solutions (:func:`is_solution` cells outside an exercise) collapsed in ``<details>``;
    - a note before each interactive cell (sliders in Jupyter) linking the notebook;
    - equations numbered ``\\qquad (3.12)`` tagged and labelled, their numbers in the text linked; the thesis's
      citation labels (``[McM+17]``) cited from the bibliography.

    ``name`` is the notebook's stem (default: papermill's record of the input); ``record`` its full-scale record.
    """
    from nbformat.v4 import new_markdown_cell

    nb = copy.deepcopy(nb)
    name = name if name is not None else _notebook_name(nb)
    chapter = _chapter_number(name)
    all_claims = notebook_claims(nb)
    _drop_widgets(nb)
    numbers = set()
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source, found = _label_equations(cell.source, frozenset(numbers))
            numbers |= found
    cells, exercise, in_solution, figures, section, boxed, claims_seen = [], None, False, 0, None, False, 0
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if in_solution and not is_solution(cell):
            cells.append(_solution_gate(None))
            in_solution, exercise = False, None
        if cell.cell_type == "markdown":
            section = _heading_text(cell.source) or section
            if is_exercise(cell):
                cell, exercise = _exercise_cell(cell, chapter)
            elif is_solution(cell) and exercise is None:
                _old_solution(cell)
            if "papermill-error-cell-tag" not in tags:
                cell.source = _cite(_link_equations(cell.source, numbers))
        if is_solution(cell) and exercise is not None and not in_solution:
            cells.append(_solution_gate(exercise))
            in_solution = True
        if cell.cell_type == "code":
            shown = [out for out in cell.get("outputs", []) if MIME_TYPE in out.get("data", {})]
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                if MIME_TYPE in data:
                    claims = [Claim.from_dict(d) for d in data.pop(MIME_TYPE)]
                    data["text/markdown"] = claims_markdown(claims, anchor="claims-table" if not claims_seen else "")
                    claims_seen += 1
                data.pop(HEADLINES_MIME, None)
            if _is_plumbing(cell):
                _add_tags(cell, "remove-cell")
            elif shown:
                _add_tags(cell, "remove-input")
            elif is_solution(cell) and exercise is None:
                _old_solution(cell)
            elif not is_solution(cell) and len(cell.source.splitlines()) > LONG_CODE_LINES:
                _add_tags(cell, "hide-input")
            if _is_interactive(cell):
                cells.append(_interactive_note(name))
            if not (is_solution(cell) and exercise is None) and "remove-cell" not in _tags(cell):
                split = _split_figures(cell, chapter, figures + 1, section)
                figures += len(split) - 1 - sum(1 for c in split[1:] if "figure" not in c.metadata.get("mystnb", {}))
                cells.extend(split)
                continue
        if not boxed and cell.cell_type == "markdown" and "papermill-error-cell-tag" not in tags:
            # the box right under the title: the first cell is split after its heading
            title = re.match(r"\s*#[^\n]*\n?", cell.source)
            rest = cell.source[title.end():].strip() if title else ""
            if title and rest:
                cell.source = title.group(0).rstrip()
            cells.extend([cell, new_markdown_cell(verdict_box(all_claims, record, name)),
                          *([new_markdown_cell(rest)] if title and rest else [])])
            boxed = True
            continue
        cells.append(cell)
    if in_solution:
        cells.append(_solution_gate(None))
    nb.cells = cells
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


def _css(verdict: str) -> str:
    return verdict.replace(" ", "-")


def _verdict(verdict: str, text: str | None = None) -> str:
    """``text`` (default: the verdict) styled as ``verdict``."""
    return f"[{text or verdict}]{{.verdict .{_css(verdict)}}}"


def _page(r: NotebookResult, text: str) -> str:
    """``text`` linked to the notebook's page, when it has one."""
    return f"[{text}]({r.name}.ipynb)" if r.html else text


def _short_title(title: str, name: str) -> str:
    """A chapter's short name: its title up to the first colon (``03 · FedEM``)."""
    return _inline(title.split(":")[0] or name)


def _filter_link(text: str, css: str = "", **filters: str) -> str:
    """``text`` linking the index's claims table filtered by ``filters`` (chapter, verdict, kind; see claims.js)."""
    query = "&".join(f"{k}={quote(v)}" for k, v in filters.items())
    return f'<a class="{css}" href="#claims?{query}">{html.escape(text)}</a>' if css else \
        f'<a href="#claims?{query}">{html.escape(text)}</a>'


EXPERIMENT_VERDICTS = ("reproduced", "direction only", "inconclusive", "not reproduced", "not run")
"""The verdicts an experiment can take: the scoreboard's headline columns."""
OTHER_KINDS = {"analytic": "Analytic", "consistency": "Consistency", "erratum": "Errata"}
KIND_ORDER = ("experiment", "erratum", "analytic", "consistency")
"""The order of the kinds in a chapter's claims table: the papers' measured results first."""
STATUS_TEXT = {"ok": "ran", "data absent": "data absent", "failed": "failed"}
"""How a run's status reads on the scoreboard ("ran": the notebook executed, whatever its verdicts)."""


def _experiment_counts(counts: dict[str, dict[str, int]]) -> list[str]:
    return [str(counts["experiment"].get(v, 0)) for v in EXPERIMENT_VERDICTS]


def _kind_text(counts: dict[str, int]) -> str:
    """``"12 reproduced, 1 not reproduced"`` (empty when the kind has no claim)."""
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def _counts_markdown(claims: list[Claim], chapter: str | None = None, link: bool = True) -> str:
    """Claims counted by kind and verdict, each count coloured by its verdict and (with ``link``) linking the
    index's claims table filtered to those claims."""
    parts = []
    for kind, counts in tally_by_kind(claims).items():
        if not counts:
            continue
        items = []
        for verdict, n in counts.items():
            if link:
                filters = {**({"chapter": chapter} if chapter else {}), "kind": kind, "verdict": verdict}
                items.append(_filter_link(f"{n} {verdict}", f"verdict {_css(verdict)}", **filters))
            else:
                items.append(f'<span class="verdict {_css(verdict)}">{n} {html.escape(verdict)}</span>')
        parts.append(f'<span class="kind-name">{KIND_NAMES[kind]}</span> ' + " · ".join(items))
    return "<br>".join(parts) if parts else "no claims"


KIND_NAMES = {"experiment": "experiments", "analytic": "analytic", "consistency": "consistency",
              "erratum": "errata"}


def record_status(record) -> str:
    """``"stale"`` when the chapter's package or notebook changed since the record, else ``"current"``."""
    return "stale" if getattr(record, "stale", False) else "current"


def _record_line(record, chapter: str | None, link: bool = True) -> str:
    """A chapter's full-scale record: when, where, how long, its counts; *stale* when the code changed since."""
    if record is None:
        return '<span class="no-record">no full-scale record</span>'
    date = str(getattr(record, "date", ""))[:10]
    commit = str(getattr(record, "commit", ""))[:7]
    minutes = f"{getattr(record, 'seconds', 0) / 60:.0f} min"
    stale = ('<span class="stale" title="the chapter\'s package or notebook changed since this record: '
             'python -m fedlab run --mode full --record refreshes it">stale</span> ' if record.stale else "")
    counts = _counts_markdown(list(record.claims), chapter, link=False)
    return f'{stale}<span class="record-meta">{date} · {commit} · {minutes}</span><br>{counts}'


def _findings(claims: list[Claim], limit: int = 3) -> list[Claim]:
    """The claims a reader should see first: experiments not reproduced, errata, then experiments reproduced."""
    order = [lambda c: c.kind == "experiment" and c.verdict == "not reproduced",
             lambda c: c.kind == "erratum" and c.verdict == "erratum confirmed",
             lambda c: c.kind == "experiment" and c.verdict == "reproduced",
             lambda c: c.kind == "experiment" and c.verdict in ("direction only", "inconclusive")]
    found = []
    for rule in order:
        found += [c for c in claims if rule(c) and c not in found]
    return found[:limit]


def verdict_box(claims: list[Claim], record=None, name: str = "") -> str:
    """The box a chapter page opens with (MyST): the full-scale record (or *no full-scale record*, or *stale*), this
    run's claims counted by kind and verdict, the two or three findings that matter and links to the claims."""
    scales = ", ".join(sorted({c.scale for c in claims if c.verdict != "not run"}, key=SCALES.index)) or "no"
    lines = [f"**Full scale (recorded):** {_record_line(record, None, link=False)}",
             f"**This run ({scales} scale):** {_counts_markdown(claims, link=False)}"]
    findings = _findings(list(record.claims) if record is not None and not record.stale else claims)
    if findings:
        lines.append("**Findings:**\n\n" + "\n".join(
            f"- {_verdict(c.verdict, c.verdict_text)} {_inline(c.source)}, {_inline(c.statement)}: paper "
            f"{_inline(c.row()[3])}, measured {_inline(c.row()[4])}" for c in findings))
    links = ([f'<a href="#claims-table">all {len(claims)} claims of this chapter</a>'] if claims else []) + \
        ([f'<a href="index.html#claims?chapter={quote(name[:2])}">in the workbook\'s claims table</a>'] if name else [])
    if links:
        lines.append(" · ".join(links))
    return _directive("admonition", "Verdicts", {"class": "verdict-box"}, "\n\n".join(lines))


def _claims_rows(claims: list[Claim], kinds: tuple[str, ...], verdicts=None) -> list[list[str]]:
    """Table rows of ``claims`` of ``kinds`` (in that order): the claim (source, statement, kind and scale in one
    cell), paper, measured, verdict with its rule, why; not-run claims one row per reason. ``verdicts`` (a test of
    a verdict) keeps only some."""
    rows = []
    for kind in kinds:
        group = [c for c in claims if c.kind == kind and (verdicts is None or verdicts(c.verdict))]
        for c in group:
            if c.verdict == "not run":
                continue
            source, statement, _, paper, measured, rule, verdict, why = map(_inline, c.row())
            rows.append([f"**{source}**<br>{statement} [{kind}, {c.scale}]{{.rule}}", paper, measured,
                         f"{_verdict(c.verdict, verdict)} [{rule}]{{.rule}}", why])
        reasons: dict[str, list[Claim]] = {}
        for c in group:
            if c.verdict == "not run":
                reasons.setdefault(_inline(c.why), []).append(c)
        for why, same in reasons.items():
            sources = [_inline(c.source) for c in same]
            scale = ", ".join(sorted({c.scale for c in same}, key=SCALES.index))
            what = (f"{len(same)} claims not run: " + "; ".join(sources[:3])
                    + (f"; … ({len(same) - 3} more)" if len(same) > 3 else "")) if len(same) > 1 \
                else f"**{sources[0]}**<br>{_inline(same[0].statement)}"
            rows.append([f"{what} [{kind}, {scale}]{{.rule}}", "", "", _verdict("not run"), why])
    return rows


CLAIMS_HEADER = ["Claim", "Paper", "Measured", "Verdict", "Why"]
MAX_OPEN_ROWS = 20      # a chapter's claims table longer than this folds its reproduced experiments


def claims_markdown(claims: list[Claim], anchor: str = "") -> str:
    """A chapter's claims as its page shows them: the summary first, then the experiments and errata (claims that
    were not run collapsed into one row per reason), then the analytic and consistency claims in a drop-down.
    ``anchor`` names the table."""
    head = f'<div id="{anchor}"></div>\n\n' if anchor else ""
    main = _claims_rows(claims, ("experiment", "erratum"))
    reproduced = []
    if len(main) > MAX_OPEN_ROWS:   # a long table: the disagreements stay open, the reproduced experiments fold
        main = _claims_rows(claims, ("experiment", "erratum"), lambda v: v != "reproduced")
        reproduced = _claims_rows(claims, ("experiment", "erratum"), lambda v: v == "reproduced")
    other = _claims_rows(claims, ("analytic", "consistency"))
    out = f"{head}{summary(claims)}"
    if main:
        out += "\n\n" + _table("claims-page", CLAIMS_HEADER, main)
    for rows, title in ((reproduced, f"{len(reproduced)} reproduced experiments"),
                        (other, f"{len(other)} analytic and consistency claims")):
        if rows:
            out += "\n\n" + _directive("admonition", title, {"class": "dropdown claims-more"},
                                       _table("claims-page", CLAIMS_HEADER, rows))
    return out


def _chapter_row(r: NotebookResult, thumbnail: str | None, record, with_records: bool) -> list[str]:
    title = _inline(r.title or r.name)
    chapter = r.name[:2]
    figure = _page(r, f"![Key figure of {title}]({thumbnail}){{.thumbnail}}") if thumbnail else ""
    name = _page(r, _short_title(r.title, r.name)) + (f" [{_inline(r.summary)}]{{.summary}}" if r.summary else "")
    status = f"[{STATUS_TEXT[r.status]}]{{.status .{_css(r.status)}}} {r.seconds:.1f}\u00a0s" + \
        (f" {_code(r.error)}{{.error}}" if r.status != "ok" else "")
    live = _counts_markdown(r.claims, chapter)
    return [figure, name, *([_record_line(record, chapter)] if with_records else []), live, status]


def _claim_rows(r: NotebookResult, record) -> list[list[str]]:
    chapter = _page(r, _short_title(r.title, r.name))
    recorded = {(c.source, c.statement): c for c in (record.claims if record is not None else [])}
    rows = []
    for c in r.claims:
        source, statement, kind, paper, measured, rule, verdict, why = map(_inline, c.row())
        full = recorded.get((c.source, c.statement))
        full_text = "—" if full is None else _verdict(full.verdict, full.verdict) + \
            (" [stale]{.stale}" if record.stale else "")
        rows.append([chapter, source, statement, f"{kind} ({c.scale})", paper, measured,
                     f"{_verdict(c.verdict, verdict)} [{rule}]{{.rule}}", full_text, why])
    return rows


def _headline(claims: list[Claim], records: dict | None) -> str:
    """The index's lead: the recorded full-scale experiments counted by verdict, then this run's."""
    def counts(cs):
        experiments = tally_by_kind(cs)["experiment"]
        return (f"{sum(experiments.values())} experiments: "
                + (" · ".join(_verdict(v, f"{n} {v}") for v, n in experiments.items()) or "none"))

    lines = []
    if records:
        recorded = [c for rec in records.values() for c in rec.claims]
        stale = sum(1 for rec in records.values() if rec.stale)
        lines.append(f"**Full scale (recorded, {len(records)} chapter{'s' if len(records) > 1 else ''}"
                     + (f", [{stale} stale]{{.stale}}" if stale else "") + f"):** {counts(recorded)}")
    else:
        lines.append("**Full scale:** no full-scale record yet (`python -m fedlab run --mode full --record`).")
    lines.append(f"**This run (live check):** {counts(claims)}")
    counts_all = tally_by_kind(claims)
    others = "; ".join(f"{name.lower()} {_kind_text(counts_all[k])}" for k, name in OTHER_KINDS.items()
                       if counts_all[k])
    if others:
        lines.append(f"Beside them, never counted as reproductions: {others}.")
    return "  \n".join(lines)


LEGEND = {
    "verdicts": {
        "reproduced": "the measurement agrees with the paper under the claim's rule",
        "direction only": "same sign or direction as the paper, not within the tolerance",
        "inconclusive": "the seeds' 95 % interval cannot decide; the why says about how many seeds would",
        "not reproduced": "the measurement disagrees with the paper under the rule",
        "not run": "not measured in this run (e.g. the real data are absent); the why says how to run it",
        "erratum confirmed": "the paper's printed value is wrong and the measurement matches the corrected one",
        "consistent": "our code agrees with an invariant or with itself (never counted as a reproduction)",
        "inconsistent": "our code disagrees with an invariant or with itself",
    },
    "kinds": {
        "experiment": "a paper's measured result, re-run",
        "analytic": "a paper's formula, closed form or bound, recomputed",
        "consistency": "our code against an invariant or itself",
        "erratum": "the paper's printed value is wrong; the measurement must match the corrected value",
    },
    "rules": {
        "within ± x (or x %)": "the measurement (over seeds: its mean's 95 % interval) lies within x of the paper's",
        "same sign": "the measurement has the paper's sign or ordering (direction rule)",
        "qualitative": "the paper's statement held, or not, in our measurement",
        "smoke scale": "measured in the quick default run: a disagreement there reads as such",
    },
}


def _legend() -> str:
    """The verdicts, kinds and rules in words (a definition list per group)."""
    out = []
    for group, items in LEGEND.items():
        terms = "".join(
            f'<dt>{f"<span class=verdict-swatch>{html.escape(k)}</span>" if group != "verdicts" else _span_verdict(k)}'
            f"</dt><dd>{html.escape(v)}</dd>" for k, v in items.items())
        out.append(f'<div class="legend-group"><p class="legend-title">{group.capitalize()}</p>'
                   f'<dl class="legend">{terms}</dl></div>')
    return '<div class="legend-groups">\n' + "\n".join(out) + "\n</div>"


def _span_verdict(verdict: str) -> str:
    return f'<span class="verdict {_css(verdict)}">{html.escape(verdict)}</span>'


def scoreboard_markdown(results: list[NotebookResult], mode: str, thumbnails: dict[str, str] | None = None,
                        records: dict | None = None) -> str:
    """The report's index page (MyST markdown, from ``fedlab/report/scoreboard.md``).

    It leads with the recorded full-scale verdicts (``records``: :func:`fedlab.records.load_records`, a record per
    notebook name with ``claims``, ``date``, ``commit``, ``seconds`` and ``stale``) and shows this run beside them as
    the live check: per chapter its key figure (``thumbnails`` maps a notebook's name to the figure's path relative to
    the page), its short name, its full-scale record (*stale* when the code changed since, *no full-scale record*
    when none), this run's claims counted by kind and verdict (each count links the claims table filtered to them)
    and its run (status and time, the error of a failed run). Then a legend of verdicts, kinds and rules, and one
    table of every claim with its recorded full-scale verdict beside it (sorted, filtered and searched in the
    browser by ``claims.js``).
    """
    check_choice("mode", mode, MODES)
    thumbnails = thumbnails or {}
    records = records or {}
    with_records = True
    claims = [c for r in results for c in r.claims]
    chapters = [_chapter_row(r, thumbnails.get(r.name), records.get(r.name), with_records) for r in results]
    total_status = _status_counts(results)
    chapters.append(["", "**All chapters**", *([_record_line_total(records)] if with_records else []),
                     _counts_markdown(claims), f"{total_status} {sum(r.seconds for r in results):.1f}\u00a0s"])
    claim_rows = [row for r in results for row in _claim_rows(r, records.get(r.name))]
    return Template((SITE / "scoreboard.md").read_text(encoding="utf-8")).substitute(
        mode=mode, headline=_headline(claims, records), legend=_legend(),
        chapters=_table("scoreboard", ["Key figure", "Chapter", *(["Full scale (recorded)"] if with_records else []),
                                       f"This run ({mode}, live)", "Run"], chapters),
        claims=(_table("claims", ["Chapter", "Source", "Claim", "Kind (scale)", "Paper", "Measured", "Verdict",
                                  "Full scale", "Why"], claim_rows)
                if claim_rows else "No chapter has shown claims yet (`fedlab.claims.show_claims`)."),
        pages="\n".join(r.name for r in results if r.html))


def _record_line_total(records: dict) -> str:
    if not records:
        return '<span class="no-record">no full-scale record</span>'
    stale = sum(1 for rec in records.values() if rec.stale)
    return (f"{len(records)} recorded" + (f', <span class="stale">{stale} stale</span>' if stale else "") + "<br>"
            + _counts_markdown([c for rec in records.values() for c in rec.claims], link=False))


def _status_counts(results: list[NotebookResult]) -> str:
    """``"7 ran, 1 failed"``, with ``data absent`` when some notebook's real data were absent."""
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    return ", ".join(f"{n} {STATUS_TEXT[s]}" for s, n in counts.items() if n or s != "data absent")


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


def _stage(results: list[NotebookResult], build: Path, source: Path, records: dict) -> dict[str, str]:
    """Copy the executed notebooks into the site's ``source`` as their pages show them (:func:`page_notebook`), the
    bibliography with its page, and write the key figures.

    Returns the key figures' paths relative to ``source``, by notebook name.
    """
    import nbformat

    thumbnails = {}
    (source / "_figures").mkdir(parents=True)
    for r in results:
        if not r.html:
            continue
        nb = nbformat.read(build / f"{r.name}.ipynb", as_version=4)
        nbformat.write(page_notebook(nb, name=r.name, record=records.get(r.name)), source / f"{r.name}.ipynb")
        png = key_figure(nb)
        if png is not None:
            thumbnails[r.name] = f"_figures/{r.name}.png"
            (source / thumbnails[r.name]).write_bytes(png)
    (source / "references.bib").write_bytes((SITE / "references.bib").read_bytes())
    (source / "references.md").write_text(REFERENCES_PAGE, encoding="utf-8")
    return thumbnails


REFERENCES_PAGE = """# References

The works the chapters cite, with the thesis's labels.

```{bibliography}
```
"""


def _notebook_sources(results: list[NotebookResult], build: Path) -> None:
    """Each page's download (``_sources/<name>.ipynb``, the theme's download button and the interactive notes'
    links) is the notebook as stored in ``notebooks/``: the one to open in JupyterLab, sliders and all."""
    import nbformat

    for r in results:
        target = build / "_sources" / f"{r.name}.ipynb"
        if not r.html or not target.exists():
            continue
        origin = nbformat.read(build / f"{r.name}.ipynb", as_version=4).metadata.get("papermill", {}) \
            .get("input_path")
        if origin and Path(origin).is_file():
            target.write_bytes(Path(origin).read_bytes())


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
            warnings.filterwarnings("ignore", category=category, module=r"(sphinx_book_theme|myst_parser|myst_nb|sphinx_exercise|sphinx_togglebutton|sphinxcontrib)\.")
        app = Sphinx(source, SITE, build, doctrees, "html", status=None, warning=log, freshenv=True)
        app.build()
    return [line for line in log.getvalue().splitlines() if line.strip()]


@contextlib.contextmanager
def _no_folder_beside(build: Path):
    """Remove what myst-nb writes beside the site (``build/../jupyter_execute``, its notebooks and their images: the
    site holds its own copies), unless that folder was there before: with the default ``build/``, it is the
    repository's root."""
    beside = build.resolve().parent / "jupyter_execute"
    existed = beside.exists()
    try:
        yield
    finally:
        if not existed:
            shutil.rmtree(beside, ignore_errors=True)


def build_report(results: list[NotebookResult], build: Path, mode: str,
                 records: dict | None = None) -> tuple[Path, list[str]]:
    """Write ``summary.json``, ``claims.json`` (every chapter's claims) and the site into ``build``.

    ``records`` are the full-scale records by notebook name (:func:`fedlab.records.load_records`), which the
    scoreboard and the chapters' verdict boxes lead with. Returns the scoreboard's path (``build/index.html``) and
    the site builder's warnings (also written to ``build/report-warnings.txt`` when there are any).
    """
    check_choice("mode", mode, MODES)
    (build / "summary.json").write_text(json.dumps([r.to_dict() for r in results], indent=1, ensure_ascii=False),
                                        encoding="utf-8")
    save_claims([c for r in results for c in r.claims], build / "claims.json")
    with tempfile.TemporaryDirectory(prefix="fedlab-site-") as tmp:
        source = Path(tmp) / "source"
        records = {name: rec for name, rec in (records or {}).items() if any(r.name == name for r in results)}
        thumbnails = _stage(results, build, source, records)
        (source / "index.md").write_text(scoreboard_markdown(results, mode, thumbnails, records), encoding="utf-8")
        with _no_folder_beside(build):
            notes = _sphinx(source, build, Path(tmp) / "doctrees")
    _notebook_sources(results, build)
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
    os.environ.setdefault("FEDLAB_KEEP_WORKERS", "1")   # a notebook's sweeps share their workers (fedlab.experiments)
    for name, value in ALLOCATOR_ENV.items():            # the kernels' allocator keeps its freed memory
        os.environ.setdefault(name, value)
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
    index, notes = build_report(results, build, mode, load_records(records_folder, notebooks))
    echo(f"\nReport: {index} (built in {time.perf_counter() - start:.1f} s"
         + (f"; {len(notes)} warnings in {build / 'report-warnings.txt'})" if notes else ")"))
    return results
