import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # shared test helpers: helpers, notebook_runner, ...
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

import pytest

from fedlab.engine import ClientData, FederatedDataset
from fedlab.exercises import REFERENCE_ENV
from fedlab.experiments import KEEP_WORKERS_ENV
from helpers import make_clients


@pytest.fixture(autouse=True)
def _reader_answers(monkeypatch):
    """Exercise checkers answer as for a reader, and sweeps start their own workers: a run of the workbook in this
    process may have set FEDLAB_REFERENCE_ANSWERS and FEDLAB_KEEP_WORKERS (as headless runs do)."""
    monkeypatch.delenv(REFERENCE_ENV, raising=False)
    monkeypatch.delenv(KEEP_WORKERS_ENV, raising=False)


@pytest.fixture
def small_data():
    xs, ys = make_clients()
    return FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.25, n_classes=3, seed=0)


@pytest.fixture
def small_clients():
    xs, ys = make_clients()
    return ClientData.from_arrays(xs, ys)


@pytest.fixture
def data_cache(tmp_path, monkeypatch):
    """An empty ``$FEDLAB_DATA`` folder for the test (the real-format files a test writes go there)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("FEDLAB_DATA", str(folder))
    return folder

