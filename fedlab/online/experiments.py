r"""Experiments of the online-mixtures notebook (thesis §4.4.5): environments, regret runs, slopes.

* :func:`make_gmm_stream`: the synthetic federated GMM stream of §4.4.5.1 / dynamic spec A.7 — centres
  on a circle of radius ``spread`` (or drawn :math:`\mathcal N(0, s I_d)` as in the thesis), weights
  :math:`\pi^*_{t,c}\sim\mathrm{Dir}(\alpha 1_m)` drawn independently for every step and client;
* :func:`run_fem_omd_gmm`: FEM-OMD for GMMs on that stream, run by the engine (a History);
  :func:`gmm_regret`: one such run summarised as JSON (regret curve, slope, bounds);
* :data:`THESIS_FIG49`, :func:`thesis_fig49_configs` and :func:`regret_summary`: the three panels of Fig. 4.9 at
  the setting the thesis states (centres :math:`\mathcal N(0, 5I_d)`, C = 50, n = 30), run with :func:`gmm_regret`;
* :func:`gradient_error_breakdown`: where the gradient error of (4.42) comes from along a run;
* :func:`separated_limit_regret`: the fully separated limit (loss :math:`\mathrm{KL}(\pi^*_t\|\pi)`), where
  Theorem 4.4.3's bound can be checked exactly (spec fact A9);
* :class:`MixtureStream` and :func:`mixture_stream_regret`: the discriminative variant on a mixture-structured
  stream of any labelled pools (the classes split into m groups, per-step multinomial counts as in §4.4.5.2) with
  the accuracy regret (4.47) against a comparator :math:`h^*`; :class:`DigitsMixtureStream` and
  :func:`digits_stream_regret` are its case on scikit-learn's digits (the real images: :mod:`fedlab.online.real_data`);
* :func:`loglog_slope`: slope of :math:`\log R_t` against :math:`\log t` (1 = linear regret);
  :func:`sublinear_from`: from which step a regret curve stays sub-linear by that slope.

Every function is module level and returns JSON-serialisable dicts, so :func:`fedlab.experiments.sweep`
can run them in worker processes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import (check_array, check_callable, check_choice, check_int, check_real, check_sequence,
                                check_simplex, check_type)
from fedlab.online.algorithms import (DISCRIMINATIVE_GRADIENTS, FEMOMD, FedOMD, GaussianFEMOMD, GaussianFEMOMDState,
                                     GMMEnvironment,
                                     center_error, logged, omd_log_step, regret_curves)
from fedlab.online.bounds import (fem_omd_regret_bound, neg_entropy_diameter, omd_inexact_regret_bound,
                                  omd_stepsize)
from fedlab.data.digits import load_digits_arrays
from fedlab.engine import ClientData, FederatedDataset, History, LocalSGD, run
from fedlab.models import LinearModel, Model

__all__ = [
    "GMM_CENTERS",
    "DIGITS_STREAM_MODES",
    "WEIGHT_PROCESSES",
    "GMMStream",
    "make_gmm_stream",
    "run_fem_omd_gmm",
    "loglog_slope",
    "gmm_regret",
    "THESIS_FIG49",
    "thesis_fig49_configs",
    "regret_summary",
    "gradient_error_breakdown",
    "separated_limit_regret",
    "MixtureStream",
    "DigitsMixtureStream",
    "REGRET_METHODS",
    "logistic_comparator",
    "mixture_stream_regret",
    "digits_stream_regret",
    "sublinear_from",
]

GMM_CENTERS = ("circle", "paper")
DIGITS_STREAM_MODES = ("label_groups", "permutation")
WEIGHT_PROCESSES = ("iid", "fixed")
REGRET_METHODS = ("fem_omd", "single", "fedomd")
"""The methods of :func:`mixture_stream_regret`: FEM-OMD, its one-component version, FedOMD."""


# ----------------------------------------------------------------------------------------- GMM stream

@dataclass(frozen=True)
class GMMStream:
    """True centres ``means`` (m, d) and weights ``weights`` (T, C, m) of a federated GMM stream."""

    means: np.ndarray
    weights: np.ndarray

    def __post_init__(self) -> None:
        means = check_array("means", self.means, ndim=2)
        if 0 in means.shape:
            raise ValueError(f"means must have shape (m, d) with m, d >= 1, got {means.shape}.")
        weights = check_simplex("weights", self.weights, ndim=3, size=means.shape[0])
        if 0 in weights.shape[:2]:
            raise ValueError(f"weights must have shape (T, C, m) with T, C >= 1, got {weights.shape}.")
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "weights", weights)

    @property
    def n_components(self) -> int:
        return int(self.means.shape[0])

    @property
    def dim(self) -> int:
        return int(self.means.shape[1])

    @property
    def horizon(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_clients(self) -> int:
        return int(self.weights.shape[1])

    @property
    def min_separation(self) -> float:
        """Smallest distance between two centres (``inf`` for one component)."""
        if self.n_components < 2:
            return float("inf")
        dist = np.linalg.norm(self.means[:, None] - self.means[None], axis=-1)
        return float(dist[~np.eye(self.n_components, dtype=bool)].min())


def make_gmm_stream(*, n_components: int = 3, dim: int = 2, n_clients: int = 20, horizon: int = 200,
                    spread: float = 4.0, alpha: float = 0.1, centers: str = "circle", weight_floor: float = 1e-12,
                    seed: int = 0) -> GMMStream:
    r"""The synthetic environment of §4.4.5.1: fixed centres, i.i.d. Dirichlet weights per step and client.

    * ``centers="circle"`` (dynamic spec A.7, [assumption]):
      :math:`\mu^*_j = s(\cos 2\pi j/m, \sin 2\pi j/m, 0, \dots)`, so the smallest centre distance is
      :math:`2s\sin(\pi/m)` (:math:`s\sqrt3` for m = 3) and ``spread`` is a clean separation knob;
    * ``centers="paper"``: :math:`\mu^*_j\sim\mathcal N(0, sI_d)` (``spread`` read as a variance, as
      ":math:`\mathcal N(0, s\mathbf I_d)`" in the thesis); with d = 2, m = 3 two centres are often close.

    Weights :math:`\pi^*_{t,c}\sim\mathrm{Dir}(\alpha 1_m)`, floored at ``weight_floor`` and renormalised.

    Parameters
    ----------
    n_components, dim, n_clients, horizon : int
        m (>= 1), d (>= 2 for ``"circle"``), C and T.
    spread : float
        s > 0.
    alpha : float
        Dirichlet concentration > 0 (0.1 in the thesis).
    centers : {"circle", "paper"}
    weight_floor : float
        In [0, 1/m).
    seed : int

    Returns
    -------
    GMMStream
    """
    m = check_int("n_components", n_components, low=1)
    d = check_int("dim", dim, low=1)
    c = check_int("n_clients", n_clients, low=1)
    t = check_int("horizon", horizon, low=1)
    s = check_real("spread", spread, low=0, low_open=True)
    alpha = check_real("alpha", alpha, low=0, low_open=True)
    check_choice("centers", centers, GMM_CENTERS)
    floor = check_real("weight_floor", weight_floor, low=0, high=1.0 / m, high_open=True)
    seed = check_int("seed", seed, low=0)
    rng = numpy_rng(seed, 0, Stream.ONLINE_ENV)
    if centers == "circle":
        if d < 2:
            raise ValueError(f"centers='circle' needs dim >= 2, got dim={d}.")
        angle = 2 * np.pi * np.arange(m) / m
        means = np.zeros((m, d))
        means[:, 0], means[:, 1] = s * np.cos(angle), s * np.sin(angle)
    else:
        means = math.sqrt(s) * rng.standard_normal((m, d))
    weights = rng.dirichlet(np.full(m, alpha), size=(t, c))
    weights = np.maximum(weights, floor)
    return GMMStream(means, weights / weights.sum(-1, keepdims=True))


def loglog_slope(t: Any, values: Any, *, start: float = 0.25) -> float:
    r"""Least-squares slope of :math:`\log R_t` against :math:`\log t` on :math:`t\in[\text{start}\cdot T, T]`.

    About 1 for linear regret, 0.5 for :math:`\sqrt t`; ``nan`` when a value in the window is not positive.

    Parameters
    ----------
    t : array (T,)
        Positive, increasing times.
    values : array (T,)
        Regret curve.
    start : float
        Fraction of the horizon where the window starts, in [0, 1).

    Returns
    -------
    float
    """
    t = check_array("t", t, ndim=1)
    v = check_array("values", values, shape=t.shape)
    start = check_real("start", start, low=0, high=1, high_open=True)
    if np.any(t <= 0):
        raise ValueError("t must be positive.")
    keep = t >= start * t[-1]
    if keep.sum() < 2:
        raise ValueError(f"the window t >= {start} * T holds fewer than two points.")
    if np.any(v[keep] <= 0):
        return float("nan")
    return float(np.polyfit(np.log(t[keep]), np.log(v[keep]), 1)[0])


def run_fem_omd_gmm(stream: GMMStream, *, n_samples: int = 30, n_em_steps: int = 3, lr: float = 1.0,
                    schedule: str = "anytime", split: bool = True, grad_clip: float | None = 10.0,
                    gradient: str = "model", pi_init: str = "uniform", n_mc: int | None = None, n_mc_loss: int = 200,
                    means_init: Any = None, init_scale: float = 1.0 / 16, variance: float = 1.0,
                    seed: int = 0) -> tuple[GaussianFEMOMDState, History]:
    r"""FEM-OMD for Gaussian mixtures on ``stream``, online on the engine (Algorithm 15; thesis §4.4.5.1).

    ``fedlab.engine.run(GaussianFEMOMD(...), GMMEnvironment(stream.means, stream.weights, ...), rounds=T,
    order="evaluate_first")``: History's round t holds the loss of the model played at step t + 1, read it with
    :func:`~fedlab.online.algorithms.regret_curves`, :func:`~fedlab.online.algorithms.played_weights` and
    :func:`~fedlab.online.algorithms.logged`. The environment's draws and the algorithm's use the same ``seed``.

    Parameters
    ----------
    stream : GMMStream
    n_samples, n_mc_loss, variance
        Of :class:`~fedlab.online.algorithms.GMMEnvironment`.
    n_em_steps, lr, schedule, split, grad_clip, gradient, pi_init, n_mc, means_init, init_scale
        Of :class:`~fedlab.online.algorithms.GaussianFEMOMD`.
    seed : int

    Returns
    -------
    state : GaussianFEMOMDState
        After the T steps (its means are :math:`\mu_{T+1}`).
    History
    """
    if not isinstance(stream, GMMStream):
        raise TypeError(f"stream must be a GMMStream (make_gmm_stream), got {type(stream).__name__}.")
    environment = GMMEnvironment(stream.means, stream.weights, n_samples=n_samples, n_mc_loss=n_mc_loss,
                                 variance=variance, seed=seed)
    algorithm = GaussianFEMOMD(n_em_steps=n_em_steps, lr=lr, schedule=schedule, split=split, grad_clip=grad_clip,
                               gradient=gradient, pi_init=pi_init, n_mc=n_mc, means_init=means_init,
                               init_scale=init_scale)
    return run(algorithm, environment, rounds=environment.horizon, seed=seed, order="evaluate_first", progress=False)


def gmm_regret(*, n_samples: int = 30, n_clients: int = 20, spread: float = 4.0, lr: float = 1.0,
               schedule: str = "anytime", horizon: int = 200, n_components: int = 3, dim: int = 2,
               alpha: float = 0.1, n_em_steps: int = 3, centers: str = "circle", grad_clip: float | None = 10.0,
               split: bool = True, gradient: str = "model", n_mc_loss: int = 200, seed: int = 0) -> dict:
    r"""FEM-OMD on :func:`make_gmm_stream` (same seed for the stream and the run); JSON summary.

    Returns
    -------
    dict
        ``t``, ``mean_regret`` (:math:`\bar R_t`), ``regret_per_step`` (:math:`\bar R_T/T`), ``slope``
        (:func:`loglog_slope` on :math:`[T/4, T]`), ``center_error`` (curve of the T + 1 played means) and
        ``final_center_error``, ``mean_loss``, ``mean_grad_err``
        (:math:`\frac1C\sum_c\|\nabla_{t,c}-\hat\nabla_{t,c}\|_\infty`), ``max_grad_norm``, ``bound_443``
        (Theorem 4.4.3 evaluated with :math:`D_{\mathcal R} = \sqrt{\log m}`, the measured
        :math:`G_{\mathcal R} = \max\|\hat\nabla\|_\infty`, :math:`D_{\mathcal X} = 2` and the measured errors, a
        curve over horizons), ``bound_442`` (:func:`~fedlab.online.bounds.fem_omd_regret_bound`),
        ``min_separation``.
    """
    stream = make_gmm_stream(n_components=n_components, dim=dim, n_clients=n_clients, horizon=horizon,
                             spread=spread, alpha=alpha, centers=centers, seed=seed)
    state, history = run_fem_omd_gmm(stream, n_samples=n_samples, n_em_steps=n_em_steps, lr=lr, schedule=schedule,
                                     split=split, grad_clip=grad_clip, gradient=gradient, n_mc_loss=n_mc_loss,
                                     seed=seed)
    t = np.arange(1, horizon + 1)
    regret = regret_curves(history).mean(1)
    g_max = float(logged(history, "grad_norm").max())
    err = logged(history, "grad_err").mean(1)
    d_r = neg_entropy_diameter(n_components)
    bound_443 = d_r * g_max * np.sqrt(t) + 2.0 * np.cumsum(err)
    assert math.isclose(bound_443[-1], omd_inexact_regret_bound(horizon, d_r, g_max, 2.0, err), rel_tol=1e-9)
    centre = history.curve("center_error", "min")[1].tolist() + [center_error(state.means, stream.means)]
    return {"t": t.tolist(), "mean_regret": regret.tolist(), "regret_per_step": float(regret[-1] / horizon),
            "slope": loglog_slope(t, regret), "center_error": centre, "final_center_error": centre[-1],
            "mean_loss": np.stack(history.clients["kl"]).mean(1).tolist(), "mean_grad_err": err.tolist(),
            "max_grad_norm": g_max, "bound_443": bound_443.tolist(),
            "bound_442": np.atleast_1d(fem_omd_regret_bound(t, n_components, n_samples)).tolist(),
            "min_separation": stream.min_separation}


#: What §4.4.5.1 states about the runs of Fig. 4.9: centres drawn :math:`\mathcal N(0, sI_d)` with s = 5, weights
#: Dir(0.1), C = 50 and n = 30 unless varied. It does not give d, m, T, K, the step or the initialisation.
THESIS_FIG49 = {"centers": "paper", "spread": 5.0, "alpha": 0.1, "n_clients": 50, "n_samples": 30}


def thesis_fig49_configs(*, horizon: int, dim: int = 2, n_components: int = 3, n_values=(1, 10, 30),
                         c_values=(5, 10, 50, 100), s_values=(1.0, 2.5, 5.0)) -> dict[str, list[dict]]:
    r""":func:`gmm_regret` configurations of the three panels of Fig. 4.9 at the thesis's stated setting.

    :data:`THESIS_FIG49` fixes what the thesis states; ``dim``, ``n_components`` and ``horizon`` are the
    assumptions (the thesis gives none of them), as are :func:`gmm_regret`'s defaults for the rest (K = 3, anytime
    step :math:`\eta_t = \sqrt{\log m / t}`, clip 10, :math:`\mu_1` within the Assumption-28 radius).

    Parameters
    ----------
    horizon : int
        T >= 2.
    dim, n_components : int
        d >= 1 and m >= 1.
    n_values : sequence of int
        Left panel: samples per step at C = 50, s = 5.
    c_values : sequence of int
        Centre panel: clients at n = 1, s = 5.
    s_values : sequence of float
        Right panel: centre variances s at n = 30, C = 50.

    Returns
    -------
    dict
        ``{"n": [...], "C": [...], "s": [...]}``, each a list of keyword dicts for :func:`gmm_regret`.
    """
    horizon = check_int("horizon", horizon, low=2)
    base = {**THESIS_FIG49, "horizon": horizon, "dim": check_int("dim", dim, low=1),
            "n_components": check_int("n_components", n_components, low=1)}
    return {"n": [{**base, "n_samples": check_int("n_values", n, low=1)}
                  for n in check_sequence("n_values", n_values, nonempty=True)],
            "C": [{**base, "n_samples": 1, "n_clients": check_int("c_values", c, low=1)}
                  for c in check_sequence("c_values", c_values, nonempty=True)],
            "s": [{**base, "spread": check_real("s_values", s, low=0, low_open=True)}
                  for s in check_sequence("s_values", s_values, nonempty=True)]}


def regret_summary(results: Any) -> dict:
    r"""Seed aggregate of :func:`gmm_regret` results of one setting.

    Parameters
    ----------
    results : sequence of dict
        :func:`gmm_regret` outputs of the same configuration (one per seed).

    Returns
    -------
    dict
        ``t``; ``runs`` (n_seeds, T) regret curves :math:`\bar R_t`; ``slope`` and ``slope_std`` (mean and std over
        seeds of :func:`loglog_slope` on :math:`[T/4, T]`), ``rate`` (mean :math:`\bar R_T/T`),
        ``center_error`` (mean final centre error), ``min_separation`` (mean smallest centre distance).
    """
    check_sequence("results", results, nonempty=True)
    for r in results:
        if not isinstance(r, dict) or "mean_regret" not in r or "slope" not in r:
            raise ValueError("results must hold gmm_regret outputs (dicts with 'mean_regret' and 'slope').")
    t = results[0]["t"]
    if any(r["t"] != t for r in results):
        raise ValueError("results must share the horizon (the same t).")
    slopes = np.array([r["slope"] for r in results], dtype=float)
    return {"t": list(t), "runs": [list(r["mean_regret"]) for r in results], "slope": float(np.mean(slopes)),
            "slope_std": float(np.std(slopes)), "rate": float(np.mean([r["regret_per_step"] for r in results])),
            "center_error": float(np.mean([r["final_center_error"] for r in results])),
            "min_separation": float(np.mean([r["min_separation"] for r in results]))}


def gradient_error_breakdown(history: History, *, clip: float = 10.0) -> dict:
    r"""Where the gradient error :math:`\|\nabla_{t,c} - \hat\nabla_{t,c}\|_\infty` of (4.42) comes from.

    The clip of :class:`~fedlab.online.algorithms.GaussianFEMOMD` bounds the *estimate* :math:`\hat\nabla`; the error
    is measured against the exact gradient (4.27), which is never clipped and reaches
    :math:`\pi^*_{t,c,j}/\pi_{t,c,j}` when a played weight is small (Dirichlet(0.1) weights violate
    Assumption 30). The (step, client) pairs split into those whose exact gradient exceeds the clip and the others.

    Parameters
    ----------
    history : History
        Of a :class:`~fedlab.online.algorithms.GaussianFEMOMD` run (its log holds ``grad_err`` and
        ``true_grad_norm``).
    clip : float
        The run's ``grad_clip`` (> 0).

    Returns
    -------
    dict
        ``mean``, ``median`` (of the error over all pairs), ``share_above`` (fraction of pairs with
        :math:`\|\nabla_{t,c}\|_\infty > \text{clip}`), ``mean_above`` / ``mean_below`` (mean error on each part, NaN
        when empty), ``share_of_total`` (the part of the summed error of (4.42) due to the pairs above the clip),
        ``max_true_norm`` (largest :math:`\|\nabla_{t,c}\|_\infty`).
    """
    clip = check_real("clip", clip, low=0, low_open=True)
    err, norm = logged(history, "grad_err"), logged(history, "true_grad_norm")
    above = norm > clip
    part = lambda mask: float(err[mask].mean()) if mask.any() else float("nan")
    return {"mean": float(err.mean()), "median": float(np.median(err)), "share_above": float(above.mean()),
            "mean_above": part(above), "mean_below": part(~above),
            "share_of_total": float(err[above].sum() / err.sum()) if err.sum() > 0 else 0.0,
            "max_true_norm": float(norm.max())}


def separated_limit_regret(*, n_components: int = 3, alpha: float = 0.1, horizon: int = 1000, seed: int = 0,
                           n_refine: int = 10) -> dict:
    r"""Entropic OMD in the fully separated limit, where Theorem 4.4.3 applies exactly (spec fact A9).

    With disjoint components the loss (4.24) becomes :math:`\psi_t(\pi) = \mathrm{KL}(\pi^*_t\|\pi)`, with gradient
    :math:`-\pi^*_t/\pi` (exact, no estimation error). OMD runs with the fixed step
    :math:`\eta = \sqrt{\log m}/(G\sqrt T)` (:func:`~fedlab.online.bounds.omd_stepsize`) where
    :math:`G \ge \max_t\|\nabla_t\|_\infty` along the run: starting from G = 1, the run is repeated with
    G raised to the largest gradient seen until no gradient exceeds G (at most ``n_refine`` runs; ``valid``
    tells whether the last run satisfies the theorem's condition).
    The comparator is :math:`\bar\pi^* = \frac1T\sum_t\pi^*_t`.

    Returns
    -------
    dict
        ``regret`` (:math:`R_T`), ``bound`` (:math:`D_{\mathcal R}G\sqrt T`), ``ratio``, ``grad_bound`` (G),
        ``max_grad`` (largest gradient of the last run), ``valid``, ``eta``, ``regret_curve`` (cumulative,
        against the horizon-T comparator).
    """
    m = check_int("n_components", n_components, low=2)
    alpha = check_real("alpha", alpha, low=0, low_open=True)
    horizon = check_int("horizon", horizon, low=1)
    n_refine = check_int("n_refine", n_refine, low=1)
    rng = numpy_rng(check_int("seed", seed, low=0), 0, Stream.ONLINE_ENV)
    pi_star = np.maximum(rng.dirichlet(np.full(m, alpha), size=horizon), 1e-12)
    pi_star /= pi_star.sum(1, keepdims=True)
    pi_bar = pi_star.mean(0)

    def kl(p, q):
        return np.sum(p * (np.log(p) - np.log(q)), axis=-1)

    g = 1.0
    for _ in range(n_refine):
        eta = omd_stepsize(horizon, m, g)
        log_pi, losses, g_seen = np.full(m, -math.log(m)), np.empty(horizon), 0.0
        for t in range(horizon):
            pi = np.exp(log_pi)
            losses[t] = kl(pi_star[t], pi)
            grad = -pi_star[t] / pi
            g_seen = max(g_seen, float(np.abs(grad).max()))
            log_pi = omd_log_step(log_pi, grad, eta, None)
        if g_seen <= g:          # G bounds every gradient of a run that used eta = D_R / (G sqrt T)
            break
        g = g_seen
    curve = np.cumsum(losses - kl(pi_star, pi_bar))
    bound = neg_entropy_diameter(m) * g * math.sqrt(horizon)
    return {"regret": float(curve[-1]), "bound": bound, "ratio": float(curve[-1] / bound), "grad_bound": g,
            "max_grad": g_seen, "valid": bool(g_seen <= g), "eta": eta, "regret_curve": curve.tolist()}


# ----------------------------------------------------------------------------------------- mixture streams

def _check_inputs(name: str, x: Any) -> np.ndarray:
    """Model inputs: a finite numeric array of shape (N, ...), N >= 1 (its dtype kept)."""
    x = check_array(name, x, dtype=None, finite=False)
    if x.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold numbers, got dtype {x.dtype}.")
    if x.ndim < 2 or len(x) == 0:
        raise ValueError(f"{name} must have shape (N, ...) with N >= 1 samples, got {x.shape}.")
    return check_array(name, x, dtype=None)


def _check_pool(name: str, pool: Any) -> tuple[np.ndarray, np.ndarray]:
    """A pool ``(x, y)``: ``x`` of shape (N, ...) and integer labels ``y`` >= 0 of shape (N,), N >= 1."""
    check_sequence(name, pool, size=2)
    x = _check_inputs(f"{name}[0]", pool[0])
    y = check_array(f"{name}[1]", pool[1], shape=(len(x),), nonnegative=True, dtype=np.int64)
    return x, y


class MixtureStream:
    r"""A mixture-structured stream over any labelled pools, for the discriminative FEM-OMD (§4.4.5.2).

    The training pool ``train = (x, y)`` and the test pool ``test`` are split into m base distributions:

    * ``"label_groups"`` (the thesis's construction): the ``n_classes`` classes cut into m random groups; component j
      draws a sample of a class in group j (label shift);
    * ``"permutation"``: component j draws any sample and relabels it with a fixed permutation
      :math:`\sigma_j` of the classes (:math:`\sigma_0` = identity; concept shift, a single model cannot fit it).

    At step t client c has weights :math:`\pi^*_{t,c}\sim\mathrm{Dir}(\alpha 1_m)` — drawn afresh at every step
    (``weights="iid"``, the thesis's environment) or once per client (``weights="fixed"``, a stationary
    personal mixture that online mirror descent can learn) — then counts
    :math:`\mathbf n_t\sim\mathcal M(n, \pi^*_{t,c})` of training samples and
    :math:`\mathbf n'_t\sim\mathcal M(n', \pi^*_{t,c})` of test samples from the m components (with
    replacement from the pools). ``stream(t)`` returns the step's :class:`~fedlab.engine.FederatedDataset`;
    every draw derives from ``(seed, t)``.

    Parameters
    ----------
    train, test : (x, y)
        Pools: ``x`` of shape (N, ...) (the model's input), ``y`` integer labels of shape (N,).
    n_classes : int, optional
        Default: the largest label + 1. Every component needs a sample in both pools.
    n_clients : int
        C (10 in the thesis).
    n_components : int
        m in [1, n_classes] (4 in the thesis).
    n_samples, n_test : int
        n >= 1 training and n' >= 1 test samples per client and step (6 and 1 for MNIST in the thesis).
    alpha : float
        Dirichlet concentration (0.1).
    mode : {"label_groups", "permutation"}
    weights : {"iid", "fixed"}
    seed : int
    groups_rng : numpy Generator, optional
        Draws the class groups (or permutations); default ``numpy_rng(seed, 0, Stream.ONLINE_POOL)``.
    """

    def __init__(self, train: Any, test: Any, *, n_classes: int | None = None, n_clients: int = 10,
                 n_components: int = 4, n_samples: int = 6, n_test: int = 1, alpha: float = 0.1,
                 mode: str = "label_groups", weights: str = "iid", seed: int = 0,
                 groups_rng: np.random.Generator | None = None) -> None:
        (self.x_train, self.y_train), (self.x_test, self.y_test) = _check_pool("train", train), _check_pool("test", test)
        top = int(max(self.y_train.max(), self.y_test.max())) + 1
        self.n_classes = top if n_classes is None else check_int("n_classes", n_classes, low=max(top, 1))
        self.n_clients = check_int("n_clients", n_clients, low=1)
        self.n_components = check_int("n_components", n_components, low=1, high=self.n_classes)
        self.n_samples = check_int("n_samples", n_samples, low=1)
        self.n_test = check_int("n_test", n_test, low=1)
        self.alpha = check_real("alpha", alpha, low=0, low_open=True)
        self.mode = check_choice("mode", mode, DIGITS_STREAM_MODES)
        self.weight_process = check_choice("weights", weights, WEIGHT_PROCESSES)
        self.seed = check_int("seed", seed, low=0)
        if groups_rng is not None and not isinstance(groups_rng, np.random.Generator):
            raise TypeError(f"groups_rng must be a numpy Generator, got {type(groups_rng).__name__}.")
        rng = numpy_rng(self.seed, 0, Stream.ONLINE_POOL) if groups_rng is None else groups_rng
        self._cache: dict[int, dict] = {}
        self._components(rng)

    def _components(self, rng: np.random.Generator) -> None:
        """Draw the class groups (or permutations) and index each component's samples in both pools."""
        m, k = self.n_components, self.n_classes
        if self.mode == "label_groups":
            self.groups = np.zeros(k, dtype=np.int64)
            for g, members in enumerate(np.array_split(rng.permutation(k), m)):
                self.groups[members] = g
            self.permutations = np.tile(np.arange(k), (m, 1))
            member = lambda y, j: np.flatnonzero(self.groups[y] == j)
        else:
            self.groups = None
            perms = [np.arange(k)]
            while len(perms) < m:
                p = rng.permutation(k)
                if not any(np.array_equal(p, q) for q in perms):
                    perms.append(p)
            self.permutations = np.stack(perms)
            member = lambda y, j: np.arange(len(y))
        self._pools = {"train": [member(self.y_train, j) for j in range(m)],
                       "test": [member(self.y_test, j) for j in range(m)]}
        for pool, parts in self._pools.items():
            empty = [j for j, idx in enumerate(parts) if len(idx) == 0]
            if empty:
                raise ValueError(f"{pool} has no sample of component(s) {empty} (classes "
                                 f"{np.flatnonzero(np.isin(self.groups, empty)).tolist()}).")

    def weights(self, t: int) -> np.ndarray:
        r""":math:`\pi^*_{t,c}` of every client, shape (C, m)."""
        t = check_int("t", t, low=0)
        key = t if self.weight_process == "iid" else 0
        w = numpy_rng(self.seed, key, Stream.ONLINE_WEIGHTS).dirichlet(np.full(self.n_components, self.alpha),
                                                                       size=self.n_clients)
        w = np.maximum(w, 1e-12)
        return w / w.sum(1, keepdims=True)

    def _draw(self, rng: np.random.Generator, pi: np.ndarray, n: int, pool: str) -> tuple[np.ndarray, np.ndarray]:
        counts = rng.multinomial(n, pi)
        idx, comp = [], []
        for j, k in enumerate(counts):
            if k:
                idx.append(rng.choice(self._pools[pool][j], size=k, replace=True))
                comp.append(np.full(k, j))
        return np.concatenate(idx), np.concatenate(comp)

    def _indices(self, t: int) -> dict:
        """Pool indices and components of step t's draws (cached: the images are gathered on demand)."""
        if t not in self._cache:
            pi = self.weights(t)
            rng = numpy_rng(self.seed, t, Stream.ONLINE_DRAW)
            out = {"train": [], "test": []}
            for c in range(self.n_clients):
                out["train"].append(self._draw(rng, pi[c], self.n_samples, "train"))
                out["test"].append(self._draw(rng, pi[c], self.n_test, "test"))
            self._cache[t] = out
        return self._cache[t]

    def samples(self, t: int) -> dict:
        """The raw draws of step t: lists (one per client) of ``x``, ``y``, ``z`` (component) for train and test."""
        t = check_int("t", t, low=0)
        out = {k: [] for k in ("x", "y", "z", "x_test", "y_test", "z_test")}
        for suffix, pool, x, y in (("", "train", self.x_train, self.y_train),
                                   ("_test", "test", self.x_test, self.y_test)):
            for idx, comp in self._indices(t)[pool]:
                out["x" + suffix].append(x[idx])
                out["y" + suffix].append(self.permutations[comp, y[idx]])
                out["z" + suffix].append(comp)
        return out

    def __call__(self, t: int) -> FederatedDataset:
        s = self.samples(t)
        return FederatedDataset(ClientData.from_arrays(s["x"], s["y"]),
                                ClientData.from_arrays(s["x_test"], s["y_test"]), self.n_classes)

    def pooled(self, horizon: int) -> tuple[np.ndarray, np.ndarray]:
        """All training samples of steps ``0..horizon-1``, pooled over clients: ``(x (N, ...), y (N,))``."""
        horizon = check_int("horizon", horizon, low=1)
        xs, ys = [], []
        for t in range(horizon):
            s = self.samples(t)
            xs.extend(s["x"])
            ys.extend(s["y"])
        return np.concatenate(xs), np.concatenate(ys)


class DigitsMixtureStream(MixtureStream):
    r""":class:`MixtureStream` on scikit-learn's digits (§4.4.5.2 at small scale).

    The 1797 images (64 features in [0, 1]) are split once into a training pool (75 %) and a test pool, with the
    generator that then draws the class groups (so a seed gives the same stream as before the generalisation).
    ``x``/``y`` hold all the images, ``train_pool``/``test_pool`` the indices of each pool in them.

    Parameters
    ----------
    n_clients, n_components, n_samples, n_test, alpha, mode, weights, seed
        As :class:`MixtureStream` (``n_components`` in [1, 10]).
    """

    def __init__(self, *, n_clients: int = 10, n_components: int = 4, n_samples: int = 6, n_test: int = 1,
                 alpha: float = 0.1, mode: str = "label_groups", weights: str = "iid", seed: int = 0) -> None:
        seed = check_int("seed", seed, low=0)
        x, y = load_digits_arrays()
        self.x, self.y = x.astype(np.float32), y.astype(np.int64)
        rng = numpy_rng(seed, 0, Stream.ONLINE_POOL)
        perm = rng.permutation(len(y))
        cut = int(0.75 * len(y))
        self.train_pool, self.test_pool = np.sort(perm[:cut]), np.sort(perm[cut:])
        super().__init__((self.x[self.train_pool], self.y[self.train_pool]),
                         (self.x[self.test_pool], self.y[self.test_pool]), n_classes=10, n_clients=n_clients,
                         n_components=n_components, n_samples=n_samples, n_test=n_test, alpha=alpha, mode=mode,
                         weights=weights, seed=seed, groups_rng=rng)


def _accuracy_curves(history) -> np.ndarray:
    """Per step and client accuracy of the played model on the step's test samples, shape (T, C)."""
    return np.stack(history.clients["test_accuracy"])


def logistic_comparator(x: Any, y: Any) -> Callable[[np.ndarray], np.ndarray]:
    """:math:`h^*` of the digits stream: one softmax regression (scikit-learn, default :math:`L_2` penalty) fitted
    on ``(x, y)``; returns its ``predict``."""
    from sklearn.linear_model import LogisticRegression

    x = _check_inputs("x", x)
    if x.ndim != 2:
        raise ValueError(f"x must have shape (N, d), got {x.shape}.")
    y = check_array("y", y, shape=(x.shape[0],), dtype=np.int64)
    return LogisticRegression(max_iter=300).fit(x, y).predict


def _comparator_accuracy(stream: MixtureStream, predict: Callable, horizon: int) -> np.ndarray:
    r""":math:`\mathrm{Acc}(h^*, \mathcal S'_{t,c})` of every step and client, shape (T, C)."""
    tests = [(x, y) for t in range(horizon) for x, y in zip(stream.samples(t)["x_test"], stream.samples(t)["y_test"])]
    hits = np.asarray(predict(np.concatenate([x for x, _ in tests]))) == np.concatenate([y for _, y in tests])
    comp = np.array([h.mean() for h in np.split(hits, np.cumsum([len(y) for _, y in tests])[:-1])])
    return comp.reshape(horizon, stream.n_clients)


def _regret_entry(comp: np.ndarray, acc: np.ndarray, horizon: int) -> dict:
    return {"regret": np.cumsum((comp - acc).mean(1)).tolist(), "accuracy": acc.mean(1).tolist(),
            "mean_accuracy": float(acc[horizon // 2:].mean())}


def mixture_stream_regret(stream: MixtureStream, *, model: Callable[[], Model], comparator: Callable,
                          horizon: int = 100, methods=REGRET_METHODS, lr: float = 1.0, lr_em: float = 0.5,
                          local_steps: int = 1, batch_size: int = 6, n_em_steps: int = 1, average: str = "last",
                          gradient: str = "model", lr_fedomd: float | None = None, seed: int = 0,
                          device=None) -> dict:
    r"""Discriminative FEM-OMD, its one-component version and FedOMD on ``stream``: the accuracy regret (4.47).

    :math:`R'_{t,c} = \sum_{s\le t}\mathrm{Acc}(h^*, \mathcal S'_{s,c}) - \mathrm{Acc}(h_{s,c}, \mathcal S'_{s,c})`
    with :math:`h^*` = ``comparator(x, y)`` (a ``predict`` function) fitted on every training sample of the horizon,
    pooled (:meth:`MixtureStream.pooled`). ``"fem_omd"`` is :class:`~fedlab.online.algorithms.FEMOMD` with the
    stream's m components (OMD step ``lr``, M-step SGD ``lr_em``); ``"single"`` the same with ``m = 1`` (one global
    model updated online with a constant step); ``"fedomd"`` the thesis's baseline
    :class:`~fedlab.online.algorithms.FedOMD` (Euclidean mirror map, :math:`\eta_t = \eta_0/\sqrt t`,
    :math:`\eta_0` = ``lr_fedomd``, default ``lr_em``). Every method starts from ``model()``'s initialisation for
    ``seed`` and runs online on the engine (``order="evaluate_first"``, on ``device``).

    Returns
    -------
    dict
        ``t``; per method of ``methods``: ``regret`` (mean over clients, cumulative), ``accuracy`` (per step, mean
        over clients) and ``mean_accuracy`` (over the second half of the horizon); ``comparator_accuracy`` (mean of
        :math:`h^*` over all test draws); ``n_test`` (the test samples behind each ``mean_accuracy``); with
        ``"fem_omd"``, ``final_weights`` (:math:`\pi_{T,c}`, (C, m)).
    """
    check_type("stream", stream, MixtureStream)
    check_callable("model", model)
    check_callable("comparator", comparator)
    horizon = check_int("horizon", horizon, low=1)
    methods = [check_choice("methods", name, REGRET_METHODS)
               for name in check_sequence("methods", methods, nonempty=True)]
    check_real("lr", lr, low=0, low_open=True)
    check_real("lr_em", lr_em, low=0, low_open=True)
    lr_fedomd = lr_em if lr_fedomd is None else check_real("lr_fedomd", lr_fedomd, low=0, low_open=True)
    solver = LocalSGD(lr=lr_em, local_steps=local_steps, batch_size=batch_size)
    check_int("n_em_steps", n_em_steps, low=1)
    check_choice("average", average, ("running", "last"))
    check_choice("gradient", gradient, DISCRIMINATIVE_GRADIENTS)
    seed = check_int("seed", seed, low=0)
    out: dict[str, Any] = {"t": list(range(1, horizon + 1)),
                           "n_test": (horizon - horizon // 2) * stream.n_clients * stream.n_test}
    comp = _comparator_accuracy(stream, comparator(*stream.pooled(horizon)), horizon)
    out["comparator_accuracy"] = float(comp.mean())
    for name in REGRET_METHODS:
        if name not in methods:
            continue
        if name == "fedomd":
            algo = FedOMD(model(), replace(solver, lr=lr_fedomd), backend="batched")
        else:
            algo = FEMOMD(model(), solver, n_components=stream.n_components if name == "fem_omd" else 1, lr=lr,
                          n_em_steps=n_em_steps, average=average, gradient=gradient, backend="batched")
        state, history = run(algo, stream, rounds=horizon, seed=seed, order="evaluate_first", progress=False,
                             device=device)
        out[name] = _regret_entry(comp, _accuracy_curves(history), horizon)
        if name == "fem_omd":
            out["final_weights"] = state.weights.tolist()
    return out


def digits_stream_regret(*, n_components: int = 4, n_clients: int = 10, n_samples: int = 6, n_test: int = 1,
                         horizon: int = 100, alpha: float = 0.1, mode: str = "label_groups", weights: str = "iid",
                         lr: float = 1.0,
                         lr_em: float = 0.5, local_steps: int = 1, batch_size: int = 6, n_em_steps: int = 1,
                         average: str = "last", gradient: str = "model", lr_fedomd: float | None = None,
                         seed: int = 0) -> dict:
    r""":func:`mixture_stream_regret` on :class:`DigitsMixtureStream` with softmax regressions (64 -> 10).

    :math:`h^*` is one softmax regression fitted (scikit-learn, default :math:`L_2` penalty) on every training
    sample of the horizon, pooled (:func:`logistic_comparator`) — our reading of "the optimal model trained on the
    aggregated samples". The one-component run (``"single"``: a single global model updated online with
    ``local_sgd``, constant step ``lr_em``, and server averaging) is the no-mixture reference; ``"fedomd"`` is the
    thesis's baseline, :class:`~fedlab.online.algorithms.FedOMD` with the Euclidean mirror map and the decaying step
    :math:`\eta_t = \eta_0/\sqrt t`, :math:`\eta_0` = ``lr_fedomd`` (default ``lr_em``).

    Returns
    -------
    dict
        As :func:`mixture_stream_regret`, with the three methods.
    """
    stream = DigitsMixtureStream(n_clients=n_clients, n_components=n_components, n_samples=n_samples, n_test=n_test,
                                 alpha=alpha, mode=mode, weights=weights, seed=seed)
    return mixture_stream_regret(stream, model=lambda: LinearModel(64, 10), comparator=logistic_comparator,
                                 horizon=horizon, lr=lr, lr_em=lr_em, local_steps=local_steps, batch_size=batch_size,
                                 n_em_steps=n_em_steps, average=average, gradient=gradient, lr_fedomd=lr_fedomd,
                                 seed=seed)


def sublinear_from(t: Any, values: Any, *, linear: float = 0.8, start: float = 0.25, every: int | None = None):
    r"""The first checkpoint from which a regret curve reads as sub-linear up to the horizon, or ``None``.

    At checkpoint :math:`\tau` the curve is *sub-linear* when its log-log slope on :math:`[\text{start}\cdot\tau,
    \tau]` (:func:`loglog_slope` of the curve cut at :math:`\tau`) is below ``linear`` (0.8: the notebook's rule), or
    when :math:`R_\tau \le 0`; a window where the regret turns positive is not. Checkpoints are every ``every``
    steps (default :math:`\max(1, \lfloor T/100\rfloor)`) from the fourth step on, and T. Returns the smallest
    checkpoint from which every later checkpoint is sub-linear (``None``: not sub-linear at T).
    """
    t = check_array("t", t, ndim=1)
    v = check_array("values", values, shape=t.shape)
    linear = check_real("linear", linear, low=0, low_open=True)
    start = check_real("start", start, low=0, high=1, high_open=True)
    if len(t) < 2 or np.any(np.diff(t) <= 0) or t[0] <= 0:
        raise ValueError("t must hold at least two positive, increasing times.")
    every = max(1, len(t) // 100) if every is None else check_int("every", every, low=1)
    ends = sorted({i for i in range(every - 1, len(t), every) if i >= min(3, len(t) - 1)} | {len(t) - 1})
    found = None
    for i in ends:
        window = t[: i + 1] >= start * t[i]
        slope = loglog_slope(t[: i + 1], v[: i + 1], start=start) if window.sum() >= 2 else float("nan")
        ok = bool(v[i] <= 0 or slope < linear)
        found = (found if found is not None else int(t[i])) if ok else None
    return found
