import base64
import json
import os
from dataclasses import dataclass, field

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from fedlab.__main__ import main
from fedlab.claims import MIME_TYPE, Claim, load_claims
from fedlab.engine import ALLOCATOR_ENV
from fedlab.experiments import KEEP_WORKERS_ENV
from fedlab.headlines import MARK, MIME_TYPE as HEADLINES_MIME, Headline
from fedlab.workbook import (NotebookResult, claims_markdown, find_notebooks, headline_numbers, is_solution,
                             key_figure, notebook_claims, page_notebook, run_workbook, scoreboard_lines,
                             scoreboard_markdown, store_headlines, stored_headlines, verdict_box)
from notebook_runner import CLAIMS, KERNELSPEC, write_chapter

PNG = {name: base64.b64encode(name.encode()).decode() for name in ("first", "tagged", "last")}


def _claim(verdict, chapter="00_good"):
    return Claim(chapter, **CLAIMS[verdict])


def _figure(name, tags=()):
    cell = new_code_cell("plot()", metadata={"tags": list(tags)})
    cell.outputs = [new_output("display_data", data={"image/png": PNG[name], "text/plain": "<Figure>"})]
    return cell


def _claims_cell(claims):
    cell = new_code_cell("show_claims(claims)")
    data = {"text/markdown": "| table |", MIME_TYPE: [c.to_dict() for c in claims]}
    cell.outputs = [new_output("display_data", data=data)]
    return cell


def _result(name, status="ok", verdicts=(), **kw):
    return NotebookResult(name, f"{name[:2]} · Chapter {name[3:]}: details", "One sentence.", status, 1.5,
                          html=f"{name}.html", claims=[_claim(v, name) for v in verdicts], **kw)


def test_find_notebooks_orders_and_filters(tmp_path):
    for name in ("01_b", "00_a", "notes"):
        (tmp_path / f"{name}.ipynb").write_text("{}")
    assert [p.stem for p in find_notebooks(tmp_path)] == ["00_a", "01_b"]
    assert [p.stem for p in find_notebooks(tmp_path, only="b")] == ["01_b"]
    with pytest.raises(ValueError, match="only"):
        find_notebooks(tmp_path, only="zzz")


def _headline_output(*headlines):
    return new_output("display_data", data={"text/plain": "\n".join(h.text() for h in headlines),
                                            HEADLINES_MIME: [h.to_dict() for h in headlines]})


def test_headline_numbers_reads_the_headline_cell():
    cell = new_code_cell(f"{MARK}\nshow_headlines(H)")
    cell.outputs = [new_output("stream", name="stdout", text="printed: 1\n"),
                    _headline_output(Headline("acc", 0.9149, digits=2), Headline("ok", True))]
    other = new_code_cell("print(2)")
    other.outputs = [_headline_output(Headline("ignored", 1))]
    nb = new_notebook(cells=[other, cell])
    assert headline_numbers(nb) == {"acc": "0.91", "ok": "True"}
    assert [h["value"] for h in stored_headlines(nb)] == [0.9149, True]


def test_notebook_claims_in_cell_order_and_invalid_claims_name_the_cell():
    first, second = [_claim("reproduced")], [_claim("not run"), _claim("direction only")]
    nb = new_notebook(cells=[_claims_cell(first), new_code_cell("x = 1"), _claims_cell(second)])
    assert notebook_claims(nb) == first + second
    bad = _claims_cell(first)
    bad.execution_count = 7
    bad.outputs[0]["data"][MIME_TYPE][0]["rule"] = "exact"
    with pytest.raises(ValueError, match=r"In \[7\] shows invalid claims: rule must be one of"):
        notebook_claims(new_notebook(cells=[bad]))


def test_key_figure_is_the_tagged_figure_else_the_last():
    assert key_figure(new_notebook(cells=[_figure("first"), _figure("last")])) == b"last"
    tagged = new_notebook(cells=[_figure("first"), _figure("tagged", ["key-figure"]), _figure("last")])
    assert key_figure(tagged) == b"tagged"
    assert key_figure(new_notebook(cells=[new_code_cell("x = 1")])) is None


