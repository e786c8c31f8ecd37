"""Every notebook runs in its default mode (the parameters as stored: MODE="smoke", INTERACTIVE=True) under nbval,
which compares the summary cell's output with the one stored in the notebook (``python -m fedlab run
--update-summaries`` stores it on purpose). Each notebook runs in its own process."""
import json
import os
import subprocess
import sys

import nbformat
import pytest

from fedlab.workbook import SUMMARY_MARK, find_notebooks
from notebook_runner import execute_isolated

NOTEBOOKS = find_notebooks()


def test_there_are_notebooks():
    assert any(p.stem == "00_primer" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_clean_and_follows_the_skeleton(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    summary = [c for c in code if "".join(c["source"]).lstrip().startswith(SUMMARY_MARK)]
    assert all(c.get("execution_count") is None for c in code if c not in summary), "strip execution counts"
    assert all(not c.get("outputs") for c in code if c not in summary), "strip outputs (except the summary's)"
    stored = "".join("".join(o.get("text", "")) for c in summary for o in c.get("outputs", []))
    assert len(summary) == 1 and ": " in stored, "the summary cell must hold its stored 'name: value' output"
    params = code[0]
    assert "parameters" in params["metadata"].get("tags", []), "first code cell must be tagged 'parameters'"
    source = "".join(params["source"])
    for name in ("MODE", "SEED", "INTERACTIVE"):
        assert name in source


def run_nbval(path, timeout: int = 600) -> subprocess.CompletedProcess:
    """``pytest --nbval-lax`` on one notebook, in its own process (cells marked NBVAL_CHECK_OUTPUT are compared)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--nbval-lax",
           "--nbval-cell-timeout", "300", str(path)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TQDM_DISABLE": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=path.parent)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_reproduces_its_stored_summary(path):
    proc = run_nbval(path)
    assert proc.returncode == 0, f"{path.name} under nbval:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"


def test_a_changed_headline_number_fails(tmp_path):
    """The comparison can fail: the primer with one stored headline number altered."""
    path = next(p for p in NOTEBOOKS if p.stem == "00_primer")
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith(SUMMARY_MARK))
    name, value = cell.outputs[0]["text"].splitlines()[1].split(": ")
    cell.outputs[0]["text"] = cell.outputs[0]["text"].replace(f"{name}: {value}", f"{name}: {value}1")
    altered = tmp_path / path.name
    nbformat.write(nb, altered)
    proc = run_nbval(altered)
    assert proc.returncode != 0 and "Cell outputs differ" in proc.stdout and f"{value}1" in proc.stdout


def _probe_notebook(folder):
    """A small notebook whose cells compute, sleep and print: the message pattern of the real ones."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("N = 200_000", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import time\nimport numpy as np\nx = np.random.default_rng(0).normal(size=N)"),
                nbformat.v4.new_code_cell("time.sleep(0.3)\nprint(float(np.sort(x)[N // 2]))"),
                nbformat.v4.new_code_cell("for i in range(3):\n    time.sleep(0.1)\n    print(i, flush=True)")]
    path = folder / "probe.ipynb"
    nbformat.write(nb, path)
    return path


def test_isolated_runs_do_not_stall(tmp_path):
    """Eight back-to-back runs, each must end in well under its 20 s budget (a stall waits for the timeout)."""
    path = _probe_notebook(tmp_path)
    times = [execute_isolated(path, tmp_path / f"out{i}.ipynb", parameters={"N": 1000 * (i + 1)},
                              cell_timeout=20, timeout=20) for i in range(8)]
    assert max(times) < 20
    out = nbformat.read(tmp_path / "out7.ipynb", as_version=4)
    assert "".join(o["text"] for o in out.cells[-1].outputs) == "0\n1\n2\n"
