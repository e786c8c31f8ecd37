"""Run one notebook in its own process, the way the suite runs every notebook; write small generated chapters.

Each run gets a fresh interpreter, so a fresh asyncio loop and fresh ZMQ sockets: notebooks that shared one
long-lived loop in the pytest process occasionally lost the wake-up of a kernel reply and sat idle until
papermill's timeout fired. A cell that runs longer than ``cell_timeout`` seconds, or a notebook longer than
``timeout``, fails the test instead of stalling it.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def execute_isolated(path: Path, out: Path, *, parameters: dict | None = None, cell_timeout: int = 120,
                     timeout: int = 300) -> float:
    """Execute ``path`` into ``out`` with papermill in a subprocess; return the wall time in seconds."""
    cmd = [sys.executable, "-m", "papermill", str(path), str(out), "--kernel", "python3", "--cwd",
           str(path.parent), "--execution-timeout", str(cell_timeout), "--no-progress-bar"]
    for name, value in (parameters or {}).items():
        cmd += ["-p", name, str(value)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{path.name} did not finish within {timeout} s") from exc
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise AssertionError(f"{path.name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed


KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
# One claim per verdict (fedlab.claims.Claim's fields less the chapter).
CLAIMS = {
    "reproduced": dict(source="Fig. 1", statement="accuracy (%)", paper=80.0, measured=79.0, rule="tolerance",
                       tolerance=2.0),
    "direction only": dict(source="Table 2", statement="gain over FedAvg (pp)", paper=-14.6, measured=-6.5,
                           rule="direction", tolerance=2.0, why="a smaller model than the paper's"),
    "not reproduced": dict(source="§3.2", statement="cycle time (ms)", paper=109, measured=150.0, rule="tolerance",
                           tolerance=0.05, relative=True, why="slower links in the simulated network"),
    "not run": dict(source="Fig. 4", statement="CIFAR-10 accuracy (%)", paper=(70.0, None), measured=None,
                    rule="tolerance", tolerance=1.0, why="CIFAR-10 is absent"),
}


def write_chapter(folder: Path, name: str, *, verdicts=tuple(CLAIMS), fail: bool = False,
                  paper_data: tuple = ()) -> Path:
    """A small chapter notebook ``folder/name.ipynb`` shaped like the workbook's.

    Title and summary, the ``parameters`` cell, maths (inline, display with ``\\tag``), two figures (the first in a
    cell tagged ``key-figure``), a claims table (one claim per entry of ``verdicts``), an exercise with a markdown
    solution (``source_hidden``) and a code solution (tag ``solution``), the ``# NBVAL_CHECK_OUTPUT`` summary. With
    ``fail``, a cell after the claims raises ``ZeroDivisionError``. With ``paper_data``, the chapter has a paper
    mode on those data sets: the cell after the parameters calls :func:`fedlab.paper.start_paper_mode`.
    """
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    claims = [{"chapter": name, **CLAIMS[v]} for v in verdicts]
    cells = [
        new_markdown_cell(f"# {name[:2]} · Chapter {name[3:].capitalize()}: a test\n\nA *generated* chapter with "
                          "`code`. More text."),
        new_code_cell('MODE = "smoke"\nSEED = 0\nINTERACTIVE = True', metadata={"tags": ["parameters"]}),
        *([new_code_cell(f"from fedlab.claims import Claim\nfrom fedlab.paper import start_paper_mode\n\n"
                         f"if MODE == 'paper':\n    start_paper_mode({list(paper_data)!r}, "
                         f"[Claim(**c) for c in {claims!r}])")] if paper_data else []),
        new_markdown_cell("The mean $\\bar\\kappa^2 = \\sum_k \\pi_k \\kappa_k^2$ and the bound\n\n"
                          "$$\n\\epsilon_{opt} \\le \\frac{1}{\\sqrt{T}} \\tag{2.27}\n$$"),
        new_code_cell("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('key')\nplt.show()",
                      metadata={"tags": ["key-figure"]}),
        new_code_cell("plt.plot([3, 2, 1])\nplt.title('last')\nplt.show()"),
        new_code_cell(f"from fedlab.claims import Claim, show_claims\n\nshow_claims([Claim(**c) for c in {claims!r}])"),
        *([new_code_cell("ANSWER = 1 / 0")] if fail else []),
        new_markdown_cell("**Exercises.** 1. Show that $x^2 \\ge 0$."),
        new_markdown_cell("**Solutions.** 1. A square: $$x^2 = |x|^2 \\ge 0.$$",
                          metadata={"jupyter": {"source_hidden": True}}),
        new_code_cell("print('the solution code ran')", metadata={"tags": ["solution"]}),
        new_code_cell('# NBVAL_CHECK_OUTPUT\nprint(f"mode: {MODE}")\nprint("answer: 42")'),
    ]
    path = Path(folder) / f"{name}.ipynb"
    metadata = {"kernelspec": KERNELSPEC, **({"fedlab": {"paper_data": list(paper_data)}} if paper_data else {})}
    nbformat.write(new_notebook(cells=cells, metadata=metadata), path)
    return path