def test_page_notebook_collapses_old_solutions_and_drops_the_claims_json():
    hidden = new_markdown_cell("**Solutions.** $x$", metadata={"jupyter": {"source_hidden": True}})
    tagged = new_code_cell("answer()", metadata={"tags": ["solution"]})
    plain = new_markdown_cell("Exercise.")
    nb = new_notebook(cells=[new_markdown_cell("# 00 · Title\n\nIntro."), plain, hidden, tagged,
                             _claims_cell([_claim("reproduced")])])
    assert [is_solution(c) for c in nb.cells] == [False, False, True, True, False]
    page = page_notebook(nb, name="00_good")
    assert [c.source.split("\n")[0] for c in page.cells[:3]] == ["# 00 · Title", "```{admonition} Verdicts", "Intro."]
    assert page.cells[3].source == "Exercise."
    assert page.cells[4].source.startswith('<details class="solution">\n<summary>Solution</summary>\n\n**Solutions.**')
    assert page.cells[4].source.endswith("\n\n</details>")
    assert "hide-cell" in page.cells[5].metadata["tags"]
    assert page.cells[5].metadata["mystnb"]["code_prompt_show"] == "Show solution"
    claims_cell = page.cells[6]
    assert list(claims_cell.outputs[0]["data"]) == ["text/markdown"] and "remove-input" in claims_cell.metadata["tags"]
    assert '<div id="claims-table"></div>' in claims_cell.outputs[0]["data"]["text/markdown"]
    assert MIME_TYPE in nb.cells[4].outputs[0]["data"] and nb.cells[2].source == "**Solutions.** $x$"  # a copy


def test_page_notebook_removes_plumbing_and_folds_long_code():
    cells = [new_markdown_cell("# 03 · FedEM"), new_code_cell("MODE = 'smoke'", metadata={"tags": ["parameters"]}),
             new_code_cell("# Parameters\nMODE = 'full'", metadata={"tags": ["injected-parameters"]}),
             new_code_cell("\n".join(f"x{i} = {i}" for i in range(20))), new_code_cell("x = 1"),
             new_code_cell(f"{MARK}\nshow_headlines(H)")]
    nb = new_notebook(cells=cells, metadata={"widgets": {"application/vnd.jupyter.widget-state+json": {}}})
    page = page_notebook(nb, name="03_fedem")
    tags = {c.source.split("\n")[0]: c.metadata.get("tags", []) for c in page.cells if c.cell_type == "code"}
    assert "remove-cell" in tags["MODE = 'smoke'"] and "remove-cell" in tags["# Parameters"]
    assert "remove-cell" in tags[MARK] and tags["x0 = 0"] == ["hide-input"] and tags["x = 1"] == []
    assert "widgets" not in page.metadata and "widgets" in nb.metadata


def test_page_notebook_renders_numbered_exercises_with_one_solution_dropdown():
    cells = [new_markdown_cell("# 05 · Streams"),
             new_markdown_cell("### Exercise 5.2 · The cycle time\n\nCompute $x$.", metadata={"tags": ["exercise"]}),
             new_code_cell("answer = None", metadata={"tags": ["answer"]}),
             new_markdown_cell("Because.", metadata={"tags": ["solution"]}),
             new_code_cell("check(1)", metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}}),
             new_markdown_cell("Next section.")]
    page = page_notebook(new_notebook(cells=cells), name="05_data_streams")
    sources = [c.source for c in page.cells]
    start = next(i for i, s in enumerate(sources) if s.startswith("```{exercise}"))
    assert sources[start] == ("```{exercise} 5.2 · The cycle time\n:label: ex-5-2\n:nonumber: \n"
                              ":class: numbered-exercise\n\nCompute $x$.\n```").replace(":nonumber: \n", ":nonumber:\n")
    assert sources[start + 1] == "answer = None"
    assert sources[start + 2] == "```{solution-start} ex-5-2\n:class: dropdown\n```"
    assert sources[start + 3:start + 5] == ["Because.", "check(1)"]
    assert sources[start + 5] == "```{solution-end}\n```" and sources[start + 6] == "Next section."
    assert "hide-cell" not in page.cells[start + 4].metadata["tags"]


