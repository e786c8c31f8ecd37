"""The real data sets of the papers, fetched once into ``$FEDLAB_DATA`` (``python -m fedlab data fetch NAME``).

:data:`DATASETS` lists each data set's files with their canonical public source and the checksum its publisher
gives. :func:`fetch` downloads what is missing into ``data_dir()/<name>/``: a download goes to ``<file>.part``
and continues from there when interrupted (an HTTP ``Range`` request), the finished file is checked against its
published digest (a mismatch deletes it and says so) and only then renamed into place, so a file under its
final name is always whole. Nothing is unpickled and nothing is downloaded at run time: the notebooks' paper
mode reads what this command stored, and :func:`require` stops a run with the command to type when files are
absent.

Sources
-------
* MNIST: the IDX files (LeCun, Cortes and Burges), from the mirror torchvision uses, with their MD5 digests.
* Fashion-MNIST: the IDX files from Zalando Research's repository, with the MD5 digests torchvision lists.
* EMNIST: NIST's ``gzip.zip`` (Cohen et al., 2017).
* CIFAR-10 and CIFAR-100: the binary versions from Alex Krizhevsky's page, with the MD5 digests given there.
* FEMNIST (split by writer) and Shakespeare (split by speaking role): the HDF5 files TensorFlow Federated
  publishes (the LEAF benchmark's data, preprocessed), with the SHA-256 digests of TFF's loaders.
"""
from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from tqdm.auto import tqdm

from fedlab._validation import check_bool, check_choice, check_sequence
from fedlab.data.vision import data_dir, file_hash

__all__ = ["RemoteFile", "DataSet", "DATASETS", "DownloadError", "fetch_command", "download", "fetch",
           "dataset_status", "is_present", "require"]

CHUNK = 1 << 20
TIMEOUT = 60


@dataclass(frozen=True)
class RemoteFile:
    """One published file: its name in the data set's folder, where it is published and its digest."""

    name: str
    url: str
    digest: str
    algorithm: str = "md5"
    size: int = 0           # bytes, as published (for ``data list``; 0 when unknown)


@dataclass(frozen=True)
class DataSet:
    """A data set the papers use: its files, what it is and how its clients are formed."""

    name: str
    description: str
    clients: str
    files: tuple[RemoteFile, ...]

    @property
    def folder(self) -> Path:
        """Where its files live: ``data_dir()/<name>``."""
        return data_dir() / self.name


_MNIST = "https://ossci-datasets.s3.amazonaws.com/mnist/"
_ZALANDO = "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/"
_TORONTO = "https://www.cs.toronto.edu/~kriz/"
_TFF = "https://storage.googleapis.com/tff-datasets-public/"

