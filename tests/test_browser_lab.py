"""The primer's sliders in a real JupyterLab, driven by headless Chromium.

Starts ``jupyter lab`` from this environment on 127.0.0.1 (free port, token, no browser) over a temporary copy of
``notebooks/00_primer.ipynb``, opens the notebook, runs all cells from the Run menu, moves the ``local_steps`` slider of
the interactive section with the keyboard and checks that the figure under the sliders is redrawn; then shuts the
server down through its REST API and checks that it and its kernel exited. Screenshots go to ``build/test-artifacts/``.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil   # a dependency of ipykernel
import pytest

from browser_support import ROOT, WAIT_MS, PageErrors, chromium, require_browser, free_port, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]
require_browser()   # skip the module early (before building anything) when the driver or Chromium is missing

PRIMER = ROOT / "notebooks" / "00_primer.ipynb"
SERVER_START_S = 90


class LabServer:
    """``python -m jupyterlab`` in a subprocess, isolated from the user's Jupyter settings, over ``root``."""

    def __init__(self, root: Path, home: Path):
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = home / "jupyterlab.log"
        settings = home / "lab-settings"
        # No "get notified about Jupyter news?" toast over the notebook (and no request to jupyter.org).
        (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
        (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false"}))
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
                   JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(settings),
                   JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), OMP_NUM_THREADS="1", TQDM_DISABLE="1",
                   PYTHONUNBUFFERED="1")
        # As with the README's `.venv/bin/jupyter lab notebooks/`: the kernel picks the inline backend itself. The
        # Makefile exports MPLBACKEND=Agg for headless runs; inherited by the kernel it would make plt.show() a no-op.
        env.pop("MPLBACKEND", None)
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={root}",
               "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=self._log, stderr=subprocess.STDOUT)

    def request(self, path: str, method: str = "GET"):
        req = urllib.request.Request(self.url + path, method=method, data=b"" if method == "POST" else None,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + SERVER_START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"jupyter lab exited with {self.proc.returncode} during start-up:\n{self.log()}")
            try:
                if self.request("/api/status")[0] == 200:
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.25)    # polling interval of the readiness check
        raise AssertionError(f"jupyter lab did not answer on {self.url} within {SERVER_START_S} s:\n{self.log()}")

    def kernel_pids(self) -> list[int]:
        """Pids of the server's child processes: the kernels."""
        return [child.pid for child in psutil.Process(self.proc.pid).children(recursive=True)]

    def shutdown(self, timeout: float = 60) -> int:
        """POST /api/shutdown, wait for the process to exit and return its exit code."""
        status, _ = self.request("/api/shutdown", method="POST")
        assert status == 200, f"/api/shutdown answered {status}"
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
        self._log.close()

    def log(self, lines: int = 40) -> str:
        self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


# What the notebook shows: the toolbar's kernel name, whether the kernel is idle (the execution indicator and the
# status bar's "<kernel> | Idle" agree), the code cells' prompts ("[ ]:", "[*]:", "[3]:") and any traceback.
STATE_JS = """() => {
    const panel = document.querySelector('.jp-NotebookPanel');
    const kernel = panel && panel.querySelector('[data-jp-item-name="kernelName"]');
    const indicator = panel && panel.querySelector('.jp-Notebook-ExecutionIndicator');
    const status = [...document.querySelectorAll('#jp-main-statusbar .jp-StatusBar-TextItem')]
        .map(e => e.textContent.trim());
    const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')]
        .map(p => p.textContent.trim());
    const tracebacks = [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')]
        .map(o => o.innerText).filter(t => t.includes('Traceback'));
    return {kernel: kernel ? kernel.textContent.trim() : null,
            idle: !!indicator && indicator.dataset.status === 'idle' && status.some(t => / \\| Idle$/.test(t)),
            prompts, tracebacks};
}"""


def _wait_for_kernel(page) -> None:
    """Wait until the notebook is loaded and its kernel started and idle (Run All before that opens a kernel dialog)."""
    page.wait_for_function(f"""() => {{
        const s = ({STATE_JS})();
        return s.kernel && s.kernel !== 'No Kernel' && s.idle && s.prompts.length > 1;
    }}""", polling=250)