def test_page_notebook_captions_figures_links_equations_and_cites():
    figures = _figure("first")
    figures.outputs = [figures.outputs[0], new_output("stream", name="stdout", text="between\n"),
                       _figure("last").outputs[0]]
    figures.metadata["fedlab"] = {"captions": ["The first one."]}
    cells = [new_markdown_cell("# 03 · FedEM"),
             new_markdown_cell("## 4. EM steps\n\n$$q = \\pi \\qquad (3.12)$$\n\nBy (3.12) and (9.9) [McM+17], "
                               "[Bac92, Thm. 3.23], not [u, v]."),
             figures, new_code_cell("if INTERACTIVE:\n    interact(show, k=(1, 3))\nelse:\n    show()")]
    page = page_notebook(new_notebook(cells=cells), name="03_fedem")
    text = next(c.source for c in page.cells if "EM steps" in c.source)
    assert "$$q = \\pi \\tag{3.12}\\label{eq-3.12}$$" in text and "By $\\eqref{eq-3.12}$ and (9.9)" in text
    assert "{cite:p}`McM+17`" in text and "{cite:p}`Bac92{Thm. 3.23}`" in text and "not [u, v]" in text
    captions = [c.metadata["mystnb"]["figure"]["caption"] for c in page.cells if "figure" in c.metadata.get("mystnb", {})]
    assert captions == ["**Figure 3.1.** The first one.", "**Figure 3.2.** EM steps (2 of 2)"]
    split = [c for c in page.cells if c.cell_type == "code" and c.source.startswith("#")]
    assert [len(c.outputs) for c in split] == [1, 1, 1] and split[1].outputs[0]["output_type"] == "stream"
    note = next(i for i, c in enumerate(page.cells) if "Interactive in Jupyter" in c.source)
    assert page.cells[note + 1].source.startswith("if INTERACTIVE") and "_sources/03_fedem.ipynb" in page.cells[note].source


@dataclass
class _Record:
    """A stand-in for :class:`fedlab.records.Record` (the fields the report reads); stale when its hash is not
    the current one."""

    notebook: str
    claims: list
    content_hash: str = "abc"
    current_hash: str = "abc"
    mode: str = "full"
    commit: str = "0123456789"
    date: str = "2026-01-02T03:04:05+00:00"
    machine: str = "x86_64"
    seconds: float = 600.0
    headlines: dict = field(default_factory=dict)

    @property
    def stale(self) -> bool:
        return self.content_hash != self.current_hash


