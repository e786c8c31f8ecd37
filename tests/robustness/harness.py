"""The robustness layer's machinery: argument kinds, the bad values each kind yields, and the rejection check.

A :class:`Case` is one public callable with a valid call: ``args`` maps every argument it passes to a
:class:`Kind` that holds a valid value and knows the bad values of that argument (NaN/inf, negative sizes, empty
clients, mismatched shapes, wrong types, ...). Parameters with defaults that a case does not list are inferred
from the default (an int default gets non-integers and a huge negative, a float default NaN and -inf, a string
default an unknown choice). :func:`expect_rejection` calls the callable with one argument replaced by a bad value
and asserts a ``ValueError``/``TypeError`` raised by a ``raise`` statement of fedlab (never one from inside
numpy/torch/cvxpy), whose message names the argument as an identifier; a call that returns, or runs longer than
:data:`TIME_LIMIT_S`, accepted the bad value. The layer checks itself: the valid call must succeed (so that a
rejection is caused by the argument replaced), and so must the calls with the edge values a case declares (the
smallest and largest valid values). Every call sees ``$FEDLAB_DATA`` with small files in the real data sets'
formats (:func:`world.data_folder`).
"""
from __future__ import annotations

import importlib
import inspect
import linecache
import math
import os
import pkgutil
import re
import signal
import warnings
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import strategies as st

import fedlab

FEDLAB_DIR = Path(fedlab.__file__).resolve().parent
TIME_LIMIT_S = 3.0
"""A call still running after this long accepted its bad input (validation happens before any work)."""
COUNTS: Counter = Counter()
"""Bad inputs tried, by module: the session prints them (tests/robustness/conftest.py)."""
NAN, INF = float("nan"), float("inf")
BAD_TEXT = "nope"
"""The wrong-type string: not a plausible argument name, so it cannot fake a message naming one."""
FREE_TEXT = {"title", "xlabel", "ylabel", "label", "name", "prefix", "key", "path", "chapter", "source",
             "statement", "why", "rule_text", "desc"}
"""String parameters that take any text (the automatic inference gives the other strings an unknown choice)."""


class Hung(BaseException):
    """A call ran past :data:`TIME_LIMIT_S` (a BaseException, so that no ``except Exception`` swallows it)."""


@contextmanager
def time_limit(seconds: float):
    def _raise(signum, frame):
        raise Hung()

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------------------------------------------ kinds


class fresh:
    """A valid value rebuilt for every call (for arguments a call may change, such as a stateful object)."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


class Kind:
    """An argument of a call: its valid value and the bad values the call must reject.

    ``also`` lists other argument names an error may name instead (the partner of a shape mismatch).
    """

    accept: tuple = (ValueError, TypeError)

    def __init__(self, valid: Any, *, also: tuple = (), extra: tuple = ()) -> None:
        self._valid, self.also, self.extra = valid, tuple(also), tuple(extra)

    def value(self) -> Any:
        return self._valid.factory() if isinstance(self._valid, fresh) else self._valid

    def canonical(self) -> list:
        """One bad value per failure mode of the kind."""
        return list(self.extra)

    def drawn(self) -> st.SearchStrategy:
        """Bad values drawn at random (by default: among the canonical ones)."""
        values = self.canonical()
        return st.sampled_from(values) if values else st.nothing()

    @property
    def testable(self) -> bool:
        return bool(self.canonical())

    def edges(self) -> list:
        """The valid values on the closed ends of the kind's range (the bad values are just beyond them)."""
        return []


class Fixed(Kind):
    """A valid value only (an argument without bad values of its own: an axis, a flag read elsewhere)."""

    def canonical(self) -> list:
        return []


class Real(Kind):
    """A real number in [low, high] (``*_open``: bound excluded); ``optional`` allows None, ``inf_ok`` +inf."""

    def __init__(self, valid: Any = 1.0, *, low=None, high=None, low_open=False, high_open=False,
                 optional=False, inf_ok=False, **kw) -> None:
        super().__init__(valid, **kw)
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open
        self.optional, self.inf_ok = optional, inf_ok

    def canonical(self) -> list:
        bad = [NAN, -INF, BAD_TEXT, [0.5]] + ([] if self.optional else [None]) + ([] if self.inf_ok else [INF])
        if self.low is not None:
            bad += [self.low - 1.0] + ([self.low] if self.low_open else [])
        if self.high is not None and math.isfinite(self.high):
            bad += [self.high + 1.0] + ([self.high] if self.high_open else [])
        return bad + list(self.extra)

    def drawn(self) -> st.SearchStrategy:
        outside = []
        if self.low is not None:
            outside.append(st.floats(max_value=self.low, exclude_max=not self.low_open, allow_nan=False,
                                     allow_infinity=False))
        if self.high is not None and math.isfinite(self.high):
            outside.append(st.floats(min_value=self.high, exclude_min=not self.high_open, allow_nan=False,
                                     allow_infinity=False))
        return st.one_of(st.sampled_from(self.canonical()), *outside)

    def edges(self) -> list:
        return [b for b, is_open in ((self.low, self.low_open), (self.high, self.high_open))
                if b is not None and not is_open and math.isfinite(b)]


