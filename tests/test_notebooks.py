"""Every notebook runs in its default mode (the parameters as stored: MODE="smoke", INTERACTIVE=True), each in its own
process, under two CPU dispatch settings, and every headline number must lie within its stated tolerance of the one
stored in the notebook (:func:`fedlab.workbook.headline_differences`; ``python -m fedlab run --update-headlines``
stores them on purpose). The portable setting uses torch's scalar kernels and MKL's reproducible code path, so the
stored headlines hold on any x86-64 CPU, not only on one like the machine that stored them."""
import json

import nbformat
import pytest

from fedlab.headlines import MARK, MIME_TYPE
from fedlab.workbook import find_notebooks, headline_differences, store_headlines
from notebook_runner import execute_isolated, write_chapter

NOTEBOOKS = find_notebooks()
DISPATCH = {
    "native": {},                                                              # this CPU's own vector kernels
    "portable": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"},  # no vector kernels, MKL's fixed path
}


def test_there_are_notebooks():
    assert any(p.stem == "00_primer" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_clean_and_follows_the_skeleton(path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    headline = [c for c in code if "".join(c["source"]).lstrip().startswith(MARK)]
    assert all(c.get("execution_count") is None for c in code), "strip execution counts"
    assert all(not c.get("outputs") for c in code if c not in headline), "strip outputs (except the headlines')"
    assert len(headline) == 1, f"one headline cell ({MARK})"
    assert headline_differences(path, path) == [], "the headline cell must hold its stored headlines"
    params = code[0]
    assert "parameters" in params["metadata"].get("tags", []), "first code cell must be tagged 'parameters'"
    source = "".join(params["source"])
    for name in ("MODE", "SEED", "INTERACTIVE"):
        assert name in source


@pytest.mark.parametrize("dispatch", DISPATCH)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_reproduces_its_stored_headlines(path, dispatch, tmp_path):
    out = tmp_path / path.name
    execute_isolated(path, out, cell_timeout=300, timeout=600, env=DISPATCH[dispatch])
    differences = headline_differences(path, out)
    assert not differences, f"{path.name} ({dispatch} dispatch), headlines beyond their tolerance:\n" + \
        "\n".join(differences)


def test_a_headline_changed_beyond_its_tolerance_fails(tmp_path):
    """The comparison can fail: a generated chapter run, stored, then its stored number moved (answer 42 ± 0.5)."""
    source = write_chapter(tmp_path, "50_probe", verdicts=("reproduced",))
    executed = tmp_path / "run" / source.name
    execute_isolated(source, executed, cell_timeout=60, timeout=120)
    assert store_headlines(source, executed) and headline_differences(source, executed) == []

    def stored_as(answer):
        nb = nbformat.read(source, as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(MARK))
        output = next(o for o in cell.outputs if "data" in o)
        record = next(h for h in output["data"][MIME_TYPE] if h["name"] == "answer")
        record["value"] = answer
        altered = tmp_path / f"altered_{answer}.ipynb"
        nbformat.write(nb, altered)
        return altered

    assert headline_differences(stored_as(42.4), executed) == []
    assert headline_differences(stored_as(42.6), executed) == [
        "answer: measured 42.0, stored 42.6: differs by 0.6, beyond the tolerance 0.5 (half a unit)"]


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
