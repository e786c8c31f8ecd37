"""Shared pieces of the real-browser tests (``tests/test_browser_*.py``, marker ``browser``).

Headless Chromium driven by Playwright. The browser is the system's Chromium (Debian package ``chromium``,
installed by ``tools/install_browser.sh``, which ``make test`` runs), not a Playwright download: Playwright only
provides the driver. The tests skip, saying why, when the driver cannot be imported or no Chromium is found;
anything else that goes wrong fails them.
"""
from __future__ import annotations

import os
import shutil
import socket
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("FEDLAB_TEST_ARTIFACTS", ROOT / "build" / "test-artifacts"))
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Headless in a container without a display or a network: no sandbox (root), no GPU, and none of the background
# services (component updates, sync, safe browsing...) that would otherwise keep trying to reach the internet.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
WAIT_MS = 90_000      # generous upper bound for explicit wait conditions (2 shared cores)


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome executable: ``$FEDLAB_CHROMIUM`` or the first candidate on ``PATH``."""
    explicit = os.environ.get("FEDLAB_CHROMIUM")
    if explicit:
        return shutil.which(explicit)
    return next((shutil.which(name) for name in CHROMIUM_CANDIDATES if shutil.which(name)), None)


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_browser():
    """``(playwright.sync_api, chromium path)``, or skip (the calling test or module) saying what is missing."""
    try:
        import playwright.sync_api as sync_api
    except ImportError as exc:
        pytest.skip(f"the browser driver cannot be imported ({exc}); Python playwright is in the 'dev' extra: "
                    "pip install -c constraints.txt -e '.[dev]'", allow_module_level=True)
    executable = find_chromium()
    if executable is None:
        tried = f"$FEDLAB_CHROMIUM={os.environ['FEDLAB_CHROMIUM']}" if os.environ.get("FEDLAB_CHROMIUM") \
            else ", ".join(CHROMIUM_CANDIDATES)
        pytest.skip(f"no Chromium found (tried {tried}); run tools/install_browser.sh (Debian: apt-get install chromium)",
                    allow_module_level=True)
    return sync_api, executable


@contextmanager
def chromium():
    """A headless Playwright ``Browser`` on the system's Chromium; skips when the driver or the browser is missing."""
    sync_api, executable = require_browser()
    with sync_api.sync_playwright() as playwright:
        # Playwright gives every launch a fresh temporary profile (--user-data-dir) and removes it afterwards.
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class PageErrors:
    """Collects a page's console messages of type ``error`` and its uncaught exceptions (``pageerror``).

    ``expected`` decides which console errors are known and explained (it gets the message and returns a reason or
    ``None``); those are kept apart in ``explained`` and printed, never dropped silently.
    """

    def __init__(self, page, expected=lambda message: None):
        self.errors: list[str] = []
        self.explained: list[str] = []
        self._expected = expected
        page.on("console", self._on_console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught exception: {exc}"))

    def _on_console(self, message) -> None:
        if message.type != "error":
            return
        url = (message.location or {}).get("url", "")
        text = f"console error: {message.text} ({url})" if url else f"console error: {message.text}"
        reason = self._expected(message)
        (self.explained if reason else self.errors).append(f"{text} [{reason}]" if reason else text)


def screenshot(target, name: str, **kwargs) -> Path:
    """Save a screenshot of a page or locator into the artifacts folder and print its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    target.screenshot(path=str(path), **kwargs)
    print(f"screenshot: {path}")
    return path