DATASETS: dict[str, DataSet] = {d.name: d for d in (
    DataSet("mnist", "MNIST handwritten digits: 60,000 + 10,000 images 28x28, 10 classes",
            "none: partitioned by the experiment", (
                RemoteFile("train-images-idx3-ubyte.gz", _MNIST + "train-images-idx3-ubyte.gz",
                           "f68b3c2dcbeaaa9fbdd348bbdeb94873", size=9_912_422),
                RemoteFile("train-labels-idx1-ubyte.gz", _MNIST + "train-labels-idx1-ubyte.gz",
                           "d53e105ee54ea40749a09fcbcd1e9432", size=28_881),
                RemoteFile("t10k-images-idx3-ubyte.gz", _MNIST + "t10k-images-idx3-ubyte.gz",
                           "9fb629c4189551a2d022fa330f9573f3", size=1_648_877),
                RemoteFile("t10k-labels-idx1-ubyte.gz", _MNIST + "t10k-labels-idx1-ubyte.gz",
                           "ec29112dd5afa0611ce80d1b7f02629c", size=4_542))),
    DataSet("fashion_mnist", "Fashion-MNIST: 60,000 + 10,000 clothing images 28x28, 10 classes",
            "none: partitioned by the experiment", (
                RemoteFile("train-images-idx3-ubyte.gz", _ZALANDO + "train-images-idx3-ubyte.gz",
                           "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                RemoteFile("train-labels-idx1-ubyte.gz", _ZALANDO + "train-labels-idx1-ubyte.gz",
                           "25c81989df183df01b3e8a0aad5dffbe"),
                RemoteFile("t10k-images-idx3-ubyte.gz", _ZALANDO + "t10k-images-idx3-ubyte.gz",
                           "bef4ecab320f06d8554ea6380940ec79"),
                RemoteFile("t10k-labels-idx1-ubyte.gz", _ZALANDO + "t10k-labels-idx1-ubyte.gz",
                           "bb300cfdad3c16e7a12a480ee83cd310"))),
    DataSet("emnist", "EMNIST (NIST special database 19): 814,255 characters 28x28, 62 classes (byclass)",
            "none: partitioned by the experiment", (
                RemoteFile("gzip.zip", "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip",
                           "58c8d27c78d21e728a6bc7b3cc06412e", size=561_753_746),)),
    DataSet("cifar10", "CIFAR-10: 50,000 + 10,000 colour images 32x32, 10 classes (binary version)",
            "none: partitioned by the experiment", (
                RemoteFile("cifar-10-binary.tar.gz", _TORONTO + "cifar-10-binary.tar.gz",
                           "c32a1d4ab5d03f1284b67883e8d87530", size=170_052_171),)),
    DataSet("cifar100", "CIFAR-100: 50,000 + 10,000 colour images 32x32, 100 classes in 20 superclasses "
                        "(binary version)",
            "none: partitioned by the experiment (Pachinko allocation over the superclasses)", (
                RemoteFile("cifar-100-binary.tar.gz", _TORONTO + "cifar-100-binary.tar.gz",
                           "03b5dce01913d631647c71ecec9e9cb8", size=168_513_733),)),
    DataSet("femnist", "Federated EMNIST (LEAF): 3,400 writers, 62 classes, TFF's HDF5 files",
            "natural: one client per writer", (
                RemoteFile("fed_emnist.tar.bz2", _TFF + "fed_emnist.tar.bz2",
                           "fe1ed5a502cea3a952eb105920bff8cffb32836b5173cb18a57a32c3606f3ea0", "sha256"),)),
    DataSet("shakespeare", "Shakespeare (LEAF): lines of 715 speaking roles in the complete plays, TFF's HDF5 "
                           "files", "natural: one client per speaking role", (
                RemoteFile("shakespeare.tar.bz2", _TFF + "shakespeare.tar.bz2",
                           "0285be9906cb5f268092eee4edeeacfc2af4574f2941f7cc2f08a321d7f5c707", "sha256"),)),
)}


class DownloadError(RuntimeError):
    """A download that could not finish: offline, an HTTP error, or a file that failed its checksum."""


def fetch_command(*names: str) -> str:
    """The command that fetches ``names``: ``python -m fedlab data fetch NAME...``."""
    return "python -m fedlab data fetch " + " ".join(names)


def _part(dest: Path) -> Path:
    return dest.with_name(dest.name + ".part")


def _open(url: str, start: int):
    """The server's response for ``url`` from byte ``start`` on, or ``None`` when ``start`` is already the end."""
    headers = {"User-Agent": "fedlab-data-fetch"}
    if start:
        headers["Range"] = f"bytes={start}-"
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT)
    except urllib.error.HTTPError as err:
        if err.code == 416 and start:            # nothing left to send: the partial file is complete
            return None
        raise DownloadError(f"{url}: the server answered HTTP {err.code} ({err.reason}).") from err
    except (urllib.error.URLError, socket.timeout, ConnectionError) as err:
        reason = getattr(err, "reason", err)
        raise DownloadError(f"could not reach {url} ({reason}): this machine looks offline. Fetch on a connected "
                            f"machine and copy the folder, or put the file there by hand.") from err


def _receive(response, part: Path, start: int, name: str, progress: bool) -> None:
    """Append the response body to ``part`` (restarting it when the server ignored the range request)."""
    resumed = start and response.status == 206
    length = int(response.headers.get("Content-Length") or 0)
    with response, part.open("ab" if resumed else "wb") as out, \
            tqdm(total=(start if resumed else 0) + length or None, initial=start if resumed else 0, unit="B",
                 unit_scale=True, desc=name, disable=not progress) as bar:
        try:
            for block in iter(lambda: response.read(CHUNK), b""):
                out.write(block)
                bar.update(len(block))
        except (socket.timeout, ConnectionError, OSError) as err:
            raise DownloadError(f"the download of {name} was cut off after {part.stat().st_size} bytes ({err}); "
                                f"run the command again to continue from there.") from err


