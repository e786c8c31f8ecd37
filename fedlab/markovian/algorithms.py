r"""Minibatch SGD, Local SGD and Local SGD-M on Markovian client streams (paper D, Algorithms 1-3).

All three are written as **vectorised numpy simulations**: the population (M clients) and a batch of R
independent replicas (seeds, mixing times, stream modes, hyper-parameters) are array axes, and only the K local
steps of a round are a Python loop. They do not use ``fedlab.engine``: the engine draws minibatch indices at
random (with replacement), whereas here sample k of round t *must* be the k-th state of the client's chain, and
Local SGD-M's momentum is the server's aggregated direction :math:`v_t` held fixed during the local steps,
not the heavy-ball buffer of ``LocalSGD(momentum=...)`` (a different algorithm). A test checks one local step
against the engine's ``local_sgd`` on ``LinearModel(loss="mse")``.

Round t, client m, samples :math:`x_t^{(m,k)}`, k = 0..K-1 (spec D.2, typo in Alg. 2 fixed):

* Minibatch SGD (Alg. 2): :math:`g_t = \frac1{MK}\sum_{m,k}\nabla f_m(w_t; x_t^{(m,k)})`,
  :math:`w_{t+1} = w_t - \gamma g_t`;
* Local SGD (Alg. 3): :math:`w^{(m,k+1)} = w^{(m,k)} - \eta\nabla f_m(w^{(m,k)}; x_t^{(m,k)})`,
  :math:`w_{t+1} = \frac1M\sum_m w^{(m,K)}`;
* Local SGD-M (Alg. 1): :math:`v^{(m,k)} = \beta\nabla f_m(w^{(m,k)}; x_t^{(m,k)}) + (1-\beta)v_t`,
  :math:`w^{(m,k+1)} = w^{(m,k)} - \eta v^{(m,k)}`, :math:`v_{t+1} = \frac1{\eta MK}\sum_m(w_t - w^{(m,K)})`,
  :math:`w_{t+1} = w_t - \gamma v_{t+1}`. With :math:`\beta = 1` and :math:`\gamma = \eta K` it is Local SGD.

The metric is :math:`\|\nabla F(w_t)\|^2` for t = 0..T (exact gradient of the stationary objective).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real
from fedlab.markovian.data import MarkovRegression
from fedlab.engine import DivergenceError

__all__ = [
    "StreamingRun",
    "streaming_minibatch_sgd",
    "streaming_local_sgd",
    "streaming_local_sgdm",
    "run_streaming_fl",
    "STREAMING_ALGORITHMS",
]



@dataclass(frozen=True)
class StreamingRun:
    """Result of one streaming simulation over R replicas.

    Attributes
    ----------
    grad_norm2 : array (R, T+1)
        :math:`\\|\\nabla F(w_t)\\|^2`, t = 0..T.
    w : array (R, d)
        Final server models.
    algorithm : str
    """

    grad_norm2: np.ndarray
    w: np.ndarray
    algorithm: str

    def floor(self, fraction: float = 0.2) -> np.ndarray:
        """Mean of :math:`\\|\\nabla F(w_t)\\|^2` over the last ``fraction`` of the rounds, per replica (R,)."""
        fraction = check_real("fraction", fraction, low=0, high=1, low_open=True)
        t = self.grad_norm2.shape[1] - 1
        n = max(1, int(round(fraction * t)))
        return self.grad_norm2[:, -n:].mean(1)

    def average(self) -> np.ndarray:
        r""":math:`\mathbb E\|\nabla F(\hat w_T)\|^2 = \frac1T\sum_{t<T}\|\nabla F(w_t)\|^2` per replica (the
        quantity the theorems bound, :math:`\hat w_T` uniform over :math:`w_0..w_{T-1}`)."""
        return self.grad_norm2[:, :-1].mean(1)


class _Batch:
    """R problems stacked: features (R, M, S, d), targets (R, M, S), stationary laws (R, M, S)."""

    def __init__(self, problem, n_rows: int | None) -> None:
        problems = [problem] if isinstance(problem, MarkovRegression) else list(problem)
        if not problems or not all(isinstance(p, MarkovRegression) for p in problems):
            raise TypeError("problem must be a MarkovRegression or a non-empty sequence of them (one per replica).")
        first = problems[0]
        for p in problems[1:]:
            if p.features.shape != first.features.shape or p.noise_high != first.noise_high \
                    or p.reg_lambda != first.reg_lambda:
                raise ValueError("all problems must share n_clients, n_states, dim, noise_high and reg_lambda.")
        if n_rows is not None and len(problems) not in (1, n_rows):
            raise ValueError(f"got {len(problems)} problems for {n_rows} replicas of states; pass 1 or {n_rows}.")
        reps = n_rows if len(problems) == 1 and n_rows is not None else 1
        self.v = np.repeat(np.stack([p.features for p in problems]), reps, axis=0)
        self.b = np.repeat(np.stack([p.targets for p in problems]), reps, axis=0)
        self.pi = np.repeat(np.stack([p.stat_dist for p in problems]), reps, axis=0)
        self.h, self.lam = first.noise_high, first.reg_lambda
        self.n_rows, self.m, _, self.d = self.v.shape
        self.problems = problems

    def tile(self, copies: int) -> "_Batch":
        out = object.__new__(_Batch)
        out.__dict__.update(self.__dict__)
        out.v, out.b, out.pi = (np.tile(a, (copies,) + (1,) * (a.ndim - 1)) for a in (self.v, self.b, self.pi))
        out.n_rows = self.n_rows * copies
        return out

    def grad_F(self, w: np.ndarray) -> np.ndarray:
        a = np.einsum("rd,rmsd->rms", w, self.v) - self.b - self.h / 2
        return np.einsum("rms,rms,rmsd->rd", self.pi, a, self.v) / self.m + self.lam * w / (1 + w * w) ** 2

    def select(self, states: np.ndarray, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Features (R, M, K, d) and observations (R, M, K) of the round's samples."""
        r = np.arange(self.n_rows)[:, None, None]
        mm = np.arange(self.m)[None, :, None]
        return self.v[r, mm, states], self.b[r, mm, states] + noise


