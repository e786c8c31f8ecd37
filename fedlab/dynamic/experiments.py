"""Experiment functions of notebook 08 (Dynamic FL under drift, Rizk et al.); module level for ``sweep`` workers.

Every function draws its problem and agent budgets from ``seed`` (spec C.7 defaults: d = 2, K = 20, L = 7,
:math:`B_k\\sim U\\{10..20\\}`, :math:`E_k\\sim U\\{1..10\\}`, :math:`v_k\\sim U(0.5, 2)`, :math:`\\sigma_n = 0.5`)
and returns a JSON-serialisable dict. Simulations run :class:`fedlab.dynamic.algorithms.DynamicFedAvgLS` with
:func:`fedlab.engine.run` (vectorised numpy, all step sizes and variances of a run share the random draws).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fedlab._rng import numpy_rng
from fedlab._validation import check_array, check_bool, check_int
from fedlab.dynamic.algorithms import (DynamicFedAvgLogistic, DynamicFedAvgLS, LeastSquaresRuns, draw_budgets,
                                      dynamic_fedavg_fixed_point, msd_db, steady_state)
from fedlab.dynamic.bounds import (dfl_msd_bound, dfl_opt_mu, ls_lemma1_constants, ls_msd_prediction,
                                   ls_noise_at_opt)
from fedlab.dynamic.data import (DriftingLeastSquares, DriftingLogistic, logistic_risk_curvature,
                                make_drifting_least_squares, make_drifting_logistic)
from fedlab.engine import History, run

__all__ = ["dfl_setup", "dfl_step_sweep", "dfl_learning_curves", "dfl_normalization_bias", "db",
           "dfl_logistic_setup", "dfl_logistic_step_sweep", "dfl_logistic_curves", "curve_summary"]


def db(x):
    """Decibels, :math:`10\\log_{10}x` (lists in, lists out)."""
    return (10 * np.log10(np.maximum(check_array("x", x, nonnegative=True), 1e-300))).tolist()


def _positive(name: str, value) -> np.ndarray:
    """Positive step sizes: a number or a non-empty 1-D array."""
    arr = check_array(name, value)
    if arr.ndim > 1 or arr.size == 0 or np.any(arr <= 0):
        raise ValueError(f"{name} must be a positive step size or a non-empty list of them, got {arr.tolist()}.")
    return arr


def dfl_setup(seed: int, *, n_agents: int = 20, dim: int = 2, offset_var: float = 0.1, drift_var: float = 0.0,
              noise_std: float = 0.5, local_steps_range=(1, 10), batch_range=(10, 20)) -> tuple[DriftingLeastSquares, np.ndarray, np.ndarray]:
    """The seed's problem and agent budgets ``(problem, local_steps, batch)``."""
    check_int("seed", seed, low=0)
    problem = make_drifting_least_squares(n_agents, dim, offset_var=offset_var, drift_var=drift_var,
                                          noise_std=noise_std, rng=numpy_rng(seed, 0))
    e_k, b_k = draw_budgets(n_agents, local_steps_range=local_steps_range, batch_range=batch_range,
                            rng=numpy_rng(seed, 1))
    return problem, e_k, b_k


def _simulate(problem: DriftingLeastSquares, seed: int, n_iters: int, **options) -> tuple[LeastSquaresRuns, History]:
    """``n_iters`` iterations of :class:`DynamicFedAvgLS` (``options``) on ``problem``: ``(state, history)``."""
    return run(DynamicFedAvgLS(n_iters=n_iters, **options), problem, rounds=n_iters, seed=seed, progress=False)


def _constants(problem, e_k, b_k, n_active, offset_var):
    p = problem.with_(offset_var=offset_var)
    c = ls_lemma1_constants(p.feature_var, p.offsets, b_k, n_active, p.noise_std, e_k)
    s = ls_noise_at_opt(p.feature_var, p.offsets, b_k, n_active, p.noise_std, e_k)
    return c, s