class Int(Kind):
    """An integer in [low, high]; ``optional`` allows None."""

    def __init__(self, valid: Any = 1, *, low=None, high=None, optional=False, **kw) -> None:
        super().__init__(valid, **kw)
        self.low, self.high, self.optional = low, high, optional

    def canonical(self) -> list:
        bad = [1.5, NAN, "3", True, -10 ** 9] + ([] if self.optional else [None])
        if self.low is not None:
            bad.append(self.low - 1)
        if self.high is not None:
            bad.append(self.high + 1)
        return bad + list(self.extra)

    def drawn(self) -> st.SearchStrategy:
        outside = [st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: not float(v).is_integer())]
        if self.low is not None:
            outside.append(st.integers(max_value=self.low - 1))
        if self.high is not None:
            outside.append(st.integers(min_value=self.high + 1))
        return st.one_of(st.sampled_from(self.canonical()), *outside)

    def edges(self) -> list:
        return [b for b in (self.low, self.high) if b is not None]


class Choice(Kind):
    """One of a fixed set of strings."""

    def canonical(self) -> list:
        return [BAD_TEXT, "", 3] + list(self.extra)

    def drawn(self) -> st.SearchStrategy:
        return st.one_of(st.sampled_from(self.canonical()),
                         st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=4).map(lambda s: "zz" + s))


class Flag(Kind):
    """A bool."""

    def canonical(self) -> list:
        return ["yes", 2, None] + list(self.extra)


class Obj(Kind):
    """An object of a given type (a model, a solver, a data set, a graph): wrong types must be rejected."""

    def __init__(self, valid: Any, *, optional=False, **kw) -> None:
        super().__init__(valid, **kw)
        self.optional = optional

    def canonical(self) -> list:
        return [BAD_TEXT, 3] + ([] if self.optional else [None]) + list(self.extra)


class File(Kind):
    """A file path: wrong types, and files that do not exist or are broken (``extra``); an ``OSError`` is an
    accepted rejection, and any rejection may name the file instead of the argument."""

    accept = (ValueError, TypeError, OSError)

    def __init__(self, valid: Any, *, optional=False, **kw) -> None:
        super().__init__(valid, **kw)
        self.optional = optional

    def canonical(self) -> list:
        return [3] + ([] if self.optional else [None]) + list(self.extra)


class Rng(Kind):
    """A seed argument: a numpy Generator, a non-negative int or None."""

    def __init__(self, valid: Any = 0, **kw) -> None:
        super().__init__(valid, **kw)

    def canonical(self) -> list:
        return [BAD_TEXT, 1.5, -1, [1, 2]] + list(self.extra)


