r"""Experiments of the online-mixtures notebook (thesis §4.4.5): regret runs and the rule that reads their shape.

* :func:`run_fem_omd_gmm`: FEM-OMD for GMMs on a :class:`~fedlab.online.data.GMMStream`, run by the engine (a
  History); :func:`gmm_regret`: one run on :func:`~fedlab.online.data.make_gmm_stream` summarised as JSON (regret
  curve, slope, bounds);
* :func:`thesis_fig49_configs` and :func:`regret_summary`: the three panels of Fig. 4.9 at the setting the thesis
  states (:data:`fedlab.online.published.THESIS_FIG49`), run with :func:`gmm_regret`;
* :func:`gradient_error_breakdown`: where the gradient error of (4.42) comes from along a run;
* :func:`separated_limit_regret`: the fully separated limit (loss :math:`\mathrm{KL}(\pi^*_t\|\pi)`), where
  Theorem 4.4.3's bound can be checked exactly (spec fact A9), run by the engine with
  :class:`~fedlab.online.algorithms.OMD`;
* :func:`mixture_stream_regret`: the discriminative variant on a :class:`~fedlab.online.data.MixtureStream` with
  the accuracy regret (4.47) against a comparator :math:`h^*` (:func:`logistic_comparator` on the digits);
  :func:`digits_stream_regret` is its case on :class:`~fedlab.online.data.DigitsMixtureStream`;
* :func:`late_regret_ratio`: the per-step regret of the last quarter over that of the second quarter (1 for a
  linear regret, 0.65 for :math:`\sqrt t`), the chapter's rule for "linear" against "sub-linear"
  (:data:`LINEAR_RATIO`); :func:`sublinear_from`: from which step a regret curve stays sub-linear by that rule.

Every function is module level and returns JSON-serialisable dicts, so :func:`fedlab.experiments.sweep`
can run them in worker processes.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from fedlab._validation import (check_array, check_callable, check_choice, check_int, check_real, check_sequence,
                                check_type)
from fedlab.engine import History, LocalSGD, run
from fedlab.models import LinearModel, Model
from fedlab.online.algorithms import (DISCRIMINATIVE_GRADIENTS, FEMOMD, OMD, FedOMD, GaussianFEMOMD,
                                      GaussianFEMOMDState, center_error, logged, regret_curves)
from fedlab.online.bounds import fem_omd_regret_bound, neg_entropy_diameter, omd_inexact_regret_bound, omd_stepsize
from fedlab.online.data import (DigitsMixtureStream, GMMEnvironment, GMMStream, MixtureStream, dirichlet_weights,
                                make_gmm_stream)
from fedlab.online.published import THESIS_FIG49
from fedlab.tables import loglog_slope

__all__ = [
    "REGRET_METHODS",
    "LINEAR_RATIO",
    "EARLY_WINDOW",
    "LATE_WINDOW",
    "run_fem_omd_gmm",
    "gmm_regret",
    "thesis_fig49_configs",
    "regret_summary",
    "gradient_error_breakdown",
    "separated_limit_regret",
    "logistic_comparator",
    "mixture_stream_regret",
    "digits_stream_regret",
    "late_regret_ratio",
    "sublinear_from",
]

REGRET_METHODS = ("fem_omd", "single", "fedomd")
"""The methods of :func:`mixture_stream_regret`: FEM-OMD, its one-component version, FedOMD."""
EARLY_WINDOW, LATE_WINDOW = (0.25, 0.5), (0.75, 1.0)
"""The windows of :func:`late_regret_ratio`, as fractions of the horizon: the second and the last quarter."""
LINEAR_RATIO = 0.8
r"""A regret curve reads as *linear* when :func:`late_regret_ratio` is at least 0.8, as *sub-linear* below: the
ratio is 1 for a linear regret (a constant per-step regret) and :math:`(7/3)^{p-1}` for :math:`t^p`, 0.65 for
:math:`\sqrt t`, the rate of Theorem 4.4.3; 0.8 is about their geometric mean (:math:`p \approx 0.74`)."""


# ----------------------------------------------------------------------------------------- GMM runs

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
        Of :class:`~fedlab.online.data.GMMEnvironment`.
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
    r"""FEM-OMD on :func:`~fedlab.online.data.make_gmm_stream` (same seed for the stream and the run); JSON summary.

    Returns
    -------
    dict
        ``t``, ``mean_regret`` (:math:`\bar R_t`), ``regret_per_step`` (:math:`\bar R_T/T`), ``slope`` (least-squares
        slope of :math:`\log\bar R_t` against :math:`\log t` on :math:`[T/4, T]`, :func:`fedlab.tables.loglog_slope`;
        ``nan`` when the regret is not positive there), ``center_error`` (curve of the T + 1 played means) and
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
    window = t >= 0.25 * horizon
    slope = (loglog_slope(t[window], regret[window]) if window.sum() >= 2 and np.all(regret[window] > 0)
             else float("nan"))
    return {"t": t.tolist(), "mean_regret": regret.tolist(), "regret_per_step": float(regret[-1] / horizon),
            "slope": slope, "center_error": centre, "final_center_error": centre[-1],
            "mean_loss": np.stack(history.clients["kl"]).mean(1).tolist(), "mean_grad_err": err.tolist(),
            "max_grad_norm": g_max, "bound_443": bound_443.tolist(),
            "bound_442": np.atleast_1d(fem_omd_regret_bound(t, n_components, n_samples)).tolist(),
            "min_separation": stream.min_separation}