def dfl_step_sweep(*, lrs=(0.003, 0.01, 0.03, 0.1, 0.3, 1.0), drift_vars=(0.0, 1e-4, 1e-3), offset_var: float = 0.1,
                   n_agents: int = 20, n_active: int = 7, dim: int = 2, local_steps_max: int = 10,
                   batch_range=(10, 20), noise_std: float = 0.5, n_iters: int = 4000, tail: int = 2000,
                   normalize: bool = True, n_grid: int = 200, seed: int = 0) -> dict:
    """Steady-state MSD against the step size for several drift variances: simulation, bound (C.4), prediction.

    Runs start at the minimiser :math:`w^o_0` (no transient) and the steady state is the mean MSD over the last
    ``tail`` iterations. Returns lists indexed ``[drift][lr]`` and, per drift, the bound's :math:`\\mu^\\star`
    (exact and :math:`\\sqrt{\\sigma_q^2/(\\sigma_s^2+\\epsilon^2)}`), the bound and the prediction on a fine
    log-grid of ``n_grid`` step sizes with the prediction's argmin ``mu_pred_opt``, and the measured argmin over
    ``lrs``.
    """
    lrs = _positive("lrs", lrs)
    drifts = check_array("drift_vars", drift_vars, ndim=1, nonnegative=True)
    if drifts.size == 0:
        raise ValueError("drift_vars must not be empty.")
    check_int("local_steps_max", local_steps_max, low=1)
    check_bool("normalize", normalize)
    check_int("n_grid", n_grid, low=2)
    problem, e_k, b_k = dfl_setup(seed, n_agents=n_agents, dim=dim, offset_var=offset_var, noise_std=noise_std,
                                  local_steps_range=(1, local_steps_max), batch_range=batch_range)
    mu_grid, q_grid = np.meshgrid(lrs, drifts)
    _, history = _simulate(problem, seed, n_iters, lr=mu_grid.ravel(), drift_var=q_grid.ravel(), n_active=n_active,
                           local_steps=e_k, batch=b_k, normalize=normalize, w_init="optimum")
    steady = steady_state(history, tail).reshape(drifts.size, lrs.size)
    c, s = _constants(problem, e_k, b_k, n_active, offset_var)
    fine = np.geomspace(lrs.min(), lrs.max(), n_grid)
    args = (c["strong_nu"], c["delta"], c["beta_s2"], c["sigma_s2"], c["eps2"])
    out = {"lrs": lrs.tolist(), "drift_vars": drifts.tolist(), "steady": steady.tolist(), "steady_db": db(steady),
           "fine_lrs": fine.tolist(), "constants": {k: float(v) for k, v in c.items()}, "noise_at_opt": s,
           "bound": [], "bound_fine": [], "prediction": [], "prediction_fine": [], "mu_star": [],
           "mu_star_approx": [], "mu_pred_opt": [], "argmin_measured": [], "local_steps": e_k.tolist(), "batch": b_k.tolist(),
           "mu_max": 2 * c["strong_nu"] / (c["delta"] ** 2 + c["beta_s2"])}
    for i, q in enumerate(drifts):
        out["bound"].append(np.asarray(dfl_msd_bound(lrs, *args, q)).tolist())
        out["bound_fine"].append(np.asarray(dfl_msd_bound(fine, *args, q)).tolist())
        out["prediction"].append(np.asarray(ls_msd_prediction(lrs, problem.feature_var, s, q)).tolist())
        out["prediction_fine"].append(np.asarray(ls_msd_prediction(fine, problem.feature_var, s, q)).tolist())
        out["mu_star"].append(dfl_opt_mu(*args, q))
        out["mu_star_approx"].append(dfl_opt_mu(*args, q, exact=False) if q > 0 else 0.0)
        out["mu_pred_opt"].append(float(fine[int(np.argmin(out["prediction_fine"][-1]))]))
        out["argmin_measured"].append(float(lrs[int(np.argmin(steady[i]))]))
    return out