def test_scoreboard_leads_with_full_scale_records_and_marks_a_stale_one():
    good = _result("00_good", verdicts=["reproduced", "reproduced", "not run"], headline={"fedavg_accuracy": "0.9"})
    bad = _result("01_bad", status="failed", verdicts=["not reproduced"], error="In [4] ('1 / `x`'): ZeroDivisionError")
    other = _result("02_other", verdicts=["reproduced"])
    records = {"00_good": _Record("00_good", [_claim("reproduced"), _claim("direction only")]),
               "01_bad": _Record("01_bad", [_claim("not reproduced", "01_bad")], content_hash="old")}
    text = scoreboard_markdown([good, bad, other], "smoke", {"00_good": "_figures/00_good.png"}, records)
    assert "**Full scale (recorded, 2 chapters, [1 stale]{.stale}):** 2 experiments:" in text
    assert "**This run (live check):** 4 experiments:" in text
    rows = {line.split(" | ")[1]: line.split(" | ") for line in text.splitlines() if line.startswith("| ")}
    good_row = rows["[00 · Chapter good](00_good.ipynb) [One sentence.]{.summary}"]
    bad_row = rows["[01 · Chapter bad](01_bad.ipynb) [One sentence.]{.summary}"]
    other_row = rows["[02 · Chapter other](02_other.ipynb) [One sentence.]{.summary}"]
    assert good_row[0].startswith("| [![Key figure of 00 · Chapter good: details](_figures/00_good.png){.thumbnail}]")
    assert "stale" not in good_row[2] and "2026-01-02 · 0123456 · 10 min" in good_row[2]
    assert '<span class="stale"' in bad_row[2] and ">stale</span>" in bad_row[2]      # never silently current
    assert other_row[2] == '<span class="no-record">no full-scale record</span>'
    assert '<a class="verdict reproduced" href="#claims?chapter=00&kind=experiment&verdict=reproduced">2 reproduced</a>' \
        in good_row[3]
    assert good_row[4].startswith("[ran]{.status .ok} 1.5\u00a0s")
    assert "[failed]{.status .failed} 1.5\u00a0s `` In [4] ('1 / `x`'): ZeroDivisionError ``{.error}" in bad_row[4]
    assert rows["**All chapters**"][4].startswith("2 ran, 1 failed 4.5\u00a0s")
    claim_rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| [00 · Chapter good](00_good.ipynb) |")]
    assert len(claim_rows) == 3 and claim_rows[0][7] == "[reproduced]{.verdict .reproduced}"
    assert claim_rows[2][7] == "—" and claim_rows[2][6].startswith("[not run]{.verdict .not-run}")
    bad_claim = next(line for line in text.splitlines() if line.startswith("| [01 · Chapter bad](01_bad.ipynb) |"))
    assert "[not reproduced]{.verdict .not-reproduced} [stale]{.stale}" in bad_claim
    assert "fedavg_accuracy" not in text                             # no raw snake_case keys
    assert "```{toctree}\n:hidden:\n:caption: Chapters\n\n00_good\n01_bad\n02_other\nreferences\n```" in text
    assert "Full scale:** no full-scale record yet" in scoreboard_markdown([good], "smoke")
    assert "No chapter has shown claims yet" in scoreboard_markdown([_result("00_a")], "full")
    with pytest.raises(ValueError, match="mode"):
        scoreboard_markdown([good], "draft")


def test_verdict_box_and_chapter_claims_table():
    claims = [_claim("reproduced"), _claim("not reproduced"), _claim("not run"), _claim("not run")]
    box = verdict_box(claims, None, "00_good")
    assert box.startswith("```{admonition} Verdicts\n:class: verdict-box\n") and "no full-scale record" in box
    assert '<a href="index.html#claims?chapter=00">' in box and '<a href="#claims-table">all 4 claims' in box
    stale = verdict_box(claims, _Record("00_good", claims[:1], content_hash="old"), "00_good")
    assert ">stale</span>" in stale
    table = claims_markdown(claims, anchor="claims-table")
    assert table.startswith('<div id="claims-table"></div>\n\n**4 claims**')
    assert table.count("2 claims not run: Fig. 4; Fig. 4") == 1                    # one row per reason
    assert table.index("experiment") < table.index("analytic and consistency claims")


def test_scoreboard_lines_total_per_chapter_and_overall():
    lines = scoreboard_lines([_result("00_good", verdicts=["reproduced", "not run"]),
                              _result("01_bad", status="failed", verdicts=["reproduced"])])
    assert lines[0].split()[:4] == ["chapter", "status", "run", "time"]
    assert lines[0].endswith("experiments: reproduced  direction only  inconclusive  not reproduced  not run  others")
    assert lines[1].split() == ["00_good", "ok", "1.5", "s", "1", "0", "0", "0", "1", "0"]
    assert lines[2].split() == ["01_bad", "failed", "1.5", "s", "1", "0", "0", "0", "0", "0"]
    assert lines[3].split() == ["all", "2", "chapters", "1", "failed", "3.0", "s", "2", "0", "0", "0", "1", "0"]
    assert lines[4] == "  others: analytic none; consistency none; errata none"


def test_store_headlines_copies_only_the_headline_output(tmp_path):
    source, executed = write_chapter(tmp_path, "00_good"), tmp_path / "run.ipynb"
    nb = nbformat.read(source, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith(MARK))
    cell.outputs = [new_output("stream", name="stdout", text="a print\n"),
                    _headline_output(Headline("mode", "smoke"), Headline("answer", 42.0, digits=0))]
    nb.cells[1].outputs = [new_output("stream", name="stdout", text="noise\n")]
    nbformat.write(nb, executed)
    assert store_headlines(source, executed) and not store_headlines(source, executed)
    stored = nbformat.read(source, as_version=4)
    assert headline_numbers(stored) == {"mode": "smoke", "answer": "42"}
    assert [len(c.get("outputs", [])) for c in stored.cells if c.cell_type == "code"].count(1) == 1
    assert all(c.execution_count is None for c in stored.cells if c.cell_type == "code")
    empty = tmp_path / "empty.ipynb"
    nbformat.write(new_notebook(), empty)
    with pytest.raises(ValueError, match="one headline cell"):
        store_headlines(source, empty)


