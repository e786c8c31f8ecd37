"""The report (the scoreboard ``build/index.html`` and one page per chapter) in a real headless Chromium, offline.

Builds the report for real from two small generated chapters (papermill, then the site), one of which fails after
showing its claims, with the pieces a reader meets in the workbook added to them: numbered exercises with their
solutions, an interactive cell, a citation, a numbered equation and its reference, a wide equation, a wide table, a
wide output and a long code cell. It serves the build folder over HTTP on 127.0.0.1 and checks what a reader sees,
with every request that leaves 127.0.0.1 aborted (and failing the test). On every page: nothing requested outside,
no console error, no element wider than its column, every figure captioned, no test plumbing (``# Parameters``,
``NBVAL_CHECK_OUTPUT``) visible. The scoreboard counts each chapter's claims, links the counts to the filtered claims
table, and its claims table sorts, filters and searches; the chapter pages open with a verdict box, render their
maths with the MathJax copied into the site, link equations and citations, show numbered exercises each with one
solution drop-down, say which sections are interactive in Jupyter and offer the notebook for download; search works.
Screenshots go to ``build/test-artifacts/``.
"""
from __future__ import annotations

import functools
import http.server
import json
import threading
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell

from browser_support import WAIT_MS, PageErrors, chromium, require_browser, screenshot
from fedlab.workbook import run_workbook
from notebook_runner import write_chapter

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
require_browser()   # skip the module early (before building anything) when the driver or Chromium is missing

WIDE_SUM = " + ".join(f"x_{{{i}}}^2" for i in range(90))
WIDE_TABLE = ("| " + " | ".join(f"column {i}" for i in range(24)) + " |\n|" + "---|" * 24 + "\n| "
              + " | ".join("a long cell value" for _ in range(24)) + " |")
BOOK_CELLS = [
    new_markdown_cell("## The workbook's pieces\n\nFedAvg [McM+17] averages the clients' models, see (0.1):\n\n"
                      "$$w^{t+1} = \\sum_k p_k w_k^t \\qquad (0.1)$$\n\nA wide sum:\n\n$$" + WIDE_SUM + "$$"),
    new_code_cell("def show(steps=3):\n    plt.plot(range(steps))\n    plt.show()\n\n\nif INTERACTIVE:\n"
                  "    from ipywidgets import interact\n    interact(show, steps=(1, 10))\nelse:\n    show()"),
    new_code_cell("from IPython.display import Markdown, display\n\nprint('x' * 400)\n"
                  f"display(Markdown({WIDE_TABLE!r}))"),
    new_code_cell("\n".join(f"line_{i} = {i}" for i in range(20))),
    new_markdown_cell("### Exercise 0.1 · Add two numbers\n\nCompute $1 + 1$.", metadata={"tags": ["exercise"]}),
    new_code_cell("answer = 2\nprint('correct' if answer == 2 else 'not yet')", metadata={"tags": ["answer"]}),
    new_markdown_cell("Count: $1 + 1 = 2$.", metadata={"tags": ["solution"]}),
    new_code_cell("print('solution 0.1 ran')", metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}}),
    new_markdown_cell("### Exercise 0.2 · Square it\n\nCompute $3^2$.", metadata={"tags": ["exercise"]}),
    new_code_cell("answer = 9", metadata={"tags": ["answer"]}),
    new_code_cell("print('solution 0.2 ran')", metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}}),
]


def _add_book_cells(path):
    """The workbook's pieces, before the headline cell of a generated chapter (ids for every cell)."""
    nb = nbformat.read(path, as_version=4)
    nb.cells[-1:-1] = [nbformat.from_dict(json.loads(json.dumps(c))) for c in BOOK_CELLS]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    nbformat.write(nb, path)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Run two generated chapters (the second fails after its claims) into a fresh build folder."""
    root = tmp_path_factory.mktemp("report")
    notebooks = root / "notebooks"
    notebooks.mkdir()
    _add_book_cells(write_chapter(notebooks, "00_good"))
    write_chapter(notebooks, "01_bad", verdicts=("reproduced", "not run"), fail=True)
    build = root / "build"
    results = run_workbook(notebooks=notebooks, build=build, jobs=2, timeout=120,
                           records_folder=root / "no-records",
                           echo=lambda line: print(line) if line.strip() else None)
    return build, results


@pytest.fixture(scope="module")
def site(report):
    """Base URL of an HTTP server on 127.0.0.1 (random free port) serving the build folder."""
    build, _ = report
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(build)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser):
    """A page (1,440 px wide) whose requests may only reach 127.0.0.1: any other is aborted and recorded."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    outside = []

    def route(request_route):
        if urlsplit(request_route.request.url).hostname == "127.0.0.1":
            request_route.continue_()
        else:
            outside.append(request_route.request.url)
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.log = PageErrors(page)
    page.outside = outside
    yield page
    context.close()