def _check_curve_grid(lrs, drift_vars, offset_vars, local_steps_max, n_iters, every) -> int:
    """The learning-curve experiments' shared arguments, checked; returns ``n_iters``."""
    _positive("lrs", lrs)
    for name, value in (("drift_vars", drift_vars), ("offset_vars", offset_vars)):
        arr = check_array(name, value, nonnegative=True)
        if arr.ndim > 1 or arr.size == 0:
            raise ValueError(f"{name} must be a number or a non-empty 1-D list, got shape {arr.shape}.")
    check_int("local_steps_max", local_steps_max, low=1)
    n_iters = check_int("n_iters", n_iters, low=1)
    check_int("every", every, low=1)
    return n_iters


def dfl_learning_curves(*, lrs=(0.01,), drift_vars=(0.0,), offset_vars=(0.1,), n_agents: int = 20, n_active: int = 7,
                        dim: int = 2, local_steps_max: int = 10, batch_range=(10, 20), noise_std: float = 0.5,
                        n_iters: int = 3000, tail: int = 1000, every: int = 10, normalize: bool = True,
                        seed: int = 0) -> dict:
    """MSD(dB) against the iteration from :math:`w_0 = 0` (Fig. 1a/c/d analogues).

    ``lrs``, ``drift_vars`` and ``offset_vars`` are broadcast together (one curve per entry). Returns the curves
    (every ``every`` iterations), the floor (mean of the last ``tail``), the first iteration within 3 dB of it and the
    convergence rate: the slope (dB per 100 iterations) of the MSD while it is more than 10 dB above the floor
    (``nan`` if that transient is shorter than 5 iterations).
    """
    n_iters = _check_curve_grid(lrs, drift_vars, offset_vars, local_steps_max, n_iters, every)
    problem, e_k, b_k = dfl_setup(seed, n_agents=n_agents, dim=dim, noise_std=noise_std,
                                  local_steps_range=(1, local_steps_max), batch_range=batch_range)
    state, history = _simulate(problem, seed, n_iters, lr=lrs, drift_var=drift_vars, offset_var=offset_vars,
                               n_active=n_active, local_steps=e_k, batch=b_k, normalize=normalize)
    return {**_curve_stats(history, n_iters, tail, every), "lr": state.lr.tolist(),
            "drift_var": state.drift_var.tolist(), "offset_var": state.offset_var.tolist()}


def _curve_stats(history: History, n_iters: int, tail: int, every: int) -> dict:
    """Curves (every ``every`` iterations), floors, iterations to within 3 dB of the floor and transient slopes."""
    floor = steady_state(history, tail)
    curves = msd_db(history)
    within, decay = [], []
    for r in range(len(floor)):
        hits = np.flatnonzero(curves[r] <= 10 * np.log10(floor[r]) + 3.0)
        within.append(int(hits[0]) if hits.size else n_iters)
        above = np.flatnonzero(curves[r] <= 10 * np.log10(floor[r]) + 10.0)   # transient: > 10 dB above the floor
        stop = int(above[0]) if above.size else n_iters
        decay.append(float(np.polyfit(np.arange(stop), curves[r, :stop], 1)[0] * 100) if stop >= 5 else float("nan"))
    idx = np.arange(0, n_iters + 1, every)
    return {"iterations": idx.tolist(), "msd_db": curves[:, idx].tolist(), "floor": floor.tolist(),
            "floor_db": db(floor), "iters_to_3db": within, "decay_db_per_100": decay}


