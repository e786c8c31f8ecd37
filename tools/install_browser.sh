#!/usr/bin/env bash
# Install the headless browser used by the real-browser tests (tests/test_browser_*.py, marker `browser`).
#
# Debian/Ubuntu: installs the distribution's `chromium` with apt-get when it is missing (non-interactive,
# through sudo when not root). The tests drive it with Python `playwright` (from the `dev` extra) using
# executable_path=<chromium>; playwright's own browser download (`playwright install`) is not needed.
#
# This script never fails the build: when it cannot install, it says why and exits 0, and the browser
# tests then skip with a message. Set FEDLAB_SKIP_BROWSER_INSTALL=1 to skip it entirely.
set -u

say() { echo "install_browser: $*"; }

if [ "${FEDLAB_SKIP_BROWSER_INSTALL:-0}" = "1" ]; then
    say "FEDLAB_SKIP_BROWSER_INSTALL=1, not installing a browser (browser tests skip if none is found)."
    exit 0
fi

for exe in "${FEDLAB_CHROMIUM:-}" chromium chromium-browser google-chrome google-chrome-stable; do
    if [ -n "$exe" ] && command -v "$exe" >/dev/null 2>&1; then
        say "found $(command -v "$exe") ($("$exe" --version 2>/dev/null | head -n1 || echo 'version unknown'))."
        exit 0
    fi
done

if ! command -v apt-get >/dev/null 2>&1; then
    say "no chromium found and apt-get is not available on this system."
    say "install Chromium or Chrome yourself (or set FEDLAB_CHROMIUM=/path/to/chromium); browser tests will skip."
    exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        SUDO="sudo -n"
    else
        say "no chromium found; installing it needs root and passwordless sudo is not available."
        say "run: sudo apt-get install -y chromium   (browser tests will skip until then)."
        exit 0
    fi
fi

say "chromium not found, installing Debian's chromium with apt-get (takes a minute)..."
export DEBIAN_FRONTEND=noninteractive
LOG="$(mktemp -t fedlab-install-browser.XXXXXX)"
# Wait for the dpkg lock rather than fail when another apt run holds it; keep existing config files.
APT_OPTS=(-y -q --no-install-recommends -o DPkg::Lock::Timeout=300
          -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
# Fonts so that pages render text; recommends are skipped to keep the install small.
PKGS=(chromium fonts-dejavu-core)
if $SUDO apt-get install "${APT_OPTS[@]}" "${PKGS[@]}" >"$LOG" 2>&1 \
   || { $SUDO apt-get update -q -o DPkg::Lock::Timeout=300 >>"$LOG" 2>&1 \
        && $SUDO apt-get install "${APT_OPTS[@]}" "${PKGS[@]}" >>"$LOG" 2>&1; }; then
    say "installed $(command -v chromium) ($(chromium --version 2>/dev/null | head -n1))."
else
    say "apt-get could not install chromium (full log: $LOG); last lines:"
    tail -n 5 "$LOG" | sed 's/^/    /'
    say "browser tests will skip."
fi
exit 0
