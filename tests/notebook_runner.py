"""Run one notebook in its own process, the way the suite runs every notebook; write small generated chapters.

Each run gets a fresh interpreter and a fresh kernel, driven by jupyter_client's *blocking* client (the one nbval
uses): its replies are polled with ``zmq.Poller``, whereas the asyncio clients of papermill/nbclient occasionally
lost the wake-up of a kernel reply, kernel and client both idle until the cell timeout fired. A cell that runs
longer than ``cell_timeout`` seconds, or a notebook longer than ``timeout``, fails the test instead of stalling it.

``python notebook_runner.py SOURCE OUT CELL_TIMEOUT [PARAMETERS_JSON]`` is what :func:`execute_isolated` runs.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REFERENCE_ENV = "FEDLAB_REFERENCE_ANSWERS"   # fedlab.exercises.REFERENCE_ENV (this runner imports nothing of fedlab)


def execute_isolated(path: Path, out: Path, *, parameters: dict | None = None, cell_timeout: int = 120,
                     timeout: int = 300, env: dict | None = None) -> float:
    """Execute ``path`` into ``out`` in a subprocess (``env`` added to its environment; ``parameters`` assigned after
    the cell tagged ``parameters``); return the wall time in seconds."""
    cmd = [sys.executable, __file__, str(path), str(out), str(cell_timeout), json.dumps(parameters or {})]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1", REFERENCE_ENV: "1", **(env or {})}
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{path.name} did not finish within {timeout} s") from exc
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise AssertionError(f"{path.name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed


def _with_parameters(nb, parameters: dict):
    """Insert ``name = value`` assignments after the cell tagged ``parameters`` (papermill's injected cell)."""
    import nbformat

    if parameters:
        at = next((i + 1 for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), 0)
        source = "\n".join(f"{name} = {value!r}" for name, value in parameters.items())
        nb.cells.insert(at, nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]}))
    return nb


def execute_notebook(path: Path, out: Path, cell_timeout: int, parameters: dict) -> None:
    """Run every code cell of ``path`` in a new kernel (working directory: the notebook's folder) and write the
    notebook with its outputs to ``out``; raise ``RuntimeError`` naming the first failing cell."""
    import nbformat
    from jupyter_client.manager import start_new_kernel

    nb = _with_parameters(nbformat.read(path, as_version=4), parameters)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(Path(path).parent), startup_timeout=120)
    try:
        for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), start=1):
            cell.outputs, cell.execution_count = [], count

            def keep(msg, cell=cell):
                kind = msg["msg_type"]
                if kind == "clear_output":
                    cell.outputs = []
                elif kind in ("stream", "display_data", "execute_result", "error"):
                    cell.outputs.append(nbformat.v4.output_from_msg(msg))

            reply = kc.execute_interactive(cell.source, timeout=cell_timeout, output_hook=keep, allow_stdin=False)
            if reply["content"]["status"] != "ok":
                nbformat.write(nb, out)
                first = cell.source.strip().splitlines()[0] if cell.source.strip() else ""
                raise RuntimeError(f"In [{count}] ({first[:60]!r}): {reply['content'].get('ename')}: "
                                   f"{reply['content'].get('evalue')}")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    nbformat.write(nb, out)


KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
# One claim per verdict (fedlab.claims.Claim's fields less the chapter).
CLAIMS = {
    "reproduced": dict(source="Fig. 1", statement="accuracy (%)", paper=80.0, measured=79.0, rule="tolerance",
                       tolerance=2.0, kind="experiment", scale="smoke"),
    "direction only": dict(source="Table 2", statement="gain over FedAvg (pp)", paper=-14.6, measured=-6.5,
                           rule="direction", tolerance=2.0, why="a smaller model than the paper's", kind="experiment",
                           scale="smoke"),
    "not reproduced": dict(source="§3.2", statement="cycle time (ms)", paper=109, measured=150.0, rule="tolerance",
                           tolerance=0.05, relative=True, why="slower links in the simulated network", kind="analytic",
                           scale="full"),
    "not run": dict(source="Fig. 4", statement="CIFAR-10 accuracy (%)", paper=(70.0, None), measured=None,
                    rule="tolerance", tolerance=1.0, why="CIFAR-10 is absent", kind="experiment", scale="paper"),
}


def write_chapter(folder: Path, name: str, *, verdicts=tuple(CLAIMS), fail: bool = False,
                  paper_data: tuple = ()) -> Path:
    """A small chapter notebook ``folder/name.ipynb`` shaped like the workbook's.

    Title and summary, the ``parameters`` cell, maths (inline, display with ``\\tag``), two figures (the first in a
    cell tagged ``key-figure``), a claims table (one claim per entry of ``verdicts``), an exercise with a markdown
    solution (``source_hidden``) and a code solution (tag ``solution``), the ``# NBVAL_CHECK_OUTPUT`` headline cell.
    With ``fail``, a cell after the claims raises ``ZeroDivisionError``. With ``paper_data``, the chapter has a paper
    mode on those data sets: the cell after the parameters calls :func:`fedlab.paper_mode.start_paper_mode`.
    """
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    claims = [{"chapter": name, **CLAIMS[v]} for v in verdicts]
    cells = [
        new_markdown_cell(f"# {name[:2]} · Chapter {name[3:].capitalize()}: a test\n\nA *generated* chapter with "
                          "`code`. More text."),
        new_code_cell('MODE = "smoke"\nSEED = 0\nINTERACTIVE = True', metadata={"tags": ["parameters"]}),
        *([new_code_cell(f"from fedlab.claims import Claim\nfrom fedlab.paper_mode import start_paper_mode\n\n"
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
        new_code_cell('# NBVAL_CHECK_OUTPUT\nfrom fedlab.headlines import Headline, show_headlines\n\n'
                      'show_headlines([Headline("mode", MODE), Headline("answer", 42.0, tolerance=0.5, digits=0, '
                      'why="half a unit")])'),
    ]
    path = Path(folder) / f"{name}.ipynb"
    metadata = {"kernelspec": KERNELSPEC, **({"fedlab": {"paper_data": list(paper_data)}} if paper_data else {})}
    nbformat.write(new_notebook(cells=cells, metadata=metadata), path)
    return path


if __name__ == "__main__":
    source, target, seconds = sys.argv[1:4]
    execute_notebook(Path(source), Path(target), int(seconds), json.loads(sys.argv[4]) if len(sys.argv) > 4 else {})