class Arr(Kind):
    """An array with a contract. Flags: ``finite`` (default), ``nonneg``, ``positive``, ``prob`` (entries in
    [0, 1]), ``simplex`` (probability vectors along the last axis), ``stochastic`` (square, rows on the
    simplex), ``rowsum`` (square, rows summing to 1, any sign), ``integer``, ``high`` (entries < high), ``ndim``
    (exact), ``nonempty`` (default), ``link`` (the first axis must match other arguments, named in ``also``),
    ``optional`` (None allowed)."""

    def __init__(self, valid: Any, *, finite=True, nonneg=False, positive=False, prob=False, simplex=False,
                 stochastic=False, rowsum=False, integer=False, high=None, ndim=None, nonempty=True, link=False,
                 optional=False, square=False, **kw) -> None:
        super().__init__(valid, **kw)
        self.finite, self.nonneg, self.positive, self.prob = finite, nonneg, positive, prob
        self.simplex, self.stochastic, self.integer, self.high = simplex, stochastic, integer, high
        self.ndim, self.nonempty, self.link, self.optional = ndim, nonempty, link, optional
        self.rowsum = rowsum or stochastic
        self.square = square or self.rowsum

    def modes(self) -> list[str]:
        out = ["text", "object"] + ([] if self.optional else ["none"])
        base = self.value()
        if base is None:  # an optional array left out: only wrong types (and ``extra``) apply
            return out
        ndim = np.ndim(base.numpy() if isinstance(base, torch.Tensor) else base)
        out += ["nan", "inf"] if self.finite else []
        out += ["negative"] if (self.nonneg or self.prob or self.simplex or self.stochastic or self.positive) else []
        out += ["zero"] if self.positive else []
        out += ["above_one"] if self.prob else []
        out += ["rescaled"] if (self.simplex or self.rowsum) else []
        out += ["not_square"] if self.square else []
        out += ["extra_axis"] if self.ndim is not None else []
        out += ["empty"] if self.nonempty and ndim else []
        out += ["truncated"] if self.link and ndim else []
        out += ["fraction"] if self.integer else []
        out += ["too_high"] if self.high is not None else []
        return out

    def apply(self, mode: str, position: int = 0, scale: float = 1.0) -> Any:
        """The valid value broken in one way (``position`` picks the entry, ``scale`` the magnitude)."""
        if mode in ("text", "object", "none"):
            return {"text": BAD_TEXT, "object": object(), "none": None}[mode]
        base = self.value()
        as_tensor = isinstance(base, torch.Tensor)
        arr = np.array(base.numpy() if as_tensor else base, dtype=float if mode in ("nan", "inf", "fraction",
                                                                                   "rescaled") else None)
        if arr.dtype.kind in "iu" and mode in ("negative", "too_high"):
            arr = arr.astype(np.int64)  # a small integer dtype (int8 states) cannot hold the broken entry
        flat = arr.reshape(-1)
        i = position % max(flat.size, 1)
        if mode == "nan":
            flat[i] = NAN
        elif mode == "inf":
            flat[i] = INF
        elif mode == "negative":
            flat[i] = -abs(scale) - 0.5 if arr.dtype.kind == "f" else -1 - int(abs(scale))
        elif mode == "zero":
            flat[i] = 0
        elif mode == "above_one":
            flat[i] = 1.0 + abs(scale) + 0.25
        elif mode == "rescaled":
            arr = arr * (2.0 + abs(scale))
        elif mode == "not_square":
            arr = arr[..., :-1]
        elif mode == "extra_axis":
            arr = arr[None]
        elif mode == "empty":
            arr = arr[:0]
        elif mode == "truncated":
            arr = arr[:-1]
        elif mode == "fraction":
            flat[i] = flat[i] + 0.5
        elif mode == "too_high":
            flat[i] = self.high + int(abs(scale))
        if as_tensor:
            return torch.as_tensor(arr).to(base.dtype if mode not in ("nan", "inf", "fraction") else torch.float32)
        return arr

    def canonical(self) -> list:
        return [self.apply(m) for m in self.modes()] + list(self.extra)

    def drawn(self) -> st.SearchStrategy:
        broken = st.builds(self.apply, st.sampled_from(self.modes()), st.integers(0, 10 ** 6),
                           st.floats(0, 1e3, allow_nan=False))
        return st.one_of(broken, st.sampled_from(self.extra)) if self.extra else broken


# ------------------------------------------------------------------------------------------------ cases


def _infer(param: inspect.Parameter) -> Kind | None:
    """A kind for a defaulted parameter from its default value and annotation (None: no bad values known)."""
    default, note = param.default, str(param.annotation)
    optional = "None" in note
    if isinstance(default, bool):
        return Flag(default)
    if isinstance(default, (int, np.integer)):
        return Int(default, optional=optional)
    if isinstance(default, (float, np.floating)):
        return Real(default, optional=optional, inf_ok=math.isinf(default))
    if isinstance(default, str):
        return None if param.name in FREE_TEXT else Choice(default)
    if default is None and note in ("int | None", "'int | None'"):
        return Int(None, optional=True)
    if default is None and note in ("float | None", "'float | None'"):
        return Real(None, optional=True)
    if isinstance(default, tuple) and default and all(isinstance(v, str) for v in default):
        return Kind(default, extra=((BAD_TEXT,),))
    if isinstance(default, tuple) and default and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                      for v in default):
        return Kind(default, extra=((NAN,), (BAD_TEXT,)))
    return None


