r"""Minibatch SGD, Local SGD and Local SGD-M on Markovian client streams (paper D, Algorithms 1-3).

The three methods are registered as ``METHODS["markovian:minibatch"]``, ``["markovian:local"]`` and
``["markovian:local_momentum"]`` (:data:`PRESETS`); :func:`streaming_algorithm` builds one with its rates.

Each method is an engine Algorithm (``init``/``round``/``evaluate``) run by :func:`fedlab.engine.run` on its numpy
path. The data is a :class:`~fedlab.markovian.data.MarkovStreams`: the regression problems of R replicas and their
sampled client streams, stacked so that the population (M clients) and the replicas (seeds, mixing times, stream
modes, hyper-parameters) are array axes and only the K local steps of a round are a Python loop. The state holds
the R server models, and the History records after every round the metric ``grad_norm2``, an array (R,) with one
entry per replica; :func:`floor` and :func:`average` reduce it.

**The streams are consumed in order.** Round t of client m uses ``states[r, t, m, 0..K-1]``, the consecutive states
:math:`X_{tK}, \dots, X_{tK+K-1}` of the client's chain: local step k of round t trains on the k-th next state of a
Markov stream, never on a minibatch drawn at random (what the engine's ``local_sgd`` does), and the dependence
between consecutive samples is what the chapter measures. Local SGD-M's momentum is the server's aggregated
direction :math:`v_t`, held fixed during the local steps, not the heavy-ball buffer of ``LocalSGD(momentum=...)``
(a different algorithm). A test checks one local step against the engine's ``local_sgd`` on
``LinearModel(loss="mse")``.

Round t, client m, samples :math:`x_t^{(m,k)}`, k = 0..K-1 (spec D.2, typo in Alg. 2 fixed):

* Minibatch SGD (Alg. 2): :math:`g_t = \frac1{MK}\sum_{m,k}\nabla f_m(w_t; x_t^{(m,k)})`,
  :math:`w_{t+1} = w_t - \gamma g_t`;
* Local SGD (Alg. 3): :math:`w^{(m,k+1)} = w^{(m,k)} - \eta\nabla f_m(w^{(m,k)}; x_t^{(m,k)})`,
  :math:`w_{t+1} = \frac1M\sum_m w^{(m,K)}`;
* Local SGD-M (Alg. 1): :math:`v^{(m,k)} = \beta\nabla f_m(w^{(m,k)}; x_t^{(m,k)}) + (1-\beta)v_t`,
  :math:`w^{(m,k+1)} = w^{(m,k)} - \eta v^{(m,k)}`, :math:`v_{t+1} = \frac1{\eta MK}\sum_m(w_t - w^{(m,K)})`,
  :math:`w_{t+1} = w_t - \gamma v_{t+1}`. With :math:`\beta = 1` and :math:`\gamma = \eta K` it is Local SGD.

The metric is :math:`\|\nabla F(w_t)\|^2` for t = 0..T (exact gradient of the stationary objective). The
observation noise :math:`\epsilon\sim U(0,h)` of a round is one draw ``rng.random((R, M, K))`` from the generator
``numpy_rng(seed, Stream.MARKOV_NOISE)`` that the state carries from round to round, so that the three algorithms
see the same noise (common random numbers).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_sequence, check_type
from fedlab.algorithms import METHODS
from fedlab.engine import DivergenceError, History, run
from fedlab.markovian.data import MarkovStreams, markov_streams

__all__ = [
    "StreamingState",
    "StreamingMinibatchSGD",
    "StreamingLocalSGDM",
    "PRESETS",
    "streaming_algorithm",
    "run_streaming_fl",
    "replica_curves",
    "floor",
    "average",
]


# ------------------------------------------------------------------------------ algorithms

@dataclass(frozen=True)
class StreamingState:
    """Server state of N rows.

    Attributes
    ----------
    w : array (N, d)
        Server models :math:`w_t`.
    v : array (N, d) or None
        Server direction :math:`v_t` of Local SGD-M (``None`` for Minibatch SGD).
    rng : numpy Generator
        The noise generator ``numpy_rng(seed, Stream.MARKOV_NOISE)``, advanced by one draw per round.
    round : int
    """

    w: np.ndarray
    v: np.ndarray | None
    rng: np.random.Generator
    round: int = 0


def _check_rates(name: str, value, *, high: float | None = None) -> np.ndarray:
    """A step size or momentum: a scalar or one value per row, in (0, high]."""
    arr = check_array(name, value)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or have one value per row (N,), got shape {arr.shape}.")
    if np.any(arr <= 0) or (high is not None and np.any(arr > high)):
        raise ValueError(f"{name} must lie in (0, {high if high is not None else 'inf'}], got {arr}.")
    return arr


def _check_start(name: str, value) -> None:
    """A start vector (d,) or one per row (rows, d), finite (its shape is checked against the data by ``init``)."""
    if value is not None and check_array(name, value).ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (d,) or (rows, d), got {np.shape(value)}.")


def _per_row(name: str, arr: np.ndarray, n_rows: int) -> np.ndarray:
    """``arr`` broadcast to (N,) floats, or raise if it has another number of rows."""
    if arr.ndim == 1 and arr.shape[0] != n_rows:
        raise ValueError(f"{name} must be a scalar or have one value per row ({n_rows},), got shape {arr.shape}.")
    return np.broadcast_to(arr, (n_rows,)).astype(float)


def _row_values(value, n_rows: int) -> np.ndarray:
    """A rate checked by ``init`` as (N,) floats (the cheap form used every round)."""
    arr = np.asarray(value, dtype=float)
    return arr if arr.ndim else np.full(n_rows, float(arr))


def _rows_start(name: str, value, data: MarkovStreams) -> np.ndarray:
    """A start vector (d,), (R, d) (one per replica, repeated over the settings) or (N, d), as (N, d)."""
    arr = np.zeros(data.dim) if value is None else check_array(name, value)
    if arr.shape == (data.n_replicas, data.dim) and data.copies > 1:
        arr = np.tile(arr, (data.copies, 1))
    if arr.shape not in ((data.dim,), (data.n_rows, data.dim)):
        raise ValueError(f"{name} must have shape ({data.dim},), ({data.n_replicas}, {data.dim}) or "
                         f"({data.n_rows}, {data.dim}), got {arr.shape}.")
    return np.broadcast_to(arr, (data.n_rows, data.dim)).astype(float).copy()


def _start(data, seed: int, w0, v0=None, with_direction: bool = False) -> StreamingState:
    """The state at round 0: models ``w0`` (and directions ``v0``), the noise generator of ``seed``."""
    if not isinstance(data, MarkovStreams):
        raise TypeError(f"data must be MarkovStreams (see markov_streams), got {type(data).__name__}.")
    check_int("seed", seed)
    v = _rows_start("v0", v0, data) if with_direction else None
    return StreamingState(_rows_start("w0", w0, data), v, numpy_rng(seed, Stream.MARKOV_NOISE))


def _next_round(state: StreamingState, data: MarkovStreams) -> int:
    """The round about to run, which the streams must hold."""
    if state.round >= data.n_rounds:
        raise ValueError(f"the streams hold {data.n_rounds} rounds; round {state.round} has no samples.")
    return state.round


def _grad_norm2(name: str, state: StreamingState, data: MarkovStreams) -> dict[str, np.ndarray]:
    """The metric of every row, or ``DivergenceError`` when one is not finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        gn = np.sum(data.gradient(state.w) ** 2, -1)
    if not np.all(np.isfinite(gn)):
        raise DivergenceError(f"{name} diverged after {state.round} rounds (non-finite gradient norm); use smaller "
                              "step sizes.")
    return {"grad_norm2": gn}


