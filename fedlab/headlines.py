r"""Headline numbers: a notebook's seed-deterministic results, each with the tolerance its own noise justifies.

Every notebook ends with one cell that starts with :data:`MARK` and calls :func:`show_headlines` with a list of
:class:`Headline`. The cell shows the numbers rounded (``name: value`` lines) and attaches them at full precision,
with their tolerances, as JSON (:data:`MIME_TYPE`). That output is the only one stored in the notebook; the test
command runs the notebook again and :func:`compare_headlines` checks every fresh number against the stored one.

A tolerance says how far a number may move when nothing but the floating-point arithmetic changes (another CPU's
vector kernels, another summation order) and is declared with the number, with its reason: zero for a count, a
flag or a decision; a relative ``1e-9`` for a closed form; one test sample for an accuracy decided by an argmax;
measured spreads for quantities that training amplifies. A change beyond the tolerance fails, naming the number,
both values and the tolerance.

Examples
--------
>>> from dataclasses import replace
>>> h = Headline("accuracy", 0.9449, tolerance=1 / 1000, why="one test sample of 1,000")
>>> h.text()
'accuracy: 0.945'
>>> compare_headlines([h.to_dict()], [replace(h, value=0.9441).to_dict()])
[]
>>> compare_headlines([h.to_dict()], [replace(h, value=0.9401).to_dict()])[0]
'accuracy: measured 0.9401, stored 0.9449: differs by 0.0048, beyond the tolerance 0.001 (one test sample of 1,000)'
"""
from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Sequence, Union

import numpy as np

from fedlab._validation import check_bool, check_int, check_real, check_type

__all__ = ["MARK", "MIME_TYPE", "Headline", "exact", "computed", "accuracy", "last_digit", "percentile_flip",
           "show_headlines", "compare_headlines"]

MARK = "# NBVAL_CHECK_OUTPUT"
"""The first line of a notebook's headline cell, the one cell stored with its output (the design card's marker)."""
MIME_TYPE = "application/vnd.fedlab.headlines+json"

Value = Union[float, int, bool, str, tuple]


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _items(value: Value) -> tuple:
    """The entries of a sequence headline, or the value alone."""
    return value if isinstance(value, tuple) else (value,)


def _plain(value: Any) -> Value:
    """``value`` as a JSON-ready Python value: numpy scalars to ``int``/``float``/``bool``, sequences to tuples."""
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str)):
        return tuple(_plain(v) for v in (value.tolist() if hasattr(value, "tolist") else value))
    return value