@dataclass
class Case:
    """One public callable, a valid call and the kinds of its arguments.

    ``name`` is the qualified name the coverage test matches against ``__all__``; ``fn`` defaults to the object
    of that name; ``auto`` infers kinds for the defaulted parameters ``args`` does not list; ``skip`` names
    parameters left out of the inference (their default stays). ``edge`` lists valid values on the edge of an
    argument's range, each called in place of the valid one: ``{"k": [1], "lr": [1e-12]}``, or argument names
    alone for the closed ends of their kinds' ranges (:meth:`Kind.edges`). ``cannot_run`` is the reviewed reason
    why the valid call cannot run in the tests (it needs the network); every other case's valid call must succeed.
    """

    name: str
    args: dict[str, Kind] = field(default_factory=dict)
    fn: Callable | None = None
    auto: bool = True
    skip: tuple = ()
    edge: dict | tuple = ()
    cannot_run: str = ""

    def __post_init__(self) -> None:
        self.fn = self.fn if self.fn is not None else resolve(self.name)
        self.module = _module_of(self.name)
        self._signature = _signature(self.fn)
        if self.auto and self._signature is not None:
            for pname, param in self._signature.parameters.items():
                if pname in self.args or pname in self.skip or param.default is inspect.Parameter.empty:
                    continue
                kind = _infer(param)
                if kind is not None:
                    self.args[pname] = kind
        self.edge = dict(self.edge) if isinstance(self.edge, dict) else {a: self.args[a].edges() for a in self.edge}
        assert all(self.edge.values()), f"{self.name}: edge values of {self.edge} (a kind without closed bounds?)"
        self._valid_failure: str | None = None

    def bad_args(self) -> list[str]:
        return [a for a, k in self.args.items() if k.testable]

    def call(self, kwargs: dict) -> Any:
        """``fn(**kwargs)`` with the small real-format data sets in ``$FEDLAB_DATA`` and no result store."""
        from world import data_folder

        sig = self._signature
        positional = [] if sig is None else [kwargs.pop(p.name) for p in sig.parameters.values()
                                             if p.kind is inspect.Parameter.POSITIONAL_ONLY and p.name in kwargs]
        with mock.patch.dict(os.environ, {"FEDLAB_DATA": data_folder()}):
            os.environ.pop("FEDLAB_RESULTS", None)
            return self.fn(*positional, **kwargs)

    def valid_failure(self) -> str:
        """Why the valid call fails ('' when it succeeds), found once per session."""
        if self._valid_failure is None:
            self._valid_failure = _failure(self, self.valid_kwargs())
        return self._valid_failure

    def valid_kwargs(self) -> dict:
        return {a: k.value() for a, k in self.args.items()}


