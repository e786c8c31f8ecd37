"""The HTML report (``build/index.html`` and one page per chapter) in a real headless Chromium.

Builds the report for real (the primer, papermill + nbconvert), serves the build folder over HTTP on 127.0.0.1 and
checks what a reader sees: no console errors or uncaught exceptions, the index lists the chapter with status ok and
its headline numbers, every chapter page shows all its figures. Screenshots go to ``build/test-artifacts/``.
"""
from __future__ import annotations

import functools
import http.server
import threading
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest

from browser_support import WAIT_MS, PageErrors, chromium, require_browser, screenshot
from fedlab.workbook import run_workbook

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
require_browser()   # skip the module early (before building anything) when the driver or Chromium is missing

# nbconvert's "lab" template links three scripts from public CDNs: require.js and MathJax 2 (cdnjs.cloudflare.com)
# and, when the notebook metadata holds widget state, the widgets' html-manager (unpkg.com). The test machine has no
# internet, and a test should not depend on it anyway, so requests to exactly these hosts are aborted (same outcome
# offline and online) and the resulting "Failed to load resource" console errors are reported as explained, not
# counted. Any other request leaving 127.0.0.1 fails the test, and so does any uncaught exception: the pages must
# work without these scripts (the math then shows as TeX source).
CDN_HOSTS = {"cdnjs.cloudflare.com": "require.js / MathJax from nbconvert's lab template",
             "unpkg.com": "@jupyter-widgets/html-manager from nbconvert's lab template"}


def _cdn_failure(message) -> str | None:
    host = urlsplit((message.location or {}).get("url", "")).hostname
    if host in CDN_HOSTS and message.text.startswith("Failed to load resource"):
        return f"blocked CDN script: {CDN_HOSTS[host]}"
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Run the primer into a fresh build folder: (build folder, results)."""
    build = tmp_path_factory.mktemp("report") / "build"
    results = run_workbook(only="primer", build=build, jobs=1, echo=lambda line: print(line) if line.strip() else None)
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
    """A page whose requests may only reach 127.0.0.1 (plus the aborted CDN scripts, recorded in ``page.blocked``)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    blocked, unexpected = [], []

    def route(request_route):
        url = request_route.request.url
        host = urlsplit(url).hostname
        if host == "127.0.0.1":
            request_route.continue_()
        else:
            (blocked if host in CDN_HOSTS else unexpected).append(url)
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.log = PageErrors(page, expected=_cdn_failure)
    page.blocked, page.unexpected = blocked, unexpected
    yield page
    if blocked:
        print("aborted CDN requests (no internet in tests):\n  " + "\n  ".join(sorted(set(blocked))))
    context.close()


def _check_clean(page, what):
    for line in page.log.explained:
        print(f"{what}: {line}")
    page.log.explained.clear()
    assert not page.unexpected, f"{what} requested resources outside 127.0.0.1: {page.unexpected}"
    assert not page.log.errors, f"{what} logged errors:\n" + "\n".join(page.log.errors)


def test_index_lists_every_chapter_with_status_and_headline_numbers(report, site, page):
    _, results = report
    assert results and all(r.status == "ok" for r in results), [(r.name, r.status, r.error) for r in results]
    page.goto(urljoin(site, "index.html"), wait_until="load")
    assert page.title() == "fedlab workbook"
    rows = page.locator("tbody tr")
    assert rows.count() == len(results)
    for r in results:
        row = rows.filter(has=page.locator(f'a[href="{r.html}"]'))
        assert row.count() == 1, f"no row links to {r.html}"
        assert "ok" in row.get_attribute("class").split()
        cells = row.locator("td")
        assert cells.nth(0).locator("a").inner_text().strip() == r.title
        assert cells.nth(1).inner_text().strip() == "ok"
        assert cells.nth(2).inner_text().strip() == f"{r.seconds:.1f} s"
        numbers = cells.nth(3).inner_text()
        assert r.headline, f"{r.name} printed no headline numbers"
        for name, value in r.headline.items():
            assert f"{name}: {value}" in numbers, f"{name}: {value} missing from the index row of {r.name}"
    screenshot(page, "report-index", full_page=True)
    _check_clean(page, "index.html")


def test_chapter_pages_show_their_figures_and_numbers(report, site, page):
    build, results = report
    page.goto(urljoin(site, "index.html"), wait_until="load")
    links = [a.get_attribute("href") for a in page.locator("tbody a").all()]
    assert links == [r.html for r in results]
    for r, href in zip(results, links):
        page.goto(urljoin(site, href), wait_until="load")
        assert r.title in page.locator("h1").first.inner_text()
        # one <img> per image/png output of the executed notebook, every one decoded with a non-zero size
        nb = nbformat.read(build / f"{r.name}.ipynb", as_version=4)
        n_png = sum("image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", []))
        assert n_png >= 1, f"{r.name}: the executed notebook holds no figure (is MPLBACKEND set to a non-inline backend?)"
        images = page.locator(".jp-OutputArea-output img")
        page.wait_for_function("n => [...document.querySelectorAll('.jp-OutputArea-output img')]"
                               ".filter(i => i.complete && i.naturalWidth > 0).length >= n", arg=n_png)
        sizes = images.evaluate_all("imgs => imgs.map(i => [i.naturalWidth, i.naturalHeight])")
        assert len(sizes) == n_png and all(w > 0 and h > 0 for w, h in sizes), sizes
        text = page.locator("body").inner_text()
        for name, value in r.headline.items():
            assert f"{name}: {value}" in text, f"{r.html} does not show {name}: {value}"
        screenshot(page, f"report-{r.name}", full_page=True)
        screenshot(images.first, f"report-{r.name}-first-figure")
        _check_clean(page, href)