def _prepare(problem, states, w0, seed):
    st = np.asarray(states)
    if st.ndim == 3:
        st = st[None]
    if st.ndim != 4:
        raise ValueError(f"states must have shape (T, M, K) or (R, T, M, K), got {np.shape(states)}.")
    if not np.issubdtype(st.dtype, np.integer):
        raise TypeError(f"states must be integer state indices, got dtype {st.dtype}.")
    batch = _Batch(problem, st.shape[0])
    if st.shape[2] != batch.m:
        raise ValueError(f"states have {st.shape[2]} clients, the problem has {batch.m}.")
    if st.min() < 0 or st.max() >= batch.v.shape[2]:
        raise ValueError(f"states must lie in [0, {batch.v.shape[2]}), got range [{st.min()}, {st.max()}].")
    w0 = np.zeros(batch.d) if w0 is None else check_array("w0", w0)
    if w0.shape not in ((batch.d,), (batch.n_rows, batch.d)):
        raise ValueError(f"w0 must have shape ({batch.d},) or ({batch.n_rows}, {batch.d}), got {w0.shape}.")
    check_int("seed", seed)
    return st, batch, np.broadcast_to(w0, (batch.n_rows, batch.d)).astype(float).copy()


def _row_param(name: str, value, n_rows: int, *, low: float = 0.0, high: float | None = None,
               low_open: bool = True) -> np.ndarray:
    arr = check_array(name, value)
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != n_rows):
        raise ValueError(f"{name} must be a scalar or have one value per replica ({n_rows},), got shape {arr.shape}.")
    bad = (arr <= low) if low_open else (arr < low)
    if high is not None:
        bad = bad | (arr > high)
    if np.any(bad):
        raise ValueError(f"{name} must lie in {'(' if low_open else '['}{low}, {high if high is not None else 'inf'}], "
                         f"got {arr}.")
    return np.broadcast_to(arr, (n_rows,)).astype(float)