def test_update_headlines_is_for_smoke_mode(tmp_path, capsys):
    with pytest.raises(ValueError, match="update_headlines"):
        run_workbook(mode="full", update_headlines=True, build=tmp_path / "b")
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--mode", "full", "--update-headlines", "--build", str(tmp_path / "b")])
    assert exit_info.value.code == 2 and "--update-headlines" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_run_workbook_publishes_claims_scoreboard_and_the_failing_cell(tmp_path, capfd):
    nbs, build = tmp_path / "nbs", tmp_path / "build"
    nbs.mkdir()
    write_chapter(nbs, "00_good")
    write_chapter(nbs, "01_bad", verdicts=("reproduced", "not run"), fail=True)
    lines = []
    good, bad = run_workbook(notebooks=nbs, build=build, jobs=2, timeout=120, echo=lines.append)
    assert os.environ[KEEP_WORKERS_ENV] == "1"       # the kernels' sweeps keep their workers from sweep to sweep
    assert set(ALLOCATOR_ENV) <= set(os.environ)     # and the kernels' allocator keeps its freed memory
    assert good.status == "ok" and good.headline == {"mode": "smoke", "answer": "42"}
    assert good.title == "00 · Chapter Good: a test" and good.summary == "A generated chapter with `code`."
    assert good.tally == {"experiment": {"reproduced": 1, "direction only": 1, "not run": 1},
                          "analytic": {"not reproduced": 1}, "consistency": {}, "erratum": {}}
    assert bad.status == "failed" and "ZeroDivisionError" in bad.error and "1 / 0" in bad.error
    assert bad.tally["experiment"] == {"reproduced": 1, "not run": 1}
    assert load_claims(build / "00_good.claims.json") == good.claims
    assert load_claims(build / "claims.json") == good.claims + bad.claims
    summary = json.loads((build / "summary.json").read_text())
    assert [s["status"] for s in summary] == ["ok", "failed"] and summary[1]["tally"]["experiment"]["not run"] == 1
    assert summary[0]["headline"] == good.headline and summary[0]["claims"][0]["verdict"] == "reproduced"
    index = (build / "index.html").read_text()
    assert 'table class="scoreboard' in index and 'table class="claims' in index and "ZeroDivisionError" in index
    assert index.count('<span class="verdict not-run">not run</span>') == 3     # the two claims and the legend
    assert (build / "_sources" / "00_good.ipynb").read_bytes() == (nbs / "00_good.ipynb").read_bytes()
    assert (build / "00_good.html").exists() and (build / "01_bad.html").exists()
    assert (build / "_static" / "mathjax" / "tex-mml-chtml.js").exists()
    assert not (build / "report-warnings.txt").exists()
    assert not (build.parent / "jupyter_execute").exists()   # myst-nb's copies beside the site are removed
    assert lines[-6:-1] == scoreboard_lines([good, bad])
    assert lines[-1].strip().startswith(f"Report: {build / 'index.html'}")
    terminal = capfd.readouterr()
    assert "without encryption" not in terminal.err + terminal.out and "KeyboardInterrupt" not in terminal.err


def test_relative_build_folder_with_parallel_notebooks(tmp_path, monkeypatch):
    """papermill changes the working directory while a notebook runs: a relative build folder must still work."""
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    for i in range(4):
        nbformat.write(new_notebook(cells=[new_markdown_cell(f"# Notebook {i}"),
                                           new_code_cell("import time\ntime.sleep(0.5)")],
                                    metadata={"kernelspec": KERNELSPEC}),
                       nbs / f"0{i}_nb.ipynb")
    monkeypatch.chdir(tmp_path)
    results = run_workbook(notebooks="nbs", build="build", jobs=4, timeout=120, echo=lambda *a: None)
    assert [r.status for r in results] == ["ok"] * 4
    assert all((tmp_path / "build" / f"0{i}_nb.html").exists() for i in range(4))