def thesis_fig49_configs(*, horizon: int, dim: int = 2, n_components: int = 3, n_values=(1, 10, 30),
                         c_values=(5, 10, 50, 100), s_values=(1.0, 2.5, 5.0)) -> dict[str, list[dict]]:
    r""":func:`gmm_regret` configurations of the three panels of Fig. 4.9 at the thesis's stated setting.

    :data:`~fedlab.online.published.THESIS_FIG49` fixes what the thesis states; ``dim``, ``n_components`` and
    ``horizon`` are the assumptions (the thesis gives none of them), as are :func:`gmm_regret`'s defaults for the rest
    (K = 3, anytime step :math:`\eta_t = \sqrt{\log m / t}`, clip 10, :math:`\mu_1` within the Assumption-28 radius).

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
    :math:`-\pi^*_t/\pi` (exact, no estimation error), on the weights :math:`\pi^*_t` of
    :func:`~fedlab.online.data.dirichlet_weights`. :class:`~fedlab.online.algorithms.OMD` runs on the engine with
    the fixed step :math:`\eta = \sqrt{\log m}/(G\sqrt T)` (:func:`~fedlab.online.bounds.omd_stepsize`) where
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
    pi_star = dirichlet_weights(n_components=m, alpha=alpha, horizon=horizon, seed=check_int("seed", seed, low=0))
    pi_bar = pi_star.mean(0)
    g = 1.0
    for _ in range(n_refine):
        eta = omd_stepsize(horizon, m, g)
        _, history = run(OMD(lr=eta, schedule="constant"), lambda t: pi_star[t][None], rounds=horizon,
                         order="evaluate_first", progress=False)
        g_seen = float(logged(history, "max_grad").max())
        if g_seen <= g:          # G bounds every gradient of a run that used eta = D_R / (G sqrt T)
            break
        g = g_seen
    losses = np.stack(history.clients["kl"])[:, 0]
    curve = np.cumsum(losses - np.sum(pi_star * (np.log(pi_star) - np.log(pi_bar)), axis=-1))
    bound = neg_entropy_diameter(m) * g * math.sqrt(horizon)
    return {"regret": float(curve[-1]), "bound": bound, "ratio": float(curve[-1] / bound), "grad_bound": g,
            "max_grad": g_seen, "valid": bool(g_seen <= g), "eta": eta, "regret_curve": curve.tolist()}


# ----------------------------------------------------------------------------------------- mixture streams

def _accuracy_curves(history) -> np.ndarray:
    """Per step and client accuracy of the played model on the step's test samples, shape (T, C)."""
    return np.stack(history.clients["test_accuracy"])


