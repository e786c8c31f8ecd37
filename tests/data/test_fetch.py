"""``python -m fedlab data fetch``: downloads from a real HTTP server on 127.0.0.1 started by the test, serving small
files the test writes in the real formats; good, resumed, corrupt, missing and unreachable downloads."""
import gzip
import hashlib
import http.server
import threading
from pathlib import Path

import numpy as np
import pytest

from fedlab.__main__ import main
from fedlab.data import fetch as fetch_module
from fedlab.data.fetch import (DATASETS, DataSet, DownloadError, RemoteFile, dataset_status, download, fetch,
                               fetch_command, is_present, require)
from fedlab.data.vision import load_mnist


def idx_bytes(array: np.ndarray) -> bytes:
    """An IDX file (the MNIST format): magic, dimensions, big-endian data."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return header + array.astype(">u1").tobytes()


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the test's files, honouring ``Range: bytes=N-`` (206) as the real servers do; logs the requests."""

    log: list = []

    def do_GET(self):
        path = Path(self.directory) / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404, "Not Found")
            return
        body = path.read_bytes()
        start = int(self.headers["Range"].split("=")[1].rstrip("-")) if self.headers.get("Range") else 0
        RangeHandler.log.append((self.path, start))
        if start >= len(body) and start:
            self.send_error(416, "Range Not Satisfiable")
            return
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        self.wfile.write(body[start:])

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving ``tmp_path/served``; yields (folder, base URL)."""
    served = tmp_path / "served"
    served.mkdir()
    handler = lambda *a, **k: RangeHandler(*a, directory=str(served), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    RangeHandler.log = []
    yield served, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def _mnist_catalog(served: Path, url: str, corrupt: str | None = None) -> dict[str, DataSet]:
    """Four small MNIST-format files on the server and a catalog naming them with their MD5 digests."""
    rng = np.random.default_rng(0)
    contents = {}
    for prefix, n in (("train", 12), ("t10k", 5)):
        contents[f"{prefix}-images-idx3-ubyte.gz"] = gzip.compress(idx_bytes(rng.integers(0, 256, (n, 28, 28))))
        contents[f"{prefix}-labels-idx1-ubyte.gz"] = gzip.compress(idx_bytes(rng.integers(0, 10, n)))
    files = []
    for name, body in contents.items():
        (served / name).write_bytes(body if name != corrupt else body[:-3] + b"xyz")
        files.append(RemoteFile(name, url + name, hashlib.md5(body).hexdigest(), "md5", len(body)))
    return {"mnist": DataSet("mnist", "MNIST (test files)", "none", tuple(files))}


def test_a_good_download_is_verified_and_readable(server, data_cache):
    served, url = server
    catalog = _mnist_catalog(served, url)
    paths = fetch(["mnist"], progress=False, catalog=catalog, echo=lambda *_: None)
    assert [p.name for p in paths["mnist"]] == [f.name for f in catalog["mnist"].files]
    images, labels = load_mnist("train")
    assert images.shape == (12, 1, 28, 28) and labels.shape == (12,)
    assert is_present("mnist", catalog=catalog)
    assert not list((data_cache / "mnist").glob("*.part"))


def test_a_second_fetch_keeps_verified_files(server, data_cache):
    served, url = server
    catalog = _mnist_catalog(served, url)
    fetch(["mnist"], progress=False, catalog=catalog, echo=lambda *_: None)
    RangeHandler.log.clear()
    lines = []
    fetch(["mnist"], progress=False, catalog=catalog, echo=lines.append)
    assert RangeHandler.log == [] and all("present and verified" in line for line in lines)


def test_an_interrupted_download_resumes_from_its_partial_file(server, data_cache):
    served, url = server
    body = np.arange(5000, dtype=np.uint8).tobytes()
    (served / "big.bin").write_bytes(body)
    remote = RemoteFile("big.bin", url + "big.bin", hashlib.sha256(body).hexdigest(), "sha256")
    folder = data_cache / "demo"
    folder.mkdir(parents=True)
    (folder / "big.bin.part").write_bytes(body[:1234])         # what a cut-off download leaves behind
    path = download(remote, folder, progress=False)
    assert path.read_bytes() == body
    assert RangeHandler.log == [("/big.bin", 1234)]            # only the rest was requested


def test_a_complete_partial_file_is_finished_without_a_transfer(server, data_cache):
    served, url = server
    body = b"complete"
    (served / "f.bin").write_bytes(body)
    folder = data_cache / "demo"
    folder.mkdir(parents=True)
    (folder / "f.bin.part").write_bytes(body)
    download(RemoteFile("f.bin", url + "f.bin", hashlib.md5(body).hexdigest()), folder, progress=False)
    assert (folder / "f.bin").read_bytes() == body


def test_a_corrupt_download_is_deleted_and_reported(server, data_cache):
    served, url = server
    catalog = _mnist_catalog(served, url, corrupt="t10k-labels-idx1-ubyte.gz")
    with pytest.raises(DownloadError, match="t10k-labels-idx1-ubyte.gz: md5 .* differs from the published .* "
                                            "deleted"):
        fetch(["mnist"], progress=False, catalog=catalog, echo=lambda *_: None)
    folder = data_cache / "mnist"
    assert not (folder / "t10k-labels-idx1-ubyte.gz").exists() and not list(folder.glob("*.part"))
    assert not is_present("mnist", catalog=catalog)


def test_a_stored_file_that_fails_its_check_is_fetched_again(server, data_cache):
    served, url = server
    catalog = _mnist_catalog(served, url)
    fetch(["mnist"], progress=False, catalog=catalog, echo=lambda *_: None)
    (data_cache / "mnist" / "train-labels-idx1-ubyte.gz").write_bytes(b"tampered")
    lines = []
    fetch(["mnist"], progress=False, catalog=catalog, echo=lines.append)
    assert any("failed its md5 check and was deleted" in line for line in lines)
    assert load_mnist("train")[1].shape == (12,)


def test_a_missing_file_is_an_http_error(server, data_cache):
    _, url = server
    remote = RemoteFile("absent.bin", url + "absent.bin", "0" * 32)
    with pytest.raises(DownloadError, match="HTTP 404"):
        download(remote, data_cache, progress=False)


def test_offline_is_a_clear_message(data_cache):
    remote = RemoteFile("x.bin", "http://127.0.0.1:9/x.bin", "0" * 32)    # port 9 (discard): nothing listens
    with pytest.raises(DownloadError, match="could not reach .* looks offline"):
        download(remote, data_cache, progress=False)


def test_the_command_line_fetches_and_lists(server, data_cache, monkeypatch, capsys):
    served, url = server
    monkeypatch.setattr(fetch_module, "DATASETS", _mnist_catalog(served, url))
    monkeypatch.setattr("fedlab.__main__.fetch", lambda names, progress: fetch(names, progress=progress,
                                                                               catalog=fetch_module.DATASETS))
    monkeypatch.setattr("fedlab.__main__.dataset_status", lambda: dataset_status(catalog=fetch_module.DATASETS))
    assert main(["data", "fetch", "mnist", "--quiet"]) == 0
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "downloaded and verified" in out and "present" in out and str(data_cache / "mnist") in out


def test_the_command_line_reports_a_failed_download_in_one_line(data_cache, monkeypatch, capsys):
    offline = {"mnist": DataSet("mnist", "d", "none", (RemoteFile("a.gz", "http://127.0.0.1:9/a.gz", "0" * 32),))}
    monkeypatch.setattr("fedlab.__main__.fetch", lambda names, progress: fetch(names, progress=progress,
                                                                               catalog=offline))
    assert main(["data", "fetch", "mnist"]) == 1
    assert "looks offline" in capsys.readouterr().err


def test_unknown_names_are_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["data", "fetch", "imagenet"])
    assert exit_info.value.code == 2 and "unknown data set(s) imagenet" in capsys.readouterr().err


def test_all_cannot_be_combined_with_names(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["data", "fetch", "all", "mnist"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert "argument NAME: 'all' fetches every data set and cannot be combined with names, got all mnist" in err


@pytest.mark.parametrize("command", [["data", "fetch", "mnist", "--quiet"], ["data", "list"]])
def test_a_fedlab_data_that_is_a_file_is_refused_in_one_line(tmp_path, monkeypatch, capsys, command):
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("FEDLAB_DATA", str(tmp_path / "a_file"))
    with pytest.raises(SystemExit) as exit_info:
        main(command)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"error: FEDLAB_DATA must name a folder, got '{tmp_path / 'a_file'}', which is a file" in err


def test_a_data_set_folder_that_is_a_file_is_refused(data_cache, capsys):
    data_cache.mkdir()
    (data_cache / "mnist").write_text("")
    with pytest.raises(ValueError, match=f"names: the folder of mnist, '{data_cache / 'mnist'}', is a file"):
        fetch(["mnist"], progress=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["data", "fetch", "mnist", "--quiet"])
    assert exit_info.value.code == 2 and "the folder of mnist" in capsys.readouterr().err


def test_status_of_absent_and_partial_data(data_cache):
    rows = {r["name"]: r for r in dataset_status()}
    assert set(rows) == set(DATASETS) and rows["cifar10"]["status"] == "absent"
    (data_cache / "cifar10").mkdir(parents=True)
    (data_cache / "cifar10" / "cifar-10-binary.tar.gz.part").write_bytes(b"12345")
    row = {r["name"]: r for r in dataset_status()}["cifar10"]
    assert row["status"] == "partial download" and row["bytes"] == 5


def test_require_stops_with_the_exact_command(data_cache):
    with pytest.raises(FileNotFoundError, match=r"data absent: femnist, cifar100 .* python -m fedlab data fetch "
                                                r"femnist cifar100"):
        require("femnist", "cifar100")
    assert fetch_command("mnist") == "python -m fedlab data fetch mnist"


def test_every_catalog_entry_names_a_published_digest():
    lengths = {"md5": 32, "sha256": 64}
    for dataset in DATASETS.values():
        for remote in dataset.files:
            assert remote.url.startswith("https://") and len(remote.digest) == lengths[remote.algorithm]


def test_bad_arguments():
    with pytest.raises(ValueError, match="names must be a non-empty list"):
        fetch([])
    with pytest.raises(ValueError, match="names"):
        fetch(["nope"])
    with pytest.raises(TypeError, match="remote must be a RemoteFile"):
        download("http://127.0.0.1/x", ".")