@pytest.mark.parametrize("kw, match", [({"mode": "draft"}, "mode"), ({"mode": "paper"}, "no notebook has a paper mode"), ({"jobs": 0}, "jobs"), ({"timeout": 0}, "timeout"),
                                       ({"only": "zzz"}, "only")])
def test_bad_arguments_fail_before_creating_anything(tmp_path, kw, match):
    write_chapter(tmp_path, "00_good")
    with pytest.raises(ValueError, match=match):
        run_workbook(notebooks=tmp_path, build=tmp_path / "b", **kw)
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("args, message", [
    (["--only", "nonexistent"], "argument --only: only='nonexistent' matches no notebook"),
    (["--jobs", "0"], "argument --jobs: must be at least 1, got 0"),
    (["--timeout", "0"], "argument --timeout: must be at least 1, got 0"),
    (["--jobs", "two"], "argument --jobs: expected a whole number, got 'two'"),
    (["--mode", "draft"], "argument --mode: invalid choice: 'draft'"),
    (["--mode", "paper", "--only", "00_primer"], "argument --only: no notebook matching '00_primer' has a paper mode"),
])
def test_cli_reports_a_bad_argument_in_one_line(tmp_path, capsys, args, message):
    build = tmp_path / "build"
    with pytest.raises(SystemExit) as exit_:
        main(["run", *args, "--build", str(build)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith(f"fedlab run: error: {message}")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not build.exists()


def test_cli_list_and_help(capsys):
    assert main(["list"]) == 0
    assert "00_primer" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])


def test_paper_mode_runs_only_paper_notebooks_and_stops_when_data_are_absent(tmp_path, monkeypatch, capsys):
    """The notebook stops at its first cell with the fetch command; its claims count as not run; exit status 0."""
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "cache"))
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    write_chapter(nbs, "00_offline")
    write_chapter(nbs, "01_real", verdicts=("reproduced", "not reproduced"), paper_data=("femnist", "cifar10"))
    assert [p.name for p in find_notebooks(nbs, paper=True)] == ["01_real.ipynb"]
    [result] = run_workbook(mode="paper", notebooks=nbs, build=tmp_path / "build", timeout=120, echo=lambda *a: None)
    assert result.status == "data absent" and result.headline == {}
    assert result.error.endswith("run  python -m fedlab data fetch femnist cifar10")
    assert [c.verdict for c in result.claims] == ["not run", "not run"]
    assert result.claims[0].why == "data absent: python -m fedlab data fetch femnist cifar10"
    lines = scoreboard_lines([result])
    assert lines[1].split()[:3] == ["01_real", "data", "absent"] and "real data absent" in lines[-1]
    index = (tmp_path / "build" / "index.html").read_text()
    assert "data-absent" in index and "python -m fedlab data fetch femnist cifar10" in index


def test_cli_paper_mode_reports_absent_data_without_failing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "cache"))
    monkeypatch.setattr("fedlab.__main__.find_notebooks", lambda only=None, paper=False: [])
    absent = NotebookResult("03_x", "t", "s", "data absent", 1.0, error="run  python -m fedlab data fetch femnist")
    monkeypatch.setattr("fedlab.__main__.run_workbook", lambda **kw: [absent])
    assert main(["run", "--mode", "paper", "--build", str(tmp_path / "b")]) == 0
    assert "DATA ABSENT 03_x: run  python -m fedlab data fetch femnist" in capsys.readouterr().out


@pytest.mark.parametrize("path", find_notebooks(), ids=lambda p: p.stem)
def test_every_notebook_is_valid_nbformat_with_cell_ids(path):
    stored = json.loads(path.read_text(encoding="utf-8"))   # as stored: reading or validating fills missing ids
    ids = [cell.get("id") for cell in stored["cells"]]
    assert None not in ids and len(set(ids)) == len(ids)
    nbformat.validate(stored)