@dataclass(frozen=True)
class Headline:
    """One headline number and how far it may move on float noise alone.

    Parameters
    ----------
    name : str
        An identifier-like label, unique in its notebook (``"knnper_average"``).
    value : float, int, bool, str or sequence of numbers
        The measured value (numpy scalars and arrays are converted). Flags and texts compare exactly; numbers and
        sequences of numbers element by element.
    tolerance : float
        Largest admissible difference ``|fresh - stored|`` (absolute, or relative to ``|stored|`` with
        ``relative``). 0 means exact.
    relative : bool
    digits : int or None
        Decimals shown (``None``: the shortest form, ``:g``); the comparison uses the full value.
    why : str
        What the tolerance stands for; required when it is not 0.
    """

    name: str
    value: Value
    tolerance: float = 0.0
    relative: bool = False
    digits: int | None = 3
    why: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or ":" in self.name or "\n" in self.name:
            raise ValueError(f"name must be a non-empty one-line label without ':', got {self.name!r}.")
        object.__setattr__(self, "value", _plain(self.value))
        items = _items(self.value)
        if isinstance(self.value, tuple) and not all(_is_number(v) for v in items):
            raise TypeError(f"value of {self.name!r}: a sequence must hold numbers only, got {self.value!r}.")
        if not all(isinstance(v, (bool, str)) or (_is_number(v) and math.isfinite(v)) for v in items):
            raise ValueError(f"value of {self.name!r} must be a finite number, a flag, a text or a sequence of "
                             f"finite numbers, got {self.value!r}.")
        check_real("tolerance", self.tolerance, low=0)
        check_bool("relative", self.relative)
        if self.digits is not None:
            check_int("digits", self.digits, low=0)
        check_type("why", self.why, str)
        if self.tolerance and not self.why.strip():
            raise ValueError(f"why must say what the tolerance {self.tolerance:g} of {self.name!r} stands for.")
        if self.tolerance and not all(_is_number(v) for v in items):
            raise ValueError(f"tolerance of {self.name!r} must be 0: {self.value!r} is compared exactly.")

    def _show(self, value: Any) -> str:
        if not isinstance(value, float):
            return str(value)
        return f"{value:g}" if self.digits is None else f"{value:.{self.digits}f}"

    def text(self) -> str:
        """``name: value`` with the value rounded to ``digits`` (sequences comma-separated)."""
        return f"{self.name}: {', '.join(self._show(v) for v in _items(self.value))}"

    def to_dict(self) -> dict:
        """JSON-ready fields (sequences as lists)."""
        out = asdict(self)
        if isinstance(self.value, tuple):
            out["value"] = list(self.value)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Headline":
        """Inverse of :meth:`to_dict`."""
        return cls(**d)

    def mismatch(self, stored: "Headline") -> str | None:
        """``None`` when this (fresh) value lies within this headline's tolerance of ``stored``, else why not."""
        fresh_items, stored_items = _items(self.value), _items(stored.value)
        reason = f" ({self.why})" if self.why else ""
        if len(fresh_items) != len(stored_items) or not all(
                _is_number(a) == _is_number(b) for a, b in zip(fresh_items, stored_items)):
            return f"{self.name}: measured {self.value!r}, stored {stored.value!r}: not comparable"
        gaps = [abs(a - b) - self.tolerance * (abs(b) if self.relative else 1.0) if _is_number(a) else
                (0.0 if a == b else math.inf) for a, b in zip(fresh_items, stored_items)]
        if max(gaps) <= 1e-15:
            return None
        if not self.tolerance:
            return f"{self.name}: measured {self.value!r}, stored {stored.value!r}: must be equal"
        diff = max(abs(a - b) for a, b in zip(fresh_items, stored_items))
        tol = f"{self.tolerance:g}" + (" relative" if self.relative else "")
        return (f"{self.name}: measured {self.value!r}, stored {stored.value!r}: differs by {diff:.2g}, beyond the "
                f"tolerance {tol}{reason}")


def exact(name: str, value: Value, *, digits: int | None = None) -> Headline:
    """A flag, a count, a text or a decision (a chosen grid point): compared exactly."""
    return Headline(name, value, digits=digits)


def computed(name: str, value: Value, *, digits: int | None = 3) -> Headline:
    """A closed form or a deterministic algorithm in float64: within a relative ``1e-9`` (rounding only)."""
    return Headline(name, value, tolerance=1e-9, relative=True, digits=digits,
                    why="float64 arithmetic of a closed form or a deterministic algorithm: rounding only")


def accuracy(name: str, value: Value, n_test: int, *, samples: int = 1, unit: float = 1.0,
             digits: int | None = 3) -> Headline:
    r"""An accuracy (or a difference of accuracies) of trained models decided by an argmax over ``n_test`` samples:
    within ``samples`` test samples, :math:`\text{samples} \cdot \text{unit} / n_{test}`.

    Float32 training follows a slightly different path on another CPU's kernels, so a sample on the decision
    boundary may change side; ``unit`` is 100 for percent; ``samples`` is 2 for a difference of two accuracies.
    For a mean over runs, ``n_test`` is one run's test set (each run may flip its own sample).
    """
    n_test = check_int("n_test", n_test, low=1)
    samples = check_int("samples", samples, low=1)
    unit = check_real("unit", unit, low=0, low_open=True)
    return Headline(name, value, tolerance=samples * unit / n_test, digits=digits,
                    why=f"{samples} test sample{'s' if samples > 1 else ''} of {n_test:,}")