def download(remote: RemoteFile, folder: str | os.PathLike, *, progress: bool = True) -> Path:
    """Download ``remote`` into ``folder`` (resuming a ``.part`` file), verify its digest, move it into place.

    Returns the file's path. Raises :class:`DownloadError` when offline, on an HTTP error, or when the digest
    differs from the published one (the file is then deleted).
    """
    if not isinstance(remote, RemoteFile):
        raise TypeError(f"remote must be a RemoteFile, got {type(remote).__name__}.")
    progress = check_bool("progress", progress)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    dest, part = folder / remote.name, _part(folder / remote.name)
    start = part.stat().st_size if part.exists() else 0
    response = _open(remote.url, start)
    if response is not None:
        _receive(response, part, start, remote.name, progress)
    actual = file_hash(part, remote.algorithm)
    if actual != remote.digest:
        part.unlink()
        raise DownloadError(f"{remote.name}: {remote.algorithm} {actual} differs from the published {remote.digest}; "
                            f"the file was corrupt or is not the published one and was deleted. Run the command again.")
    os.replace(part, dest)
    return dest


def _verified(remote: RemoteFile, path: Path) -> bool:
    """Whether ``path`` holds the published file; a file that fails its digest is deleted (and ``False``)."""
    if not path.is_file():
        return False
    if file_hash(path, remote.algorithm) == remote.digest:
        return True
    path.unlink()
    return False


def fetch(names: Sequence[str], *, progress: bool = True, catalog: Mapping[str, DataSet] | None = None,
          echo=print) -> dict[str, list[Path]]:
    """Fetch the data sets ``names`` (keys of :data:`DATASETS`) into ``data_dir()``; files already present and
    whole are kept. Returns each data set's files."""
    catalog = DATASETS if catalog is None else catalog
    progress = check_bool("progress", progress)
    check_sequence("names", names)
    if isinstance(names, str) or not names:
        raise ValueError(f"names must be a non-empty list of data set names, got {names!r}.")
    for name in names:
        folder = catalog[check_choice("names", name, catalog)].folder
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"names: the folder of {name}, {str(folder)!r}, is a file; remove it or point "
                             f"FEDLAB_DATA at another folder.")
    out = {}
    for name in names:
        dataset = catalog[name]
        paths = []
        for remote in dataset.files:
            path = dataset.folder / remote.name
            existed = path.exists()
            if _verified(remote, path):
                echo(f"{name}: {remote.name} is present and verified")
            else:
                if existed:
                    echo(f"{name}: {remote.name} failed its {remote.algorithm} check and was deleted; "
                         "downloading again")
                download(remote, dataset.folder, progress=progress)
                echo(f"{name}: {remote.name} downloaded and verified ({remote.algorithm})")
            paths.append(path)
        out[name] = paths
    return out


def is_present(name: str, *, catalog: Mapping[str, DataSet] | None = None) -> bool:
    """Whether every file of data set ``name`` is in place (by name: :func:`fetch` verifies on the way in)."""
    catalog = DATASETS if catalog is None else catalog
    dataset = catalog[check_choice("name", name, catalog)]
    return all((dataset.folder / f.name).is_file() for f in dataset.files)


def dataset_status(*, catalog: Mapping[str, DataSet] | None = None) -> list[dict]:
    """One row per data set: name, status (present / partial download / absent), bytes on disk, folder, what it is."""
    catalog = DATASETS if catalog is None else catalog
    rows = []
    for dataset in catalog.values():
        files = [dataset.folder / f.name for f in dataset.files]
        parts = [_part(p) for p in files]
        on_disk = sum(p.stat().st_size for p in files + parts if p.is_file())
        status = ("present" if all(p.is_file() for p in files) else
                  "partial download" if any(p.is_file() for p in parts + files) else "absent")
        rows.append({"name": dataset.name, "status": status, "bytes": on_disk,
                     "published_bytes": sum(f.size for f in dataset.files), "folder": str(dataset.folder),
                     "clients": dataset.clients, "description": dataset.description})
    return rows


def require(*names: str, catalog: Mapping[str, DataSet] | None = None) -> None:
    """Raise ``FileNotFoundError`` with the exact fetch command when a data set of ``names`` is absent (the
    notebooks' paper mode calls it first, so it stops at once)."""
    if not names:
        raise ValueError("names: give at least one data set name.")
    for name in names:
        check_choice("names", name, DATASETS if catalog is None else catalog)
    missing = [n for n in names if not is_present(n, catalog=catalog)]
    if missing:
        raise FileNotFoundError(f"data absent: {', '.join(missing)} (looked in {data_dir()}). Fetch it once with:  "
                                f"{fetch_command(*missing)}  (set FEDLAB_DATA to use another folder).")
