"""Every notebook runs in its default mode (the parameters as stored: MODE="smoke", INTERACTIVE=True)."""
import json
import time

import nbformat
import papermill
import pytest

from fedlab.workbook import SUMMARY_MARK, find_notebooks, headline_numbers

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
    start = time.perf_counter()
    papermill.execute_notebook(str(path), str(out), kernel_name="python3", cwd=str(path.parent),
                               progress_bar=False, execution_timeout=600)
    elapsed = time.perf_counter() - start
    numbers = headline_numbers(nbformat.read(out, as_version=4))
    assert numbers, "the summary cell printed no 'name: value' lines"
    print(f"{path.stem}: {elapsed:.1f} s, {numbers}")
