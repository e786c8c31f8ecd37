"""The report (the scoreboard ``build/index.html`` and one page per chapter) in a real headless Chromium, offline.

Builds the report for real from two small generated chapters (papermill, then the site), one of which fails after
showing its claims, serves the build folder over HTTP on 127.0.0.1 and checks what a reader sees, with every
request that leaves 127.0.0.1 aborted (and failing the test): the scoreboard counts each chapter's claims by
verdict and lists every claim; the chapter pages render their maths with the MathJax copied into the site, keep
the exercise solutions collapsed until clicked, and show their figures; search works; no page logs a console
error or an uncaught exception. Screenshots go to ``build/test-artifacts/``.
"""
from __future__ import annotations

import functools
import http.server
import threading
from urllib.parse import urljoin, urlsplit

import pytest

from browser_support import WAIT_MS, PageErrors, chromium, require_browser, screenshot
from fedlab.workbook import EXPERIMENT_VERDICTS, OTHER_KINDS, run_workbook
from notebook_runner import write_chapter

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
require_browser()   # skip the module early (before building anything) when the driver or Chromium is missing

VERDICT_COLUMNS = [*(f"Experiments {v}" for v in EXPERIMENT_VERDICTS), *OTHER_KINDS.values()]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Run two generated chapters (the second fails after its claims) into a fresh build folder."""
    root = tmp_path_factory.mktemp("report")
    notebooks = root / "notebooks"
    notebooks.mkdir()
    write_chapter(notebooks, "00_good")
    write_chapter(notebooks, "01_bad", verdicts=("reproduced", "not run"), fail=True)
    build = root / "build"
    results = run_workbook(notebooks=notebooks, build=build, jobs=2, timeout=120,
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
    """A page whose requests may only reach 127.0.0.1: any other is aborted and recorded in ``page.outside``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
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


def _check_clean(page, what):
    assert not page.outside, f"{what} requested resources outside 127.0.0.1: {page.outside}"
    assert not page.log.errors, f"{what} logged errors:\n" + "\n".join(page.log.errors)


def _cells(row):
    return [text.strip() for text in row.locator("td").all_inner_texts()]


def test_scoreboard_counts_claims_per_chapter_and_lists_every_claim(report, site, page):
    _, results = report
    assert [r.status for r in results] == ["ok", "failed"], [(r.name, r.error) for r in results]
    page.goto(urljoin(site, "index.html"), wait_until="load")
    assert page.title().startswith("fedlab workbook")
    board = page.locator("table.scoreboard")
    header = [h.strip() for h in board.locator("thead th").all_inner_texts()]
    assert header == ["Key figure", "Chapter", "Status", "Run time", *VERDICT_COLUMNS]
    rows = board.locator("tbody tr")
    assert rows.count() == len(results) + 1
    for i, r in enumerate(results):
        row = rows.nth(i)
        cells = _cells(row)
        assert row.locator(f'td:nth-child(2) a[href="{r.html}"]').inner_text().strip() == r.title
        assert cells[2].startswith(r.status) and cells[3] == f"{r.seconds:.1f}\u00a0s"
        experiments = [str(r.tally["experiment"].get(v, 0)) for v in EXPERIMENT_VERDICTS]
        assert cells[4:9] == experiments and cells[9] == ", ".join(f"{n} {v}" for v, n in r.tally["analytic"].items())
        thumbnail = row.locator("img.thumbnail")
        assert thumbnail.evaluate("i => i.complete && i.naturalWidth > 0")
    assert "ZeroDivisionError" in _cells(rows.nth(1))[2]
    assert _cells(rows.nth(2))[1:10] == ["All chapters", "1 ok, 1 failed", _cells(rows.nth(2))[3], "2", "1", "0", "0",
                                         "2", "1 not reproduced"]
    claims = page.locator("table.claims tbody tr")
    assert claims.count() == sum(len(r.claims) for r in results)
    first = _cells(claims.first)
    assert first[:6] == ["00 · Chapter Good", "Fig. 1", "accuracy (%)", "experiment (smoke)", "80.00", "79.00"]
    assert first[6].startswith("reproduced")
    verdicts = [c.split("\n")[0] for c in page.locator("table.claims td:nth-child(7)").all_inner_texts()]
    assert verdicts == [c.verdict_text for r in results for c in r.claims]
    text = page.locator("article").inner_text()
    assert all(r.name not in text for r in results), "raw notebook names on the scoreboard"
    screenshot(page, "report-index", full_page=True)
    _check_clean(page, "index.html")


def test_chapter_pages_render_maths_offline_and_collapse_solutions(report, site, page):
    _, results = report
    for r in results:
        page.goto(urljoin(site, r.html), wait_until="load")
        assert page.locator("article h1").first.inner_text().startswith(r.title)
        # MathJax (from _static/mathjax) typesets every formula of a generated chapter: 2 inline, 2 display
        page.wait_for_function("document.querySelectorAll('mjx-container').length >= 4")
        assert page.locator("mjx-container[display='true']").count() >= 2
        text = page.locator("article").inner_text()
        assert "$" not in text and "\\frac" not in text and "\\(" not in text, "raw TeX on the page"
        solutions = page.locator("article details")
        assert solutions.count() == 2 and page.locator("article details[open]").count() == 0
        screenshot(page, f"report-{r.name}", full_page=True)
        assert "A square" in solutions.first.inner_html() and "solution code ran" in solutions.nth(1).inner_html()
        for i in range(2):   # the content (all but the summary) shows once the summary is clicked
            content = solutions.nth(i).locator(":scope > :not(summary)").first
            assert not content.is_visible()
            solutions.nth(i).locator("summary").click()
            assert content.is_visible()
        images = page.locator("article img")
        page.wait_for_function("[...document.querySelectorAll('article img')]"
                               ".filter(i => i.complete && i.naturalWidth > 0).length >= 2")
        assert images.count() >= 2
        _check_clean(page, r.html)


def test_search_finds_a_chapter_offline(report, site, page):
    page.goto(urljoin(site, "search.html?q=generated"), wait_until="load")
    page.wait_for_function("document.querySelectorAll('#search-results li').length >= 2")
    hits = page.locator("#search-results li a").all_inner_texts()
    assert any("Chapter Good" in hit for hit in hits), hits
    _check_clean(page, "search.html")