def _check_finite(gn: np.ndarray, t: int, name: str) -> None:
    if not np.all(np.isfinite(gn)):
        raise DivergenceError(f"{name} diverged at round {t} (non-finite gradient norm); use smaller step sizes.")


def streaming_minibatch_sgd(problem, states, *, lr_global, w0=None, seed: int = 0) -> StreamingRun:
    r"""Minibatch SGD (paper D, Alg. 2): all K samples of every client evaluated at the server model.

    Parameters
    ----------
    problem : MarkovRegression or sequence of R of them
    states : int array (T, M, K) or (R, T, M, K)
        Client streams (e.g. :func:`fedlab.markovian.data.two_state_streams`).
    lr_global : float or array (R,)
        :math:`\gamma > 0`.
    w0 : array (d,) or (R, d), optional
        Initial model (zeros).
    seed : int
        Seed of the observation noise :math:`\epsilon\sim U(0,h)` (common to the three algorithms).
    """
    st, batch, w = _prepare(problem, states, w0, seed)
    gamma = _row_param("lr_global", lr_global, batch.n_rows)[:, None]
    rng = numpy_rng(seed, Stream.MARKOV_NOISE)
    n_rounds, m, k = st.shape[1:]
    gn = np.empty((batch.n_rows, n_rounds + 1))
    gn[:, 0] = np.sum(batch.grad_F(w) ** 2, -1)
    with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported by _check_finite
        for t in range(n_rounds):
            noise = rng.random((batch.n_rows, m, k)) * batch.h
            v, x = batch.select(st[:, t], noise)
            res = np.einsum("rmkd,rd->rmk", v, w) - x
            g = np.einsum("rmk,rmkd->rd", res, v) / (m * k) + batch.lam * w / (1 + w * w) ** 2
            w = w - gamma * g
            gn[:, t + 1] = np.sum(batch.grad_F(w) ** 2, -1)
            _check_finite(gn[:, t + 1], t, "Minibatch SGD")
    return StreamingRun(gn, w, "minibatch")


def _local_core(batch: _Batch, st: np.ndarray, w: np.ndarray, eta, gamma, beta, seed: int, copies: int,
                v0=None, name: str = "local SGD") -> tuple[np.ndarray, np.ndarray]:
    """Local SGD-M on ``copies`` x R rows (rows c*R + r share the streams and noise of replica r)."""
    rng = numpy_rng(seed, Stream.MARKOV_NOISE)
    n_rounds, m, k = st.shape[1:]
    full = batch.tile(copies)
    rows = full.n_rows
    w = np.tile(w, (copies, 1))
    v = np.zeros_like(w) if v0 is None else np.broadcast_to(v0, w.shape).astype(float).copy()
    eta3, beta3 = eta[:, None, None], beta[:, None, None]
    gn = np.empty((rows, n_rounds + 1))
    gn[:, 0] = np.sum(full.grad_F(w) ** 2, -1)
    lam = batch.lam
    with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported by _check_finite
        for t in range(n_rounds):
            noise = np.tile(rng.random((batch.n_rows, m, k)) * batch.h, (copies, 1, 1))
            feats, x = full.select(np.tile(st[:, t], (copies, 1, 1)), noise)
            feats = np.ascontiguousarray(feats.transpose(2, 0, 1, 3))           # (K, R, M, d): step-major
            x = np.ascontiguousarray(x.transpose(2, 0, 1))
            wl = np.repeat(w[:, None, :], m, axis=1)
            drift = eta3 * (1.0 - beta3) * v[:, None, :]
            step = eta3 * beta3
            for j in range(k):                                                 # in-place: ~2x fewer temporaries
                vk = feats[j]
                res = np.einsum("rmd,rmd->rm", wl, vk)
                res -= x[j]
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
            v = (w - wl.mean(1)) / (eta[:, None] * k)
            w = w - gamma[:, None] * v
            gn[:, t + 1] = np.sum(full.grad_F(w) ** 2, -1)
            _check_finite(gn[:, t + 1], t, name)
    return gn, w


