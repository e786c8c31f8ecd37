# The workbook's two commands: `make run` (execute every notebook, build the report) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
MODE ?= smoke
export OMP_NUM_THREADS ?= 1

.PHONY: run test check-headlines install lab bench clean

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev,scale]"
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) -m fedlab run --mode $(MODE)

test: install
	bash tools/install_browser.sh   # headless Chromium for the browser tests (never fails)
	$(PY) -m pytest -n auto --dist worksteal

check-headlines: install   # every notebook under the native and the portable CPU dispatch (CONTRIBUTING.md)
	$(PY) -m pytest -n auto --dist worksteal tests/test_notebooks.py

lab: install   # as root (e.g. in a container) jupyter refuses to start without --allow-root
	$(VENV)/bin/jupyter lab notebooks/ $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

bench: install
	$(PY) benchmarks/engine.py

clean:
	rm -rf build results .pytest_cache
