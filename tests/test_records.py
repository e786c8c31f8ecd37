"""Full-scale records (fedlab.records): content hash, atomic write and load, staleness, the CLI's --record guard."""
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from fedlab.claims import Claim
from fedlab.records import (Record, chapter_package, content_hash, git_commit, load_records, machine, make_record,
                            write_record)
from fedlab.workbook import run_workbook


@pytest.fixture
def chapter(tmp_path):
    """A package folder with one chapter (``toy``, it has a claims.py) and a notebook that imports it."""
    package = tmp_path / "pkg"
    (package / "toy").mkdir(parents=True)
    (package / "toy" / "claims.py").write_text("X = 1\n")
    (package / "engine").mkdir()
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nb = new_notebook(cells=[new_markdown_cell("# Toy"), new_code_cell("from fedlab.toy import X\nimport fedlab.engine")])
    nbformat.write(nb, notebooks / "01_toy.ipynb")
    return package, notebooks / "01_toy.ipynb"


def _claim():
    return Claim("01_toy", "Table 1", "accuracy", paper=0.9, measured=0.91, rule="tolerance", tolerance=0.05,
                 kind="experiment", scale="full")


def test_the_hash_covers_the_notebook_sources_and_its_chapter_package_but_not_outputs(chapter):
    package, notebook = chapter
    assert chapter_package(notebook, package) == package / "toy"
    before = content_hash(notebook, package)
    nb = nbformat.read(notebook, as_version=4)
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="printed\n")]
    nbformat.write(nb, notebook)
    assert content_hash(notebook, package) == before
    (package / "engine" / "core.py").write_text("changed = True\n")   # not the chapter's package
    assert content_hash(notebook, package) == before
    (package / "toy" / "claims.py").write_text("X = 2\n")
    assert content_hash(notebook, package) != before


def test_a_notebook_importing_two_chapters_is_refused(chapter):
    package, notebook = chapter
    (package / "other").mkdir()
    (package / "other" / "claims.py").write_text("")
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(new_code_cell("from fedlab.other import Y"))
    nbformat.write(nb, notebook)
    with pytest.raises(ValueError, match="several chapter packages"):
        chapter_package(notebook, package)


def test_a_record_round_trips_and_turns_stale_when_its_chapter_changes(chapter, tmp_path, monkeypatch):
    package, notebook = chapter
    monkeypatch.setattr("fedlab.records.PACKAGE", package)
    record = make_record(notebook, seconds=12.34, claims=[_claim()], headlines={"acc": "0.91"})
    path = write_record(record, tmp_path / "records")
    assert json.loads(path.read_text())["seconds"] == 12.3
    assert [p.name for p in (tmp_path / "records").iterdir()] == ["01_toy.json"]   # no temporary file left
    loaded = load_records(tmp_path / "records", notebook.parent)["01_toy"]
    assert loaded.claims[0].verdict == "reproduced" and loaded.headlines == {"acc": "0.91"}
    assert loaded.commit == record.commit and loaded.machine == machine()
    assert not loaded.stale
    (package / "toy" / "claims.py").write_text("X = 3\n")
    assert loaded.stale
    notebook.unlink()
    assert loaded.stale


def test_an_unreadable_record_is_named(tmp_path):
    (tmp_path / "01_toy.json").write_text('{"notebook": "01_toy"}')
    with pytest.raises(ValueError, match="01_toy.json cannot be read"):
        load_records(tmp_path)
    assert load_records(tmp_path / "absent") == {}


def test_commit_and_machine_describe_the_run(tmp_path):
    assert git_commit(tmp_path) == "unknown"
    assert "logical cores" in machine() and "torch" in machine()
    assert Record("n", "full", "c", "d", "m", 1.0, "h").stale   # no source notebook: never current


def test_only_the_full_mode_is_recorded():
    with pytest.raises(ValueError, match="record stores the full mode"):
        run_workbook(mode="smoke", record=True)