def _signature(fn) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def resolve(name: str) -> Any:
    """The object of a qualified name such as ``fedlab.engine.population.ClientData.from_arrays``."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(name)


def _module_of(name: str) -> str:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:cut]))
            return ".".join(parts[:cut])
        except ModuleNotFoundError:
            continue
    raise LookupError(name)


# ------------------------------------------------------------------------------------------------ the check


def _short(value: Any) -> str:
    text = repr(value) if not isinstance(value, (np.ndarray, torch.Tensor)) else \
        f"{type(value).__name__}{tuple(value.shape)} {np.array2string(np.asarray(value).ravel()[:6], precision=3)}"
    return text if len(text) < 120 else text[:117] + "..."


def _raised_by_fedlab(err: BaseException) -> tuple[bool, str]:
    """Whether the innermost frame is a ``raise`` statement of a fedlab file (not numpy/torch/cvxpy code)."""
    tb = err.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    path = Path(tb.tb_frame.f_code.co_filename).resolve()
    where = f"{path}:{tb.tb_lineno}"
    if FEDLAB_DIR not in path.parents:
        return False, where
    lines = [linecache.getline(str(path), n) for n in range(max(1, tb.tb_lineno - 3), tb.tb_lineno + 1)]
    return any(re.search(r"\braise\b", line) for line in lines), where


def names_argument(message: str, names: tuple) -> bool:
    """Whether ``message`` names one of ``names`` as an identifier: ``k must ...``, ``'k'``, ``k=0``,
    ``setting.rounds`` for ``setting``; never inside a word (``kNN``, ``k-NN``) or as another object's attribute
    (``data.y`` does not name ``y``)."""
    return any(re.search(rf"(?<![\w.\-]){re.escape(n)}(?![\w\-])", message) for n in names)


def _failure(case: Case, kwargs: dict) -> str:
    """Why ``case`` called with ``kwargs`` fails ('' when it returns)."""
    import matplotlib.pyplot as plt

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            case.call(kwargs)
        return ""
    except Exception as err:  # noqa: BLE001 - any failure of a valid call is the finding
        return f"{type(err).__name__} at {_raised_by_fedlab(err)[1]}: {err}"
    finally:
        plt.close("all")


def expect_success(case: Case, arg: str | None = None, value: Any = None) -> None:
    """The valid call of ``case`` (with ``arg`` set to the valid ``value`` when given) succeeds."""
    if case.cannot_run:
        pytest.skip(f"{case.name}: {case.cannot_run}")
    if arg is None:
        failure, shown = case.valid_failure(), f"{case.name}(<valid arguments>)"
    else:
        kwargs = case.valid_kwargs()
        kwargs[arg] = value
        failure, shown = _failure(case, kwargs), f"{case.name}({arg}={_short(value)}), an edge value,"
    assert not failure, f"{shown} failed: {failure}"


def expect_rejection(case: Case, arg: str, value: Any) -> None:
    """Call ``case`` with ``arg`` replaced by ``value`` and assert the rejection (see the module docstring)."""
    import matplotlib.pyplot as plt

    COUNTS[case.module] += 1
    if not case.cannot_run:
        assert not case.valid_failure(), \
            f"{case.name}: the valid call fails, so no rejection can be told apart: {case.valid_failure()}"
    kwargs = case.valid_kwargs()
    kwargs[arg] = value
    kind = case.args[arg]
    names = (arg, *kind.also) + ((str(value), Path(value).name) if isinstance(kind, File) and
                                 isinstance(value, (str, Path)) else ())
    shown = f"{case.name}({arg}={_short(value)})"
    try:
        with warnings.catch_warnings(), time_limit(TIME_LIMIT_S):
            warnings.simplefilter("ignore")
            result = case.call(kwargs)
    except kind.accept as err:
        ok, where = _raised_by_fedlab(err)
        ok = ok or (isinstance(err, OSError) and isinstance(kind, File))  # the OS says which file
        assert ok, f"{shown} raised {type(err).__name__} from {where}, not from fedlab's validation: {err}"
        assert names_argument(str(err), names), f"{shown}: the message does not name {names}: {err}"
        return
    except Hung:
        pytest.fail(f"{shown} accepted the bad value: still running after {TIME_LIMIT_S} s")
    except Exception as err:  # noqa: BLE001 - any other exception is the finding
        pytest.fail(f"{shown} raised {type(err).__name__} instead of ValueError/TypeError: {err}")
    finally:
        plt.close("all")
    pytest.fail(f"{shown} accepted the bad value and returned {_short(result)}")


def make_tests(cases: list[Case]):
    """The tests of a list of cases: the valid call, every edge value, every canonical bad value of every argument,
    and bad values drawn at random.

    Assign them in a test module: ``test_valid_call, test_edge_values, test_canonical_bad_values,
    test_drawn_bad_values = make_tests(CASES)``.
    """
    from hypothesis import given

    pairs = [pytest.param(c, a, id=f"{c.name.removeprefix('fedlab.')}:{a}") for c in cases for a in c.bad_args()]

    @pytest.mark.parametrize("case, arg", pairs)
    def test_canonical_bad_values(case, arg):
        for value in case.args[arg].canonical():
            expect_rejection(case, arg, value)

    @pytest.mark.parametrize("case", [pytest.param(c, id=c.name.removeprefix("fedlab.")) for c in cases
                                      if c.bad_args()])
    @given(data=st.data())
    def test_drawn_bad_values(case, data):
        for arg in case.bad_args():
            expect_rejection(case, arg, data.draw(case.args[arg].drawn(), label=arg))

    @pytest.mark.parametrize("case", [pytest.param(c, id=c.name.removeprefix("fedlab.")) for c in cases])
    def test_valid_call(case):
        expect_success(case)

    edges = [pytest.param(c, a, v, id=f"{c.name.removeprefix('fedlab.')}:{a}={_short(v)}")
             for c in cases for a, values in c.edge.items() for v in values]

    @pytest.mark.parametrize("case, arg, value", edges)
    def test_edge_values(case, arg, value):
        expect_success(case, arg, value)

    return test_valid_call, test_edge_values, test_canonical_bad_values, test_drawn_bad_values


# ------------------------------------------------------------------------------------------------ coverage


def public_callables() -> tuple[set[str], list[str]]:
    """Qualified names of the callables that fedlab's public modules define and list in ``__all__``, and the
    public modules without ``__all__``."""
    names, without = set(), []
    for info in pkgutil.walk_packages(fedlab.__path__, "fedlab."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        exported = getattr(module, "__all__", None)
        if exported is None:
            if not info.ispkg:
                without.append(info.name)
            continue
        for name in exported:
            obj = getattr(module, name)
            if callable(obj) and getattr(obj, "__module__", None) == info.name:
                names.add(f"{info.name}.{name}")
    return names, without