# Every visible table, equation, code block, figure and image of the article, wider than the article's column.
OVERFLOWING = """() => {
  const column = document.querySelector('article').getBoundingClientRect();
  return [...document.querySelectorAll('article table, article mjx-container, article pre, article img, '
                                       + 'article figure, article div.math, article .cell_output')]
    .filter(e => e.checkVisibility() && e.getBoundingClientRect().width > 0)
    .filter(e => { const r = e.getBoundingClientRect(); return r.left < column.left - 1 || r.right > column.right + 1; })
    .map(e => `${e.tagName.toLowerCase()}.${e.className} (${Math.round(e.getBoundingClientRect().width)} px)`);
}"""
# The figures of the notebook's outputs (images outside a <figure> with a caption).
UNCAPTIONED = """() => [...document.querySelectorAll('article .cell_output img')]
  .filter(i => !(i.closest('figure') && i.closest('figure').querySelector('figcaption')
                 && i.closest('figure').querySelector('figcaption').innerText.trim()))
  .map(i => i.src)"""


def _check_page(page, what):
    """The checks every page passes: offline, no errors, nothing wider than its column, figures captioned, no
    test plumbing visible."""
    page.wait_for_load_state("networkidle")
    assert not page.outside, f"{what} requested resources outside 127.0.0.1: {page.outside}"
    assert not page.log.errors, f"{what} logged errors:\n" + "\n".join(page.log.errors)
    assert page.evaluate(OVERFLOWING) == [], f"{what}: elements wider than their column"
    assert page.evaluate(UNCAPTIONED) == [], f"{what}: figures without a caption"
    text = page.locator("article").inner_text()
    for plumbing in ("# Parameters", "NBVAL_CHECK_OUTPUT", "show_headlines", "show_claims"):
        assert plumbing not in text, f"{what} shows {plumbing!r}"


def _cells(row):
    return [text.strip() for text in row.locator("td").all_inner_texts()]


def _visible_chapters(page):
    return {c.strip() for c in page.locator("table.claims tbody td:nth-child(1)").all_inner_texts()}


def test_scoreboard_leads_with_full_scale_and_counts_link_the_filtered_claims(report, site, page):
    _, results = report
    assert [r.status for r in results] == ["ok", "failed"], [(r.name, r.error) for r in results]
    page.goto(urljoin(site, "index.html"), wait_until="load")
    assert page.title().startswith("fedlab workbook")
    assert "no full-scale record" in page.locator("article").inner_text()
    board = page.locator("table.scoreboard")
    header = [h.strip() for h in board.locator("thead th").all_inner_texts()]
    assert header == ["Key figure", "Chapter", "Full scale (recorded)", "This run (smoke, live)", "Run"]
    rows = board.locator("tbody tr")
    assert rows.count() == len(results) + 1
    for i, r in enumerate(results):
        cells = _cells(rows.nth(i))
        assert rows.nth(i).locator(f'td:nth-child(2) a[href="{r.html}"]').inner_text().strip() == r.title.split(":")[0]
        assert cells[2] == "no full-scale record"
        assert cells[4].startswith("ran" if r.status == "ok" else r.status) and f"{r.seconds:.1f}\u00a0s" in cells[4]
        assert rows.nth(i).locator("img.thumbnail").evaluate("i => i.complete && i.naturalWidth > 0")
    assert "ZeroDivisionError" in _cells(rows.nth(1))[4]
    assert _cells(rows.nth(2))[4].startswith("1 ran, 1 failed")
    for group in ("Verdicts", "Kinds", "Rules"):                         # the legend
        assert page.locator(".legend-title", has_text=group).count() == 1
    # the claims table: every claim, 25 a page, sorted, filtered, searched
    claims = page.locator("table.claims tbody tr")
    page.wait_for_selector(".claims-filters select[name=chapter]")
    assert page.locator(".dt-info").inner_text().endswith(f"of {sum(len(r.claims) for r in results)} claims")
    assert _visible_chapters(page) == {"00 · Chapter Good", "01 · Chapter Bad"}
    page.locator(".dt-search input").fill("01 · Chapter Bad")                # type a chapter: only its rows
    assert _visible_chapters(page) == {"01 · Chapter Bad"} and claims.count() == len(results[1].claims)
    page.locator(".dt-search input").fill("")
    page.locator(".claims-filters select[name=verdict]").select_option("not run")
    verdicts = {c.split("\n")[0] for c in page.locator("table.claims tbody td:nth-child(7)").all_inner_texts()}
    assert verdicts == {"not run"} and claims.count() == 2
    page.locator(".claims-filters select[name=verdict]").select_option("")
    page.locator("table.claims thead th", has_text="Measured").click()   # sorts
    page.wait_for_selector("table.claims thead th[aria-sort]")
    # a count on the scoreboard opens the claims table filtered to those claims
    link = rows.nth(0).locator("td:nth-child(4) a", has_text="1 reproduced").first
    link.click()
    page.wait_for_function("document.querySelector('.claims-filters select[name=verdict]').value === 'reproduced'")
    assert _visible_chapters(page) == {"00 · Chapter Good"}
    assert [c.split("\n")[0] for c in page.locator("table.claims tbody td:nth-child(7)").all_inner_texts()] \
        == ["reproduced"]
    screenshot(page, "report-index")
    _check_page(page, "index.html")


