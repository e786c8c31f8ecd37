"""Argument checks shared by the public functions: each names the argument, the expectation and the value."""
from __future__ import annotations

import numbers
import os
from pathlib import Path
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

__all__ = [
    "all_finite",
    "check_int",
    "check_real",
    "check_simplex",
    "check_choice",
    "check_array",
    "check_bool",
    "check_type",
    "check_callable",
    "check_path",
    "check_folder",
    "check_sequence",
]


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int, or raise naming ``name`` when it is not an integer in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_fmt(value)} of type {type(value).__name__}.")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be an integer in [{low if low is not None else '-inf'}, "
                         f"{high if high is not None else 'inf'}], got {value}.")
    return int(value)


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None,
               low_open: bool = False, high_open: bool = False) -> float:
    """Return ``value`` as a finite float in the given interval, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {_fmt(value)} of type {type(value).__name__}.")
    value = float(value)
    lo_ok = low is None or (value > low if low_open else value >= low)
    hi_ok = high is None or (value < high if high_open else value <= high)
    if not np.isfinite(value) or not lo_ok or not hi_ok:
        lb = "(" if low_open else "["
        rb = ")" if high_open else "]"
        raise ValueError(f"{name} must be a finite number in {lb}{low if low is not None else '-inf'}, "
                         f"{high if high is not None else 'inf'}{rb}, got {value}.")
    return value


def check_array(name: str, value: Any, *, ndim: int | None = None, shape: tuple | None = None,
                nonnegative: bool = False, finite: bool = True, dtype=float) -> np.ndarray:
    """Return ``value`` as a numpy array with the given ndim/shape (``None`` entries are free)."""
    if isinstance(value, (str, bytes)) or (isinstance(value, np.ndarray) and value.dtype.kind in "US"):
        raise TypeError(f"{name} must be array-like of numbers, got text {_fmt(value)}.")
    if dtype is not None and np.issubdtype(np.dtype(dtype), np.integer):
        _check_integral(name, value)
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be array-like of numbers, got {_fmt(value)}.") from err
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}.")
    if shape is not None and (arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape))):
        expected = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name} must have shape {expected}, got {arr.shape}.")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values.")
    if nonnegative and np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative, got minimum {arr.min()}.")
    return arr


def _check_integral(name: str, value: Any) -> None:
    """Raise naming ``name`` when ``value`` holds numbers that are not integers (NaN, 1.5): an integer dtype would
    truncate them silently."""
    try:
        raw = value if isinstance(value, np.ndarray) else np.asarray(value)
    except (TypeError, ValueError):
        return  # the conversion itself fails and is reported by the caller
    if raw.dtype.kind == "f" and (not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw))):
        bad = raw[~np.isfinite(raw) | (raw != np.round(raw))].ravel()[:5]
        raise ValueError(f"{name} must hold integers, got {bad.tolist()}.")


def check_simplex(name: str, value: Any, *, size: int | None = None, ndim: int | tuple | None = None,
                  shape: tuple | None = None, atol: float = 1e-6) -> np.ndarray:
    """Return ``value`` as an array of probability vectors along its last axis, or raise naming ``name``.

    Entries must be finite and non-negative and sum to 1 (within ``atol``) along the last axis, which has
    ``size`` entries when given; ``ndim`` (an int or a tuple of allowed values) fixes the number of dimensions and
    ``shape`` the whole shape (``None`` entries are free).
    """
    arr = check_array(name, value, shape=shape)
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if arr.ndim == 0 or (allowed is not None and arr.ndim not in allowed):
        raise ValueError(f"{name} must be probability vectors with {' or '.join(map(str, allowed or ('>= 1',)))} "
                         f"dimension(s), got shape {arr.shape}.")
    if size is not None and arr.shape[-1] != size:
        raise ValueError(f"{name} must have {size} entries on its last axis, got shape {arr.shape}.")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative (lie on the simplex), found the entry {arr.min():.4g}.")
    sums = np.atleast_1d(arr.sum(-1))
    bad = np.abs(sums - 1.0) > atol
    if bad.any():
        raise ValueError(f"{name} must sum to 1 along its last axis (lie on the simplex), got sums "
                         f"{np.round(sums[bad][:5], 6).tolist()}.")
    return arr


def check_choice(name: str, value: Any, choices) -> Any:
    """Return ``value`` when it is one of ``choices``, else raise a ValueError listing them."""
    try:
        known = value in choices
    except TypeError:  # an unhashable value looked up in a dict or set
        known = False
    if not known:
        raise ValueError(f"{name} must be one of {sorted(map(str, choices))}, got {_fmt(value)}.")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Return ``value`` as a bool when it is one (Python or numpy), else raise a TypeError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {_fmt(value)} of type {type(value).__name__}.")
    return bool(value)


def check_type(name: str, value: Any, types: type | tuple[type, ...], *, optional: bool = False) -> Any:
    """Return ``value`` when it is an instance of ``types`` (or None with ``optional``), else raise a TypeError
    naming ``name``, the expected types and the type received."""
    if (optional and value is None) or isinstance(value, types):
        return value
    expected = " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
    raise TypeError(f"{name} must be a {expected}{' or None' if optional else ''}, got {_fmt(value)} of type "
                    f"{type(value).__name__}.")


def check_callable(name: str, value: Any, *, optional: bool = False) -> Any:
    """Return ``value`` when it is callable (or None with ``optional``), else raise a TypeError naming ``name``."""
    if (optional and value is None) or callable(value):
        return value
    raise TypeError(f"{name} must be callable{' or None' if optional else ''}, got {_fmt(value)} of type "
                    f"{type(value).__name__}.")


def check_path(name: str, value: Any) -> Path:
    """Return ``value`` as a ``Path`` when it is a string or path-like object, else raise a TypeError naming
    ``name``."""
    if isinstance(value, bool) or not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a file path (str or os.PathLike), got {_fmt(value)} of type "
                        f"{type(value).__name__}.")
    return Path(value)


def check_folder(name: str, value: Any) -> Path:
    """Return ``value`` as a ``Path`` that is, or can become, a folder: neither it nor a parent is a file; else raise
    a ValueError naming ``name``."""
    path = check_path(name, value).expanduser()
    blocker = next((p for p in (path, *path.parents) if p.exists()), path)
    if blocker.exists() and not blocker.is_dir():
        where = "a file" if blocker == path else f"inside the file {str(blocker)!r}"
        raise ValueError(f"{name} must name a folder, got {str(path)!r}, which is {where}.")
    return path


def check_sequence(name: str, value: Any, *, size: int | None = None, nonempty: bool = False) -> Sequence:
    """Return ``value`` when it is a list, tuple or array (not a string) with ``size`` entries (when given; at least
    one with ``nonempty``), else raise naming ``name``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence (list, tuple or array), got {_fmt(value)} of type "
                        f"{type(value).__name__}.")
    if size is not None and len(value) != size:
        raise ValueError(f"{name} must have {size} entries, got {len(value)}.")
    if nonempty and len(value) == 0:
        raise ValueError(f"{name} must not be empty.")
    return value


def all_finite(t: torch.Tensor) -> bool:
    """Whether a float tensor holds no NaN or infinity: one reduction pass, no temporary as large as ``t``
    (``torch.isfinite(t).all()`` allocates a boolean copy, 30 times slower on an MNIST-sized tensor)."""
    if t.numel() == 0:
        return True
    lo, hi = torch.aminmax(t)
    return bool(torch.isfinite(lo) & torch.isfinite(hi))