def logistic_comparator(x: Any, y: Any) -> Callable[[np.ndarray], np.ndarray]:
    """:math:`h^*` of the digits stream: one softmax regression (scikit-learn, default :math:`L_2` penalty) fitted
    on ``(x, y)``; returns its ``predict``."""
    from sklearn.linear_model import LogisticRegression

    x = check_array("x", x, dtype=None, finite=False)
    if x.dtype.kind not in "fiu" or x.ndim != 2 or len(x) == 0:
        raise ValueError(f"x must hold N >= 1 numeric inputs of shape (N, d), got {x.dtype} of shape {x.shape}.")
    x = check_array("x", x, dtype=None)
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
    pooled (:meth:`~fedlab.online.data.MixtureStream.pooled`). ``"fem_omd"`` is :class:`~fedlab.online.algorithms.FEMOMD` with the
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
    r""":func:`mixture_stream_regret` on :class:`~fedlab.online.data.DigitsMixtureStream` with softmax regressions (64 -> 10).

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


# ----------------------------------------------------------------------------------------- the shape of a regret curve

def _window_rate(regret: np.ndarray, window: tuple[float, float]) -> float:
    """Mean per-step regret over the steps (a T, b T] of the curve (R_0 = 0)."""
    n = len(regret)
    lo, hi = int(window[0] * n), int(window[1] * n)
    start = regret[lo - 1] if lo > 0 else 0.0
    return float((regret[hi - 1] - start) / (hi - lo))


def late_regret_ratio(regret: Any) -> float:
    r"""The per-step regret over the last quarter divided by the per-step regret over the second quarter.

    .. math::
        \rho = \frac{(R_T - R_{3T/4})/(T/4)}{(R_{T/2} - R_{T/4})/(T/4)}

    (:data:`LATE_WINDOW` over :data:`EARLY_WINDOW`). A linear regret (a per-step regret that tends to a positive
    constant) gives 1 whatever its early transient; :math:`t^p` gives :math:`(7/3)^{p-1}`, 0.65 for
    :math:`\sqrt t`; a regret that stops growing gives 0. :data:`LINEAR_RATIO` separates "linear" from
    "sub-linear". ``nan`` when the second quarter's per-step regret is not positive (the ratio says nothing then).

    Parameters
    ----------
    regret : array (T,)
        Cumulative regret :math:`R_1, \dots, R_T`, T >= 4.

    Returns
    -------
    float

    >>> t = np.arange(1, 401)
    >>> round(late_regret_ratio(5.0 + 0.1 * t), 2), round(late_regret_ratio(np.sqrt(t)), 2)
    (1.0, 0.65)
    """
    r = check_array("regret", regret, ndim=1)
    if len(r) < 4:
        raise ValueError(f"regret must hold at least 4 steps (a quarter of the horizon per window), got {len(r)}.")
    early = _window_rate(r, EARLY_WINDOW)
    return _window_rate(r, LATE_WINDOW) / early if early > 0 else float("nan")


def _sublinear_at(regret: np.ndarray, linear: float) -> bool:
    """Sub-linear up to the curve's end: no regret accrued in the last quarter, or a ratio below ``linear``."""
    late, early = _window_rate(regret, LATE_WINDOW), _window_rate(regret, EARLY_WINDOW)
    return bool(late <= 0 or (early > 0 and late / early < linear))


def sublinear_from(t: Any, values: Any, *, linear: float = LINEAR_RATIO, every: int | None = None):
    r"""The first checkpoint from which a regret curve reads as sub-linear up to the horizon, or ``None``.

    At checkpoint :math:`\tau` the curve cut at :math:`\tau` is *sub-linear* when its per-step regret over
    :math:`(3\tau/4, \tau]` is not positive, or below ``linear`` times its per-step regret over
    :math:`(\tau/4, \tau/2]` when that is positive (:func:`late_regret_ratio`); a last quarter that accrues regret
    after a second quarter that did not is not sub-linear. Checkpoints are every ``every`` steps (default
    :math:`\max(1, \lfloor T/100\rfloor)`) from the fourth step on, and T. Returns the smallest checkpoint from which
    every later checkpoint is sub-linear (``None``: not sub-linear at T).

    >>> t = np.arange(1.0, 201.0)
    >>> sublinear_from(t, np.sqrt(t)), sublinear_from(t, 0.1 * t)
    (4, None)
    """
    t = check_array("t", t, ndim=1)
    v = check_array("values", values, shape=t.shape)
    linear = check_real("linear", linear, low=0, low_open=True)
    if len(t) < 4 or np.any(np.diff(t) <= 0) or t[0] <= 0:
        raise ValueError("t must hold at least four positive, increasing times.")
    every = max(1, len(t) // 100) if every is None else check_int("every", every, low=1)
    ends = sorted({i for i in range(every - 1, len(t), every) if i >= 3} | {len(t) - 1})
    found = None
    for i in ends:
        ok = _sublinear_at(v[: i + 1], linear)
        found = (found if found is not None else int(t[i])) if ok else None
    return found