def test_chapter_pages_read_as_a_book(report, site, page):
    _, results = report
    for r in results:
        page.goto(urljoin(site, r.html), wait_until="load")
        assert page.locator("article h1").first.inner_text().startswith(r.title)
        box = page.locator(".admonition.verdict-box")          # the verdict box comes right after the title
        assert box.count() == 1 and "no full-scale record" in box.inner_text()
        assert page.evaluate("document.querySelector('article h1').nextElementSibling === null || "
                             "document.querySelector('.verdict-box').getBoundingClientRect().top < 400")
        assert box.locator('a[href="#claims-table"]').count() == 1 and page.locator("#claims-table").count() == 1
        # MathJax (from _static/mathjax) typesets every formula
        page.wait_for_function("document.querySelectorAll('mjx-container').length >= 4")
        text = page.locator("article").inner_text()
        assert "$" not in text and "\\frac" not in text and "\\(" not in text, "raw TeX on the page"
        # old-style solutions stay collapsed in <details>
        old = page.locator("article details.solution, article .tag_solution details")
        assert old.count() == 2 and page.locator("article details[open]").count() == 0
        # the download button offers the notebook as stored (the one to open in JupyterLab)
        download = page.locator(f'a[href$="_sources/{r.name}.ipynb"]').first
        assert download.count() == 1
        stored = page.evaluate(f"fetch('_sources/{r.name}.ipynb').then(r => r.json())")
        assert stored["cells"][1]["metadata"]["tags"] == ["parameters"]
        figures = page.locator("article figure")
        assert figures.count() >= 2 and figures.first.locator("figcaption").inner_text().startswith(
            f"Figure {int(r.name[:2])}.1.")
        screenshot(page, f"report-{r.name}")
        _check_page(page, r.html)


def test_exercises_interactive_notes_equations_and_citations(report, site, page):
    page.goto(urljoin(site, "00_good.html"), wait_until="load")
    exercises = page.locator("article .admonition.numbered-exercise")
    assert exercises.count() == 2
    assert [t.strip() for t in exercises.locator(".admonition-title").all_inner_texts()] == \
        ["Exercise 0.1 · Add two numbers", "Exercise 0.2 · Square it"]
    solutions = page.locator("article .solution.dropdown")
    assert solutions.count() == 2                                    # one drop-down each
    for i, ran in enumerate(["solution 0.1 ran", "solution 0.2 ran"]):
        content = solutions.nth(i).locator("section").first
        assert not content.is_visible()
        solutions.nth(i).locator(".admonition-title").click()
        assert content.is_visible() and ran in solutions.nth(i).inner_text()
    assert "1 + 1 = 2" in solutions.first.inner_text() or solutions.first.locator("mjx-container").count() == 1
    note = page.locator(".admonition.interactive-note")
    assert note.count() == 1 and note.locator('a[href="_sources/00_good.ipynb"]').count() == 1
    assert page.locator("article .cell.tag_hide-input details").count() >= 1       # the long code cell folds
    # the numbered equation's number in the text links it; the citation links the bibliography
    page.wait_for_function("document.querySelectorAll('mjx-container a[href*=\"eq-0.1\"]').length >= 1")
    cite = page.locator("article a", has_text="McM+17").first
    assert cite.get_attribute("href").startswith("references.html#")
    _check_page(page, "00_good.html")
    page.goto(urljoin(site, "references.html"), wait_until="load")
    assert "communication-efficient learning of deep networks" in page.locator("article").inner_text().lower()
    _check_page(page, "references.html")


def test_dark_mode_verdicts_are_readable(report, site, page):
    page.goto(urljoin(site, "index.html"), wait_until="load")
    page.evaluate("document.documentElement.dataset.theme = 'dark'")
    colour = page.locator("table.claims .verdict.reproduced").first.evaluate("e => getComputedStyle(e).color")
    red, green, blue = (int(v) for v in colour[colour.index("(") + 1:colour.index(")")].split(",")[:3])
    assert 0.2126 * red + 0.7152 * green + 0.0722 * blue > 120, f"dark-mode 'reproduced' is too dark: {colour}"


def test_search_finds_a_chapter_offline(report, site, page):
    page.goto(urljoin(site, "search.html?q=generated"), wait_until="load")
    page.wait_for_function("document.querySelectorAll('#search-results li').length >= 2")
    hits = page.locator("#search-results li a").all_inner_texts()
    assert any("Chapter Good" in hit for hit in hits), hits
    assert not page.outside and not page.log.errors
