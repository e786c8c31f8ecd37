import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from fedlab.__main__ import main
from fedlab.workbook import find_notebooks, headline_numbers, run_workbook


def _write(folder, name, body):
    cells = [new_markdown_cell(f"# Title of {name}\n\nOne-line summary."),
             new_code_cell('MODE = "smoke"\nSEED = 0\nINTERACTIVE = True', metadata={"tags": ["parameters"]}),
             new_code_cell(body),
             new_code_cell('# NBVAL_CHECK_OUTPUT\nprint(f"mode: {MODE}")\nprint(f"answer: {ANSWER}")')]
    nbformat.write(new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                      "language": "python"}}), folder / f"{name}.ipynb")


def test_find_notebooks_orders_and_filters(tmp_path):
    for name in ("01_b", "00_a", "notes"):
        (tmp_path / f"{name}.ipynb").write_text("{}")
    assert [p.stem for p in find_notebooks(tmp_path)] == ["00_a", "01_b"]
    assert [p.stem for p in find_notebooks(tmp_path, only="b")] == ["01_b"]
    with pytest.raises(ValueError, match="only"):
        find_notebooks(tmp_path, only="zzz")


def test_headline_numbers_reads_the_summary_cell():
    cell = new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="acc: 0.91\nnot a number line\nloss: 1.2\n")]
    other = new_code_cell("print(2)")
    other.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ignored: 1\n")]
    assert headline_numbers(new_notebook(cells=[other, cell])) == {"acc": "0.91", "loss": "1.2"}


def test_run_workbook_reports_success_and_the_failing_cell(tmp_path):
    nbs, build = tmp_path / "nbs", tmp_path / "build"
    nbs.mkdir()
    _write(nbs, "00_good", "ANSWER = 42")
    _write(nbs, "01_bad", "ANSWER = 1 / 0")
    lines = []
    results = run_workbook(notebooks=nbs, build=build, jobs=2, timeout=120, echo=lines.append)
    good, bad = results
    assert good.status == "ok" and good.headline == {"mode": "smoke", "answer": "42"}
    assert good.title == "Title of 00_good" and good.summary == "One-line summary."
    assert bad.status == "failed" and "In [3]" in bad.error and "1 / 0" in bad.error and "ZeroDivisionError" in bad.error
    index = (build / "index.html").read_text()
    assert "00_good.html" in index and "failed" in index and "ZeroDivisionError" in index
    assert (build / "00_good.html").exists()
    summary = json.loads((build / "summary.json").read_text())
    assert [s["status"] for s in summary] == ["ok", "failed"]
    assert any("Summary" in line for line in lines)


def test_relative_build_folder_with_parallel_notebooks(tmp_path, monkeypatch):
    """papermill changes the working directory while a notebook runs: a relative build folder must still work."""
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    for i in range(4):
        _write(nbs, f"0{i}_nb", "import time\ntime.sleep(0.5)\nANSWER = 1")
    monkeypatch.chdir(tmp_path)
    results = run_workbook(notebooks="nbs", build="build", jobs=4, timeout=120, echo=lambda *a: None)
    assert [r.status for r in results] == ["ok"] * 4
    assert (tmp_path / "build" / "index.html").exists()


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="mode"):
        run_workbook(mode="paper", notebooks=tmp_path, build=tmp_path / "b")
    with pytest.raises(ValueError, match="jobs"):
        run_workbook(jobs=0, notebooks=tmp_path, build=tmp_path / "b")


def test_cli_list_and_help(capsys):
    assert main(["list"]) == 0
    assert "00_primer" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