def dfl_normalization_bias(*, lrs=(0.01, 0.1), n_agents: int = 20, dim: int = 2, offset_var: float = 0.1,
                           local_steps_max: int = 10, n_iters: int = 3000, seed: int = 0) -> dict:
    r"""Bias :math:`\|w_\infty - w^o\|` of full-gradient, full-participation Algorithm 1 with normalised
    (:math:`\mu/E_k`) and plain (:math:`\mu`) local steps: closed form and simulation (spec C.7, fact C7)."""
    _positive("lrs", lrs)
    check_int("local_steps_max", local_steps_max, low=1)
    problem, e_k, _ = dfl_setup(seed, n_agents=n_agents, dim=dim, offset_var=offset_var,
                                local_steps_range=(1, local_steps_max))
    w_opt = problem.optimum(problem.w_start)
    out = {"lrs": list(map(float, lrs)), "closed_form": {}, "simulated": {}}
    for normalize in (True, False):
        key = "normalized" if normalize else "unnormalized"
        out["closed_form"][key] = [float(np.linalg.norm(dynamic_fedavg_fixed_point(problem, mu, e_k, normalize=normalize)
                                                        - w_opt)) for mu in lrs]
        _, history = _simulate(problem.with_(drift_var=0.0), seed, n_iters, lr=np.asarray(lrs, float),
                               n_active=n_agents, local_steps=e_k, batch=1, normalize=normalize, full_gradient=True)
        out["simulated"][key] = np.sqrt(history.per_client("msd")).tolist()
    return out


def dfl_logistic_setup(seed: int, *, n_agents: int = 20, offset_var: float = 0.1, drift_var: float = 0.0,
                       reg_rho: float = 0.01, local_steps_range=(1, 10),
                       batch_range=(10, 20)) -> tuple[DriftingLogistic, np.ndarray, np.ndarray]:
    """The seed's logistic problem (29) and agent budgets ``(problem, local_steps, batch)``: the same draws as
    :func:`dfl_setup` with ``dim = 2`` (same agents, offsets, budgets and :math:`w^\\star_0`)."""
    check_int("seed", seed, low=0)
    problem = make_drifting_logistic(n_agents, offset_var=offset_var, drift_var=drift_var, reg_rho=reg_rho,
                                     rng=numpy_rng(seed, 0))
    e_k, b_k = draw_budgets(n_agents, local_steps_range=local_steps_range, batch_range=batch_range,
                            rng=numpy_rng(seed, 1))
    return problem, e_k, b_k


def dfl_logistic_step_sweep(*, lrs=(0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0), drift_vars=(0.0, 1e-2),
                            offset_var: float = 0.1, n_agents: int = 20, n_active: int = 7, local_steps_max: int = 10,
                            batch_range=(10, 20), reg_rho: float = 0.01, n_iters: int = 2000, tail: int = 1000,
                            seed: int = 0) -> dict:
    """Steady-state MSD against the step size on the paper's logistic model (29) (Fig. 1b), from :math:`w^o_0`.

    Returns ``steady`` and ``steady_db`` indexed ``[drift][lr]`` (mean over the last ``tail`` iterations), the
    measured argmin per drift, and the norm of the final minimiser (the scale the MSD compares with).
    """
    lrs = _positive("lrs", lrs)
    drifts = check_array("drift_vars", drift_vars, ndim=1, nonnegative=True)
    if drifts.size == 0:
        raise ValueError("drift_vars must not be empty.")
    check_int("local_steps_max", local_steps_max, low=1)
    n_iters = check_int("n_iters", n_iters, low=1)
    problem, e_k, b_k = dfl_logistic_setup(seed, n_agents=n_agents, offset_var=offset_var, reg_rho=reg_rho,
                                           local_steps_range=(1, local_steps_max), batch_range=batch_range)
    mu_grid, q_grid = np.meshgrid(lrs, drifts)
    algo = DynamicFedAvgLogistic(lr=mu_grid.ravel(), drift_var=q_grid.ravel(), n_iters=n_iters, n_active=n_active,
                                 local_steps=e_k, batch=b_k, w_init="optimum")
    state, history = run(algo, problem, rounds=n_iters, seed=seed, progress=False)
    steady = steady_state(history, tail).reshape(drifts.size, lrs.size)
    return {"lrs": lrs.tolist(), "drift_vars": drifts.tolist(), "steady": steady.tolist(), "steady_db": db(steady),
            "argmin_measured": [float(lrs[int(np.argmin(row))]) for row in steady],
            "optimum_norm": float(np.linalg.norm(state.w_opt, axis=1).mean())}


