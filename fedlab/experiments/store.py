"""A results folder with one JSON file per run, keyed by a stable hash of the run's config.

A run is identified by ``(fn, config, seed)``: the function's qualified name, the config dict and the
seed. Its key is the first 16 hex digits of the sha256 of the canonical JSON of these three (sorted
keys, no whitespace), so it does not depend on the order of the dict's keys. Each record is written
atomically (temporary file in the same folder, ``fsync``, ``os.replace``), so a crash never leaves a
half-written record, and carries the sha256 ``checksum`` of its content; a corrupted file (its checksum
missing or not matching) is reported with a warning and treated as missing, so a sweep computes the run
again. Records are standard JSON: non-finite floats are written as ``{"__float__": "nan" | "inf" | "-inf"}``
and read back as floats. Files are readable by the group (0644).

Concurrent sweeps on one store **claim** a run before computing it: an exclusive ``flock`` on
``.<key>.claim``, held by the process that computes the run until its record is saved. The kernel
releases the lock when that process dies, so a claim is never stale; another sweep that finds a run
claimed waits for its record instead of computing it twice (POSIX only; elsewhere runs are not claimed).
Temporary files left by a killed writer are removed when a store is opened.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import socket
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Callable

import numpy as np

try:  # POSIX advisory locks for run claims
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["ResultStore", "RunClaim", "to_jsonable", "config_key", "function_name"]

FORMAT = "fedlab.experiments/2"
KEY_LENGTH = 16
_REQUIRED = ("format", "key", "fn", "config", "seed", "result", "meta", "checksum")
_HOST = socket.gethostname().split(".")[0].replace(".", "_") or "host"
_STALE_TMP_S = 3600.0  # a temporary file of another host is removed after this age


def to_jsonable(obj: Any, name: str = "value") -> Any:
    """Convert ``obj`` to plain JSON types (dict, list, str, int, float, bool, None).

    numpy arrays become nested lists, numpy scalars Python numbers, tuples lists, path-like objects
    strings and torch tensors (anything with ``detach().cpu().numpy()``) lists.

    Parameters
    ----------
    obj : object
        The value to convert.
    name : str
        How to call ``obj`` in error messages, e.g. ``"result"``; nested keys are appended
        (``result['curve'][3]``).

    Returns
    -------
    object
        A value that ``json.dumps`` accepts and that ``json.loads`` gives back unchanged.

    Raises
    ------
    TypeError
        Naming the offending key when a value (or a dict key) has no JSON equivalent.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string (how to call obj in errors), got {type(name).__name__}.")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, np.generic):
        if isinstance(obj, (np.bool_, np.integer, np.floating, np.str_)):
            return obj.item()
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "biuf":
            return obj.tolist()
        if obj.dtype.kind in "OU":
            return [to_jsonable(v, f"{name}[{i}]") for i, v in enumerate(obj.tolist())]
    elif isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"{name} has a key {k!r} of type {type(k).__name__}; JSON objects need "
                                "string keys.")
            out[str(k)] = to_jsonable(v, f"{name}[{k!r}]")
        return out
    elif isinstance(obj, (list, tuple)):
        return [to_jsonable(v, f"{name}[{i}]") for i, v in enumerate(obj)]
    elif isinstance(obj, os.PathLike):
        return os.fspath(obj)
    elif all(hasattr(obj, a) for a in ("detach", "cpu", "numpy")):  # torch.Tensor, without importing torch
        return to_jsonable(obj.detach().cpu().numpy(), name)
    raise TypeError(f"{name} is a {type(obj).__module__}.{type(obj).__qualname__}, which is not "
                    "JSON-serialisable; use numbers, strings, lists, dicts or numpy arrays "
                    "(save large arrays to an .npz file and store its path).")


def function_name(fn: Callable | str | None) -> str | None:
    """Qualified name ``module.qualname`` of a function (a string is returned as is)."""
    if fn is None or isinstance(fn, str):
        return fn
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if module is None or qualname is None:
        raise TypeError(f"fn must be a function or its qualified name, got {type(fn).__name__}.")
    return f"{module}.{qualname}"


def _check_seed(seed: Any) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an integer or None, got {seed!r} of type {type(seed).__name__}.")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed}.")
    return int(seed)