@dataclass(frozen=True)
class StreamingMinibatchSGD:
    r"""Minibatch SGD (paper D, Alg. 2): all K samples of every client evaluated at the server model.

    Parameters
    ----------
    lr_global : float or array (N,)
        :math:`\gamma > 0`, one per row.
    w0 : array (d,), (R, d) or (N, d), optional
        Initial model (zeros).
    """

    lr_global: float | np.ndarray
    w0: np.ndarray | None = None

    def __post_init__(self) -> None:
        _check_rates("lr_global", self.lr_global)
        _check_start("w0", self.w0)

    def init(self, data: MarkovStreams, seed: int) -> StreamingState:
        state = _start(data, seed, self.w0)
        _per_row("lr_global", check_array("lr_global", self.lr_global), data.n_rows)
        return state

    def round(self, state: StreamingState, data: MarkovStreams, seed: int) -> tuple[StreamingState, dict]:
        """One round on the samples of round ``state.round`` (the clients' next K chain states)."""
        t = _next_round(state, data)
        gamma = _row_values(self.lr_global, data.n_rows)[:, None]
        w, m, k = state.w, data.n_clients, data.n_local
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported by evaluate
            v, x = data.round_samples(t, data.noise(state.rng))
            res = np.einsum("rmkd,rd->rmk", v, w) - x
            g = np.einsum("rmk,rmkd->rd", res, v) / (m * k) + data.reg_lambda * w / (1 + w * w) ** 2
            w = w - gamma * g
        return replace(state, w=w, round=t + 1), {}

    def evaluate(self, state: StreamingState, data: MarkovStreams) -> dict[str, np.ndarray]:
        r""":math:`\|\nabla F(w_t)\|^2` per row; raises ``DivergenceError`` when it is not finite."""
        return _grad_norm2("Minibatch SGD", state, data)