def last_digit(name: str, value: Value, *, digits: int, source: str) -> Headline:
    """A number that an iterative or sampled float computation produces (``source`` says which) and that moved by 0
    across four CPU dispatch settings (native, portable, MKL's compatible and AVX2 paths): within one unit of its
    last printed digit, :math:`10^{-digits}`."""
    digits = check_int("digits", digits, low=0)
    check_type("source", source, str)
    return Headline(name, value, tolerance=10.0 ** -digits, digits=digits,
                    why=f"{source}: unchanged across four CPU dispatch settings; one unit of the last printed digit")


def percentile_flip(client_accuracies, n_test, q: float = 10.0) -> float:
    r"""How far the ``q``-th percentile of the clients' accuracies moves at most when one test sample changes side
    in one client (client :math:`t`'s accuracy moves by :math:`\pm 1/n_t`): the tolerance of a bottom decile.

    Parameters
    ----------
    client_accuracies : array-like (K,), NaN for a client without test data
    n_test : array-like of int (K,), the clients' test-set sizes
    q : float in [0, 100]
    """
    acc = np.asarray(client_accuracies, dtype=float)
    n = np.asarray(n_test)
    if acc.ndim != 1 or n.shape != acc.shape or n.dtype.kind not in "iu" or np.any(n < 0):
        raise ValueError(f"client_accuracies and n_test must be 1-d of the same length, n_test non-negative "
                         f"integers; got shapes {acc.shape} and {n.shape}, dtype {n.dtype}.")
    q = check_real("q", q, low=0, high=100)
    base = np.nanpercentile(acc, q)
    moves = [abs(np.nanpercentile(np.where(np.arange(len(acc)) == t, np.clip(acc[t] + d / n[t], 0, 1), acc), q)
                 - base) for t in np.flatnonzero(n) for d in (1, -1)]
    return float(max(moves, default=0.0))


def _check_headlines(headlines: Any) -> list[Headline]:
    if isinstance(headlines, (str, bytes)) or not isinstance(headlines, Iterable):
        raise TypeError(f"headlines must be an iterable of Headline objects, got {type(headlines).__name__}.")
    headlines = list(headlines)
    bad = sorted({type(h).__name__ for h in headlines if not isinstance(h, Headline)})
    if bad:
        raise TypeError(f"headlines must hold Headline objects only, got {bad}.")
    names = [h.name for h in headlines]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"headlines must have distinct names, repeated: {repeated}.")
    return headlines


def _records(name: str, records: Any) -> dict[str, Headline]:
    """``records`` (dicts of :meth:`Headline.to_dict`) as headlines by name, else an error naming the argument."""
    if isinstance(records, (str, bytes, dict)) or not isinstance(records, Iterable):
        raise TypeError(f"{name} must be a list of headline dicts, got {type(records).__name__}.")
    records = list(records)
    if not all(isinstance(r, dict) for r in records):
        raise TypeError(f"{name} must hold headline dicts (Headline.to_dict), got {records!r:.80}.")
    try:
        return {h.name: h for h in map(Headline.from_dict, records)}
    except TypeError as err:
        raise TypeError(f"{name} holds a record that is not a headline: {err}") from err


def show_headlines(headlines: Sequence[Headline]) -> None:
    """Display the headlines as ``name: value`` lines and attach them at full precision (:data:`MIME_TYPE`)."""
    from IPython.display import display

    headlines = _check_headlines(headlines)
    display({"text/plain": "\n".join(h.text() for h in headlines),
             MIME_TYPE: [h.to_dict() for h in headlines]}, raw=True)


def compare_headlines(stored: Sequence[dict], fresh: Sequence[dict]) -> list[str]:
    """Every difference between stored and fresh headlines (dicts of :meth:`Headline.to_dict`), one line each.

    A fresh number is checked with its own (current) tolerance; a name present on one side only is reported.
    The list is empty when every number agrees within its tolerance.
    """
    old, new = _records("stored", stored), _records("fresh", fresh)
    problems = [f"{name}: stored, but no longer measured" for name in old if name not in new]
    problems += [f"{name}: measured {new[name].value!r}, but not stored" for name in new if name not in old]
    return problems + [m for name in new if name in old for m in [new[name].mismatch(old[name])] if m]