def _identity(config: Mapping, seed: Any, fn: Callable | str | None) -> dict:
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a dict, got {type(config).__name__}.")
    return {"fn": function_name(fn), "config": to_jsonable(config, "config"), "seed": _check_seed(seed)}


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _encode_floats(obj: Any) -> Any:
    """Replace non-finite floats by ``{"__float__": "nan" | "inf" | "-inf"}`` (standard JSON has none)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return {"__float__": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
    if isinstance(obj, dict):
        return {k: _encode_floats(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_encode_floats(v) for v in obj]
    return obj


def _decode_floats(obj: Any) -> Any:
    """Inverse of :func:`_encode_floats`."""
    if isinstance(obj, dict):
        if obj.keys() == {"__float__"}:
            return float(obj["__float__"])
        return {k: _decode_floats(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode_floats(v) for v in obj]
    return obj


def _checksum(record: Mapping) -> str:
    """sha256 of the canonical JSON of an encoded record without its ``checksum`` field."""
    body = {k: v for k, v in record.items() if k != "checksum"}
    return hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def config_key(config: Mapping, seed: int | None = None, fn: Callable | str | None = None) -> str:
    """Stable short hash of a run: sha256 of the canonical JSON of ``{"fn", "config", "seed"}``.

    Parameters
    ----------
    config : dict
        The run's parameters (JSON-serialisable after :func:`to_jsonable`).
    seed : int, optional
        The run's seed.
    fn : callable or str, optional
        The run's function or its qualified name ``module.qualname``.

    Returns
    -------
    str
        16 hex digits, independent of the order of the keys of ``config``.
    """
    text = _canonical(_encode_floats(_identity(config, seed, fn)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_LENGTH]


def _fedlab_version() -> str:
    try:
        import fedlab
        return str(getattr(fedlab, "__version__", "unknown"))
    except Exception:  # pragma: no cover - fedlab always importable here
        return "unknown"


class ResultStore:
    """A folder of run records, one ``<key>.json`` file per ``(fn, config, seed)``.

    Parameters
    ----------
    path : str or os.PathLike
        The folder (created if missing).

    Examples
    --------
    >>> store = ResultStore("results/ch2")                      # doctest: +SKIP
    >>> store.save({"lr": 0.1}, {"acc": 0.9}, seed=0, fn=train)  # doctest: +SKIP
    >>> store.load({"lr": 0.1}, seed=0, fn=train)["result"]      # doctest: +SKIP
    {'acc': 0.9}
    """

    def __init__(self, path: str | os.PathLike) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike folder, got {type(path).__name__}.")
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"path must be a folder, got the file {str(self.path)!r}.")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OSError(err.errno, f"cannot create the result store {str(self.path)!r}: {err.strerror}") from err
        self._warned: set[str] = set()
        self.remove_stale_temporary_files()

    def remove_stale_temporary_files(self) -> list[Path]:
        """Delete temporary files left by killed writers (this host: writer gone; other hosts: older than 1 h)."""
        removed = []
        for tmp in self.path.glob(".*.tmp"):
            parts = tmp.name.split(".")  # "", key, host, pid, random, "tmp"
            try:
                host, pid = parts[2], int(parts[3])
                stale = (not _pid_alive(pid)) if host == _HOST else time.time() - tmp.stat().st_mtime > _STALE_TMP_S
            except (IndexError, ValueError, OSError):
                stale = False
            if stale:
                with contextlib.suppress(OSError):
                    tmp.unlink()
                    removed.append(tmp)
        return removed

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"

    def key(self, config: Mapping, seed: int | None = None, fn: Callable | str | None = None) -> str:
        """Key of a run, see :func:`config_key`."""
        return config_key(config, seed, fn)

    def _file(self, key: str) -> Path:
        return self.path / f"{key}.json"

    def _read(self, key: str) -> dict | None:
        """The valid record stored under ``key``, or None (with a warning when the file is corrupted)."""
        file = self._file(key)
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise ValueError(f"the result record {str(file)!r} is a folder, not a file; remove it so that the run "
                             "can be stored.") from None
        try:
            record = json.loads(text)
            if not isinstance(record, dict):
                raise ValueError(f"a record is a JSON object, got {type(record).__name__}")
            missing = [k for k in _REQUIRED if k not in record]
            if missing:
                raise ValueError(f"missing fields: {', '.join(missing)}")
            if record["checksum"] != _checksum(record):
                raise ValueError("the checksum does not match the content")
            record = _decode_floats(record)
            if record["key"] != key or config_key(record["config"], record["seed"], record["fn"]) != key:
                raise ValueError("the key does not match the stored config")
        except (ValueError, TypeError) as err:
            if str(file) not in self._warned:
                self._warned.add(str(file))
                warnings.warn(f"ignoring corrupted result file {str(file)!r} ({err}); the run is treated "
                              "as missing and will be overwritten when re-run.", RuntimeWarning, stacklevel=3)
            return None
        return record

    def has(self, config: Mapping, seed: int | None = None, fn: Callable | str | None = None) -> bool:
        """Whether a valid record of the run is stored."""
        return self._read(self.key(config, seed, fn)) is not None

    def load(self, config: Mapping, seed: int | None = None, fn: Callable | str | None = None) -> dict:
        """The stored record ``{"key", "fn", "config", "seed", "result", "meta", "format"}`` of a run.

        Raises
        ------
        KeyError
            When the run is not stored (or its file is corrupted).
        """
        key = self.key(config, seed, fn)
        record = self._read(key)
        if record is None:
            raise KeyError(f"no result stored for key {key} (fn={function_name(fn)!r}, seed={seed!r}, "
                           f"config={dict(config)!r}) in {str(self.path)!r}.")
        return record

    def save(self, config: Mapping, result: Any, meta: Mapping | None = None, *, seed: int | None = None,
             fn: Callable | str | None = None) -> str:
        """Write the record of a run atomically and return its key.

        Parameters
        ----------
        config : dict
            The run's parameters.
        result : object
            JSON-serialisable result (numpy arrays and scalars are converted by :func:`to_jsonable`).
        meta : dict, optional
            Extra information, e.g. ``wall_time_s``, ``started_at``, ``finished_at``;
            ``fedlab_version`` is added when missing.
        seed : int, optional
        fn : callable or str, optional

        Returns
        -------
        str
            The run's key.
        """
        identity = _identity(config, seed, fn)
        key = config_key(identity["config"], identity["seed"], identity["fn"])
        meta = to_jsonable(dict(meta or {}), "meta")
        meta.setdefault("fedlab_version", _fedlab_version())
        record = _encode_floats({"format": FORMAT, "key": key, **identity, "result": to_jsonable(result, "result"),
                                 "meta": meta})
        record["checksum"] = _checksum(record)
        self._write_atomic(key, json.dumps(record, indent=1, sort_keys=True, allow_nan=False))
        return key

    def _write_atomic(self, key: str, text: str) -> None:
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path, prefix=f".{key}.{_HOST}.{os.getpid()}.", suffix=".tmp")
        except OSError as err:
            raise self._write_error(err) from err
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, self._file(key))
        except BaseException as err:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(err, OSError):
                raise self._write_error(err) from err
            raise
        self._warned.discard(str(self._file(key)))
        try:  # persist the rename itself (best effort: not supported on every platform)
            dir_fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        finally:
            os.close(dir_fd)

    def _write_error(self, err: OSError) -> OSError:
        """The OS error of a failed write, naming the store (full disk, read-only folder, ...)."""
        hint = {errno.ENOSPC: " (the disk is full)", errno.EROFS: " (read-only file system)",
                errno.EACCES: " (permission denied)"}.get(err.errno, "")
        return OSError(err.errno, f"cannot write a record to the result store {str(self.path)!r}{hint}: "
                                  f"{err.strerror or err}")

    # -------------------------------------------------------------------------------- claims

    def _claim_file(self, key: str) -> Path:
        return self.path / f".{key}.claim"

    def claim(self, key: str) -> "RunClaim | None":
        """An exclusive claim on computing run ``key``, or None when another live process holds it.

        The claim is an ``flock`` that the kernel releases when the holder dies, so it is never stale.
        Without POSIX locks (Windows) every claim succeeds.
        """
        if fcntl is None:  # pragma: no cover
            return RunClaim(self, key, None)
        fd = os.open(self._claim_file(key), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"host": _HOST, "pid": os.getpid(), "since": time.time()}).encode())
        return RunClaim(self, key, fd)

    def keys(self) -> list[str]:
        """Sorted keys of the record files (hidden temporary files are ignored; not validated)."""
        return sorted(p.stem for p in self.path.glob("*.json") if not p.name.startswith("."))

    def records(self) -> Iterator[dict]:
        """Iterate over the valid stored records in key order (corrupted files are skipped with a warning)."""
        for key in self.keys():
            record = self._read(key)
            if record is not None:
                yield record

    def __iter__(self) -> Iterator[dict]:
        return self.records()

    def __len__(self) -> int:
        return sum(1 for _ in self.records())


class RunClaim:
    """A held claim on one run of a :class:`ResultStore` (see :meth:`ResultStore.claim`)."""

    def __init__(self, store: ResultStore, key: str, fd: int | None) -> None:
        self.store, self.key, self._fd = store, key, fd

    def release(self, *, done: bool) -> None:
        """Give the claim up; ``done`` (the record is saved) also removes the claim file."""
        if self._fd is None:
            return
        if done:
            with contextlib.suppress(OSError):
                self.store._claim_file(self.key).unlink()
        os.close(self._fd)  # closing the descriptor releases the lock
        self._fd = None