def streaming_local_sgd(problem, states, *, lr_local, w0=None, seed: int = 0) -> StreamingRun:
    r"""Local SGD / FedAvg (paper D, Alg. 3): K sequential local steps on the client's consecutive samples.

    Parameters as :func:`streaming_minibatch_sgd`, with ``lr_local`` = :math:`\eta` (scalar or (R,)).
    """
    st, batch, w = _prepare(problem, states, w0, seed)
    eta = _row_param("lr_local", lr_local, batch.n_rows)
    k = st.shape[3]
    gn, w = _local_core(batch, st, w, eta, eta * k, np.ones(batch.n_rows), seed, 1, name="Local SGD")
    return StreamingRun(gn, w, "local")


def streaming_local_sgdm(problem, states, *, lr_local, lr_global, momentum_beta, w0=None, v0=None,
                         seed: int = 0) -> StreamingRun:
    r"""Local SGD with momentum (paper D, Alg. 1): local steps along :math:`\beta\nabla f + (1-\beta)v_t`.

    Parameters as :func:`streaming_minibatch_sgd`, plus ``lr_local`` (:math:`\eta`), ``momentum_beta``
    (:math:`\beta\in(0,1]`) and ``v0`` (initial server direction, zeros as in the proofs).
    """
    st, batch, w = _prepare(problem, states, w0, seed)
    eta = _row_param("lr_local", lr_local, batch.n_rows)
    gamma = _row_param("lr_global", lr_global, batch.n_rows)
    beta = _row_param("momentum_beta", momentum_beta, batch.n_rows, high=1.0)
    gn, w = _local_core(batch, st, w, eta, gamma, beta, seed, 1, v0=v0, name="Local SGD-M")
    return StreamingRun(gn, w, "local_momentum")


STREAMING_ALGORITHMS = {
    "minibatch": streaming_minibatch_sgd,
    "local": streaming_local_sgd,
    "local_momentum": streaming_local_sgdm,
}


def run_streaming_fl(problem, states, *, algorithms: Sequence[str] = ("minibatch", "local", "local_momentum"),
                     lr_global=0.01, lr_local=0.001, momentum_beta=0.1, w0=None, seed: int = 0) -> dict:
    """Run several of the three algorithms on the same streams and noise (common random numbers).

    Local SGD and Local SGD-M share one vectorised loop (Local SGD is Local SGD-M with β = 1, γ = ηK).
    Defaults are the paper's γ = 0.01, η = 0.001, β = 0.1 (§5).

    Returns
    -------
    dict algorithm name -> StreamingRun
    """
    algorithms = list(algorithms)
    if not algorithms:
        raise ValueError("algorithms must name at least one of " + ", ".join(STREAMING_ALGORITHMS) + ".")
    for a in algorithms:
        check_choice("algorithms", a, STREAMING_ALGORITHMS)
    st, batch, w = _prepare(problem, states, w0, seed)
    r, k = batch.n_rows, st.shape[3]
    out = {}
    if "minibatch" in algorithms:
        out["minibatch"] = streaming_minibatch_sgd(problem, st, lr_global=lr_global, w0=w0, seed=seed)
    local = [a for a in ("local", "local_momentum") if a in algorithms]
    if local:
        eta = _row_param("lr_local", lr_local, r)
        etas, gammas, betas = [], [], []
        for a in local:
            etas.append(eta)
            if a == "local":
                gammas.append(eta * k)
                betas.append(np.ones(r))
            else:
                gammas.append(_row_param("lr_global", lr_global, r))
                betas.append(_row_param("momentum_beta", momentum_beta, r, high=1.0))
        gn, wf = _local_core(batch, st, w, np.concatenate(etas), np.concatenate(gammas), np.concatenate(betas),
                             seed, len(local), name="+".join(local))
        for i, a in enumerate(local):
            out[a] = StreamingRun(gn[i * r:(i + 1) * r], wf[i * r:(i + 1) * r], a)
    return {a: out[a] for a in algorithms}