def _run_all_and_wait(page) -> dict:
    """Wait until the kernel is idle and every code cell shows an execution count ``[n]:`` (or a cell failed)."""
    try:
        page.wait_for_function(f"""() => {{
            const s = ({STATE_JS})();
            const done = s.prompts.length > 0 && s.prompts.every(p => /^\\[\\d+\\]:$/.test(p));
            const failed = s.tracebacks.length > 0 && !s.prompts.includes('[*]:');
            return s.idle && (done || failed);
        }}""", timeout=2 * WAIT_MS, polling=250)
    except Exception:
        screenshot(page, "lab-primer-run-all-timeout")
        print("notebook state at the timeout:", page.evaluate(STATE_JS))
        raise
    return page.evaluate(STATE_JS)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_primer_slider_redraws_the_plot_in_jupyterlab(tmp_path):
    expect = require_browser()[0].expect
    with chromium() as browser:                 # skips here, before starting a server, when there is no browser
        root = tmp_path / "notebooks"
        root.mkdir()
        shutil.copy(PRIMER, root / PRIMER.name)
        server = LabServer(root, tmp_path)
        try:
            server.wait_ready()
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(WAIT_MS)
            log = PageErrors(page)
            page.goto(f"{server.url}/lab/tree/{PRIMER.name}?token={server.token}")
            _wait_for_kernel(page)

            # Run ▸ Run All Cells, as a reader would.
            page.locator("#jp-MainMenu .lm-MenuBar-item", has_text="Run").first.click()
            page.locator(".lm-Menu-item:visible", has_text="Run All Cells").first.click()
            start = time.perf_counter()
            state = _run_all_and_wait(page)
            print(f"run all cells: {time.perf_counter() - start:.1f} s, prompts {' '.join(state['prompts'])}")
            assert not state["tracebacks"], "a cell raised:\n" + "\n".join(state["tracebacks"])

            interact = page.locator(".widget-interact")
            assert interact.count() == 1, "expected one ipywidgets interact() in the primer"
            interact.scroll_into_view_if_needed()    # cells out of view are not rendered (content-visibility)
            sliders = interact.locator(".widget-slider")
            labels = [t.strip() for t in sliders.locator("label.widget-label").all_text_contents()]
            assert labels == ["alpha", "local_steps", "participation"], labels
            figure = interact.locator(".widget-output img")
            figure.first.wait_for(state="visible")
            before = figure.first.get_attribute("src")
            assert before and before.startswith("data:image/png"), "no PNG figure under the sliders"
            interact.evaluate("e => e.scrollIntoView({block: 'start'})")
            screenshot(page, "lab-primer-sliders-before")
            screenshot(figure.first, "lab-primer-figure-before")

            # local_steps 5 -> 6 with the keyboard on the focused noUiSlider handle; continuous_update=False sliders
            # send the value when the change is committed, which a key press does.
            slider = sliders.filter(has=page.locator("label", has_text="local_steps"))
            handle = slider.locator(".noUi-handle")
            assert handle.get_attribute("aria-valuenow") == "5.0"
            handle.focus()
            handle.press("ArrowRight")
            expect(handle).to_have_attribute("aria-valuenow", "6.0")
            expect(slider.locator(".widget-readout")).to_have_text("6")
            page.wait_for_function(f"""before => {{
                const img = document.querySelector('.widget-interact .widget-output img');
                return img && img.src !== before && img.complete && img.naturalWidth > 0 && ({STATE_JS})().idle;
            }}""", arg=before, polling=250)
            after = figure.first.get_attribute("src")
            assert after != before and after.startswith("data:image/png")
            assert figure.count() == 1, "the previous figure should be replaced, not stacked"
            interact.evaluate("e => e.scrollIntoView({block: 'start'})")
            screenshot(page, "lab-primer-sliders-after")
            screenshot(figure.first, "lab-primer-figure-after")

            assert not log.errors, "JupyterLab logged errors:\n" + "\n".join(log.errors)
            page.close()

            kernels = server.kernel_pids()
            assert kernels, "no kernel process under the server"
            assert server.shutdown() == 0, server.log()
            assert not [pid for pid in kernels if _alive(pid)], f"kernels {kernels} still running after the shutdown"
        except Exception:
            print(f"jupyter lab log (tail):\n{server.log()}")
            raise
        finally:
            server.kill()