@dataclass(frozen=True)
class StreamingLocalSGDM:
    r"""Local SGD with momentum (paper D, Alg. 1): K local steps along :math:`\beta\nabla f + (1-\beta)v_t`.

    Local SGD (Alg. 3) is the case :math:`\beta = 1`, :math:`\gamma = \eta K` (``lr_global=None``). Rows may
    hold different settings (:meth:`MarkovStreams.tile`), e.g. Local SGD and Local SGD-M side by side.

    Parameters
    ----------
    lr_local : float or array (N,)
        :math:`\eta > 0`.
    lr_global : float, array (N,) or None
        :math:`\gamma > 0`; ``None``: :math:`\eta K`.
    momentum_beta : float or array (N,)
        :math:`\beta\in(0,1]`.
    w0, v0 : array (d,), (R, d) or (N, d), optional
        Initial model and server direction (zeros, as in the proofs).
    """

    lr_local: float | np.ndarray
    lr_global: float | np.ndarray | None = None
    momentum_beta: float | np.ndarray = 1.0
    w0: np.ndarray | None = None
    v0: np.ndarray | None = None

    def __post_init__(self) -> None:
        _check_rates("lr_local", self.lr_local)
        if self.lr_global is not None:
            _check_rates("lr_global", self.lr_global)
        _check_rates("momentum_beta", self.momentum_beta, high=1.0)
        _check_start("w0", self.w0)
        _check_start("v0", self.v0)

    def _rates(self, data: MarkovStreams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(eta, gamma, beta), each (N,)."""
        n = data.n_rows
        eta = _row_values(self.lr_local, n)
        gamma = eta * data.n_local if self.lr_global is None else _row_values(self.lr_global, n)
        return eta, gamma, _row_values(self.momentum_beta, n)

    def init(self, data: MarkovStreams, seed: int) -> StreamingState:
        state = _start(data, seed, self.w0, self.v0, with_direction=True)
        for name in ("lr_local", "lr_global", "momentum_beta"):
            if getattr(self, name) is not None:
                _per_row(name, check_array(name, getattr(self, name)), data.n_rows)
        return state

    def round(self, state: StreamingState, data: MarkovStreams, seed: int) -> tuple[StreamingState, dict]:
        """One round: every client runs K local steps on its next K chain states, then the server aggregates."""
        t = _next_round(state, data)
        eta, gamma, beta = self._rates(data)
        w, k = state.w, data.n_local
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported by evaluate
            feats, x = data.round_samples(t, data.noise(state.rng))
            wl = _local_steps(w, state.v, feats, x, eta, beta, data.reg_lambda)
            v = (w - wl.mean(1)) / (eta[:, None] * k)
            w = w - gamma[:, None] * v
        return replace(state, w=w, v=v, round=t + 1), {}

    def evaluate(self, state: StreamingState, data: MarkovStreams) -> dict[str, np.ndarray]:
        r""":math:`\|\nabla F(w_t)\|^2` per row; raises ``DivergenceError`` when it is not finite."""
        return _grad_norm2("Local SGD-M", state, data)


def _local_steps(w, v, feats, x, eta, beta, lam) -> np.ndarray:
    """The K sequential local steps of every client, in place, in the order of the stream: (N, M, d)."""
    feats = np.ascontiguousarray(feats.transpose(2, 0, 1, 3))           # (K, N, M, d): step-major
    x = np.ascontiguousarray(x.transpose(2, 0, 1))
    wl = np.repeat(w[:, None, :], feats.shape[2], axis=1)
    eta3, beta3 = eta[:, None, None], beta[:, None, None]
    drift = eta3 * (1.0 - beta3) * v[:, None, :]
    step = eta3 * beta3
    for vk, xk in zip(feats, x):                                        # in place: ~2x fewer temporaries
        res = np.einsum("rmd,rmd->rm", wl, vk)
        res -= xk
        g = vk * res[..., None]
        if lam:
            den = wl * wl
            den += 1.0
            den *= den
            reg = wl / den
            reg *= lam
            g += reg
        g *= step
        g += drift
        wl -= g
    return wl


for _name, _cls, _label, _options in [
        ("minibatch", StreamingMinibatchSGD, "Minibatch SGD", {}),
        ("local", StreamingLocalSGDM, "Local SGD", {"lr_global": None, "momentum_beta": 1.0}),
        ("local_momentum", StreamingLocalSGDM, "Local SGD-M", {})]:
    METHODS.register(_name, _cls, chapter="markovian", label=_label, **_options)

PRESETS = METHODS.presets("markovian")
"""The three methods by name (``METHODS["markovian:<name>"]``): the Algorithm class, its fixed options (Local SGD is
Local SGD-M with β = 1 and γ = ηK) and its label; :func:`streaming_algorithm` builds them with the rates they use."""

_RATES = ("lr_global", "lr_local", "momentum_beta")


def streaming_algorithm(name: str, *, lr_global=0.01, lr_local=0.001, momentum_beta=0.1, w0=None):
    """The method ``PRESETS[name]`` with the rates it uses; defaults are the paper's γ = 0.01, η = 0.001, β = 0.1 (§5).

    ``"local"`` is :class:`StreamingLocalSGDM` with β = 1 and γ = ηK (Local SGD, Alg. 3).

    >>> type(streaming_algorithm("local")).__name__, streaming_algorithm("local").momentum_beta
    ('StreamingLocalSGDM', 1.0)
    """
    method = PRESETS[check_choice("name", name, PRESETS)]
    _check_rates("lr_global", lr_global)
    _check_rates("lr_local", lr_local)
    _check_rates("momentum_beta", momentum_beta, high=1.0)
    rates = dict(lr_global=lr_global, lr_local=lr_local, momentum_beta=momentum_beta)
    used = {k: rates[k] for k in _RATES if k in method.cls.__dataclass_fields__ and k not in method.options}
    return method.cls(**method.options, **used, w0=w0)


# ------------------------------------------------------------------------------ runs and reductions

def _rows(history: History, start: int, stop: int) -> History:
    """The History of rows ``start:stop`` of a run."""
    size = stop - start
    return History(np.ones(size), np.ones(size), list(history.rounds),
                   {name: [v[start:stop] for v in values] for name, values in history.clients.items()},
                   list(history.log))


def run_streaming_fl(problem, states, *, algorithms: Sequence[str] = ("minibatch", "local", "local_momentum"),
                     lr_global=0.01, lr_local=0.001, momentum_beta=0.1, w0=None, seed: int = 0,
                     eval_every: int = 1) -> dict[str, History]:
    """Run several of the three algorithms on the same streams and noise (common random numbers).

    Local SGD and Local SGD-M share one engine run (Local SGD is Local SGD-M with β = 1, γ = ηK, a second
    setting of the rows). Defaults are the paper's γ = 0.01, η = 0.001, β = 0.1 (§5).

    Parameters
    ----------
    problem, states
        As :func:`markov_streams`.
    algorithms : sequence of keys of ``PRESETS``
    lr_global, lr_local, momentum_beta : float or array (R,)
    w0 : array (d,) or (R, d), optional
    seed : int
        Seed of the observation noise.
    eval_every : int
        Record ``grad_norm2`` every ``eval_every`` rounds (:func:`floor` and :func:`average` want every round).

    Returns
    -------
    dict algorithm name -> History with metric ``grad_norm2`` (R,) per recorded round
    """
    algorithms = list(check_sequence("algorithms", algorithms))
    if not algorithms:
        raise ValueError("algorithms must name at least one of " + ", ".join(PRESETS) + ".")
    for a in algorithms:
        check_choice("algorithms", a, PRESETS)
    _check_rates("lr_global", lr_global)
    _check_rates("lr_local", lr_local)
    _check_rates("momentum_beta", momentum_beta, high=1.0)
    data = markov_streams(problem, states)
    kw = dict(rounds=data.n_rounds, seed=seed, eval_every=eval_every, progress=False)
    out = {}
    if "minibatch" in algorithms:
        _, out["minibatch"] = run(streaming_algorithm("minibatch", lr_global=lr_global, w0=w0), data, **kw)
    local = [a for a in ("local", "local_momentum") if a in algorithms]
    if local:
        r = data.n_replicas
        settings = _local_settings(local, r, data.n_local, lr_local, lr_global, momentum_beta, w0)
        _, both = run(settings, data.tile(len(local)), **kw)
        out.update({a: _rows(both, i * r, (i + 1) * r) for i, a in enumerate(local)})
    return {a: out[a] for a in algorithms}


def _local_settings(names, r: int, k: int, lr_local, lr_global, momentum_beta, w0) -> StreamingLocalSGDM:
    """Local SGD (β = 1, γ = ηK) and/or Local SGD-M as settings of one :class:`StreamingLocalSGDM` (rows c*R + r)."""
    eta = _per_row("lr_local", _check_rates("lr_local", lr_local), r)
    gammas, betas = [], []
    for name in names:
        if name == "local":
            gammas.append(eta * k)
            betas.append(np.ones(r))
        else:
            gammas.append(_per_row("lr_global", _check_rates("lr_global", lr_global), r))
            betas.append(_per_row("momentum_beta", _check_rates("momentum_beta", momentum_beta, high=1.0), r))
    return StreamingLocalSGDM(np.tile(eta, len(names)), np.concatenate(gammas), np.concatenate(betas), w0)


def replica_curves(history: History, metric: str = "grad_norm2") -> tuple[np.ndarray, np.ndarray]:
    """``(rounds, values)``: the recorded rounds (n,) and the metric of every row, an array (N, n)."""
    check_type("history", history, History)
    check_type("metric", metric, str)
    if metric not in history.clients:
        raise ValueError(f"unknown metric {metric!r}: history recorded {sorted(history.clients)}.")
    return np.array(history.rounds), np.stack(history.clients[metric], axis=1)


def floor(history: History, fraction: float = 0.2, metric: str = "grad_norm2") -> np.ndarray:
    r"""Mean of :math:`\|\nabla F(w_t)\|^2` over the recorded rounds among the last ``fraction`` of the T rounds,
    per row (N,): the noise floor the bounds' :math:`\tau\sigma^2/(MK)` term describes."""
    fraction = check_real("fraction", fraction, low=0, high=1, low_open=True)
    rounds, values = replica_curves(history, metric)
    n = max(1, int(round(fraction * rounds[-1])))
    tail = int(np.sum(rounds > rounds[-1] - n))              # a suffix of the recorded rounds
    return values[:, -tail:].mean(1)


def average(history: History, metric: str = "grad_norm2") -> np.ndarray:
    r""":math:`\mathbb E\|\nabla F(\hat w_T)\|^2 = \frac1T\sum_{t<T}\|\nabla F(w_t)\|^2` per row (N,), the quantity
    the theorems bound (:math:`\hat w_T` uniform over :math:`w_0..w_{T-1}`); over the recorded rounds t < T."""
    rounds, values = replica_curves(history, metric)
    if rounds.size < 2:
        raise ValueError("average needs a History with the rounds before the last one recorded.")
    return values[:, :-1].mean(1)
