"""Every notebook runs in its default mode (the parameters as stored: MODE="smoke", INTERACTIVE=True)."""
import json

import nbformat
import pytest

from fedlab.claims import tally
from fedlab.workbook import SUMMARY_MARK, find_notebooks, headline_numbers, notebook_claims
from notebook_runner import execute_isolated

NOTEBOOKS = find_notebooks()


def test_there_are_notebooks():
    assert any(p.stem == "00_primer" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_clean_and_follows_the_skeleton(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "strip outputs"
    params = code[0]
    assert "parameters" in params["metadata"].get("tags", []), "first code cell must be tagged 'parameters'"
    source = "".join(params["source"])
    for name in ("MODE", "SEED", "INTERACTIVE"):
        assert name in source
    assert any("".join(c["source"]).lstrip().startswith(SUMMARY_MARK) for c in code), "summary cell missing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_default_mode(path, tmp_path):
    out = tmp_path / path.name
    elapsed = execute_isolated(path, out)
    nb = nbformat.read(out, as_version=4)
    numbers = headline_numbers(nb)
    assert numbers, "the summary cell printed no 'name: value' lines"
    claims = notebook_claims(nb)                      # raises when a claims table holds invalid claims
    print(f"{path.stem}: {elapsed:.1f} s, {numbers}, claims {tally(claims)}")


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