def dfl_logistic_curves(*, lrs=(0.1,), drift_vars=(0.0,), offset_vars=(0.1,), n_agents: int = 20, n_active: int = 7,
                        local_steps_max: int = 10, batch_range=(10, 20), reg_rho: float = 0.01, n_iters: int = 2000,
                        tail: int = 700, every: int = 10, seed: int = 0) -> dict:
    """MSD(dB) against the iteration from :math:`w_0 = 0` on the logistic model (29) (Fig. 1a/c/d).

    ``lrs``, ``drift_vars`` and ``offset_vars`` are broadcast together (one curve per entry); the summaries are
    those of :func:`dfl_learning_curves` (floor, iterations to within 3 dB, transient slope), plus ``curvature``:
    the smallest eigenvalue ν of the risk's Hessian at the final :math:`w^o` of every curve.
    """
    n_iters = _check_curve_grid(lrs, drift_vars, offset_vars, local_steps_max, n_iters, every)
    problem, e_k, b_k = dfl_logistic_setup(seed, n_agents=n_agents, reg_rho=reg_rho,
                                           local_steps_range=(1, local_steps_max), batch_range=batch_range)
    algo = DynamicFedAvgLogistic(lr=lrs, drift_var=drift_vars, offset_var=offset_vars, n_iters=n_iters,
                                 n_active=n_active, local_steps=e_k, batch=b_k)
    state, history = run(algo, problem, rounds=n_iters, seed=seed, progress=False)
    nu = logistic_risk_curvature(problem.feature_var, problem.agent_optima(state.w_star, state.offset_var),
                                 problem.reg_rho, state.w_opt)[:, 0]
    return {**_curve_stats(history, n_iters, tail, every), "lr": state.lr.tolist(),
            "drift_var": state.drift_var.tolist(), "offset_var": state.offset_var.tolist(), "curvature": nu.tolist()}


def curve_summary(runs) -> tuple[list, np.ndarray, np.ndarray]:
    """Summaries of learning curves over seeds: ``(floor_db, speed, rate)``, one entry per curve.

    ``runs`` holds one dict per seed with the per-curve lists ``floor``, ``iters_to_3db`` and ``decay_db_per_100`` of
    :func:`dfl_learning_curves` or :func:`dfl_logistic_curves`. ``floor_db`` is the seed-mean floor in dB (a list),
    ``speed`` the seed-mean iterations to within 3 dB, ``rate`` the mean of the finite transient slopes (``nan``
    where no seed has one).
    """
    keys = ("floor", "iters_to_3db", "decay_db_per_100")
    if isinstance(runs, (str, bytes, Mapping)) or not hasattr(runs, "__len__") or len(runs) == 0 or \
            not all(isinstance(r, Mapping) and all(k in r for k in keys) for r in runs):
        raise ValueError(f"runs must be a non-empty list of per-seed learning-curve results with {list(keys)}.")
    sizes = {len(r[k]) for r in runs for k in keys}
    if len(sizes) != 1 or 0 in sizes:
        raise ValueError(f"runs must give every seed the same non-zero number of curves, got sizes {sorted(sizes)}.")
    floor = db(np.mean([check_array("runs' floor", r["floor"], nonnegative=True) for r in runs], axis=0))
    speed = np.mean([r["iters_to_3db"] for r in runs], axis=0)
    rates = np.array([r["decay_db_per_100"] for r in runs], float)
    rate = np.array([col[np.isfinite(col)].mean() if np.isfinite(col).any() else np.nan for col in rates.T])
    return floor, speed, rate
