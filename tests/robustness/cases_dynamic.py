"""Robustness cases of the dynamic-FL chapter (notebook 08): drifting least squares, Dynamic FedAvg, MSD bounds."""
from __future__ import annotations

import functools

import numpy as np

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, Flag, Int, Kind, Obj, Real, Rng, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.dynamic"
K = 4
"""Agents of the small problem."""
V = np.array([0.5, 1.0, 1.5, 2.0])
BOUND = {"strong_nu": Real(0.5, low=0, low_open=True), "delta": Real(1.0, low=0), "beta_s2": Real(0.5, low=0),
         "sigma_s2": Real(0.1, low=0), "eps2": Real(0.1, low=0), "sigma_q2": Real(1e-3, low=0)}
"""The constants of the C.4 bound."""
PAIR = Kind((1, 3), extra=((0, 3), (1.5, 3), (3, 1), BAD_TEXT, (1,)))
"""A (low, high) range of positive integers."""


@functools.cache
def problem():
    from fedlab.dynamic.data import make_drifting_least_squares

    return make_drifting_least_squares(K, 2, rng=0)


@functools.cache
def ls_history():
    from fedlab.dynamic.algorithms import DynamicFedAvgLS
    from fedlab.engine import run

    return run(DynamicFedAvgLS(lr=[0.01, 0.1], n_iters=4, n_active=2), problem(), rounds=4, progress=False)[1]


CURVE_RUN = {"floor": [0.01, 0.1], "iters_to_3db": [10, 20], "decay_db_per_100": [-5.0, float("nan")]}
"""One seed's learning-curve summaries of two curves."""


@functools.cache
def _claim_results():
    """The hand-made results under which the paper's statements hold (tests/dynamic/test_claims.py)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "dynamic" / "test_claims.py"
    spec = importlib.util.spec_from_file_location("dynamic_claims_results", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.results(True)


def claim_results():
    return dict(_claim_results())


def problem_kind(**kw):
    return Obj(fresh(problem), extra=(w.fed(),), **kw)


def history_kind(**kw):
    return Obj(ls_history(), extra=(w.history(),), **kw)


def budget(value=2, *, per_agent=True, **kw):
    """A budget E_k or B_k: a positive integer or one per agent (``per_agent``: the agents are known, so a wrong
    length is an error too)."""
    bad = (0, 1.5, np.array([1, 0, 1, 1]), BAD_TEXT, NAN) + ((np.array([1, 2]),) if per_agent else ())
    return Kind(value, extra=bad, **kw)


CASES = [
    # ---------------------------------------------------------------- data
    Case(f"{M}.data.DriftingLeastSquares", {
        "feature_var": Arr(V, positive=True, ndim=1, also=("offset_dirs",)),
        "offset_dirs": Arr(np.ones((K, 2)), ndim=2, link=True, also=("feature_var",)),
        "offset_var": Real(0.1, low=0), "drift_var": Real(0.0, low=0), "noise_std": Real(0.5, low=0),
        "w_start": Arr(None, optional=True, extra=(np.zeros(3), np.full(2, NAN)))}),
    Case(f"{M}.data.make_drifting_least_squares", {
        "n_agents": Int(K, low=1), "dim": Int(2, low=1), "offset_var": Real(0.1, low=0), "drift_var": Real(0.0, low=0),
        "noise_std": Real(0.5, low=0), "feature_var_range": Kind((0.5, 2.0), extra=((0.0, 1.0), (2.0, 1.0), (NAN, 1.0),
                                                                                     (1.0,), BAD_TEXT)),
        "rng": Rng(0)}, edge=("n_agents", "dim", "offset_var", "noise_std")),
    Case(f"{M}.data.random_walk", {"n_steps": Int(3, low=0), "dim": Int(2, low=1), "drift_var": Real(1e-3, low=0),
                                   "start": Arr(None, optional=True, extra=(np.zeros(3), np.full(2, NAN))),
                                   "rng": Rng(0)}, edge=("n_steps", "dim", "drift_var")),
    Case(f"{M}.data.sample_least_squares", {"problem": problem_kind(),
                                            "w_star": Arr(np.zeros(2), ndim=1, link=True, also=("problem",)),
                                            "agents": Arr(np.array([0, 2]), integer=True, nonneg=True, high=K,
                                                          ndim=1, also=("problem",)),
                                            "batch": Int(3, low=1), "rng": Rng(0)}),
    # ---------------------------------------------------------------- algorithms
    Case(f"{M}.algorithms.draw_budgets", {"n_agents": Int(K, low=1), "local_steps_range": PAIR, "batch_range": PAIR,
                                          "rng": Rng(0)}),
    Case(f"{M}.algorithms.DynamicFedAvgLS", {
        "lr": Arr((0.01, 0.1), positive=True, nonempty=False, extra=(np.ones((2, 2)),)),
        "n_iters": Int(4, low=1), "n_active": Int(2, low=1), "local_steps": budget(1, per_agent=False),
        "batch": budget(3, per_agent=False),
        "drift_var": Arr(None, optional=True, extra=(-1.0, NAN, np.ones((2, 2)))),
        "offset_var": Arr(None, optional=True, extra=(-1.0, NAN)),
        "normalize": Flag(True), "incremental": Flag(True), "full_gradient": Flag(False),
        "w_init": Kind(None, extra=(BAD_TEXT, np.full(2, NAN), np.ones((2, 2)), 3)), "chunk": Int(16, low=1)},
         edge=("n_iters", "n_active", "chunk")),
    Case(f"{M}.algorithms.DynamicFedAvgLS.init", {"problem": problem_kind(), "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.dynamic.algorithms", fromlist=["x"]).DynamicFedAvgLS(
             lr=0.1, n_iters=2, n_active=2).init(**kw)),
    *[Case(f"{M}.algorithms.{name}", {"history": history_kind()}) for name in ("msd_curves", "msd_db")],
    Case(f"{M}.algorithms.steady_state", {"history": history_kind(also=("tail",)),
                                          "tail": Int(2, low=1, high=5, also=("history",))}),
    Case(f"{M}.algorithms.dynamic_fedavg_fixed_point", {
        "problem": problem_kind(also=("local_steps", "w_star")), "lr": Real(0.05, low=0, low_open=True),
        "local_steps": budget(2, also=("problem",)), "normalize": Flag(True),
        "w_star": Arr(None, optional=True, extra=(np.zeros(3), np.full(2, NAN)))}),
    Case(f"{M}.algorithms.NoisyGradientTracking", {"lr": Real(0.1, low=0, low_open=True),
                                                   "strong_nu": Real(0.5, low=0, low_open=True),
                                                   "sigma_s2": Real(0.1, low=0), "sigma_q2": Real(1e-3, low=0),
                                                   "n_iters": Int(3, low=1), "dim": Int(2, low=1),
                                                   "n_runs": Int(1, low=1)},
         edge=("sigma_s2", "sigma_q2", "n_iters", "dim")),
    Case(f"{M}.algorithms.DynamicFedAvg", {"model": Obj(w.model(), extra=(w.solver(),)),
                                           "solver": Obj(w.solver(), extra=(w.model(),)),
                                           "n_active": Int(None, low=1, optional=True),
                                           "participation": Real(1.0, low=0, high=1, low_open=True),
                                           "local_steps": Kind(None, extra=(0, 1.5, BAD_TEXT, np.array([1, 0]))),
                                           "batch_size": Kind(None, extra=(0, 1.5, BAD_TEXT)),
                                           "normalize": Flag(True), "backend": Choice("auto")}, edge=("n_active",)),
    Case(f"{M}.algorithms.DynamicFedAvg.init", {"data": Obj(fresh(w.fed), extra=(w.clients(),)),
                                                "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.dynamic.algorithms", fromlist=["x"]).DynamicFedAvg(
             w.model(), w.solver()).init(**kw)),
    # ---------------------------------------------------------------- bounds
    Case(f"{M}.bounds.tau_s", {"n_samples": Arr(np.inf, finite=False, positive=True, nonempty=False,
                                                extra=(NAN, 0.5)),
                               "batch": Arr(2.0, positive=True, nonempty=False, extra=(0.5,)),
                               "local_steps": Arr(1.0, positive=True, nonempty=False, extra=(0.5,))}),
    Case(f"{M}.bounds.tau_eps", {"n_agents": Int(K, low=1, also=("n_active",)),
                                 "n_active": Int(2, low=1, high=K, also=("n_agents",))}),
    Case(f"{M}.bounds.lemma1_constants", {
        "delta": Real(1.0, low=0), "tau_s_vec": Arr(np.full(K, 0.5), nonneg=True, ndim=1, link=True,
                                                    also=("n_agents",)),
        "tau_eps_value": Real(0.5, low=0, high=1), "datavar_vec": Arr(np.ones(K), nonneg=True, ndim=1, link=True,
                                                                      also=("n_agents",)),
        "gradnorm2_vec": Arr(np.ones(K), nonneg=True, ndim=1, link=True, also=("n_agents",)),
        "n_agents": Int(K, low=1, also=("tau_s_vec", "datavar_vec", "gradnorm2_vec", "n_active")),
        "n_active": Int(2, low=1, high=K, also=("n_agents",))}),
    Case(f"{M}.bounds.dfl_contraction", {"mu": Arr((0.01, 0.1), positive=True, nonempty=False),
                                         "strong_nu": Real(0.5, low=0, low_open=True), "delta": Real(1.0, low=0),
                                         "beta_s2": Real(0.5, low=0)}),
    *[Case(f"{M}.bounds.{name}", {"mu": Arr((0.01, 0.1), positive=True, nonempty=False), **BOUND})
      for name in ("dfl_msd_bound", "dfl_msd_terms")],
    Case(f"{M}.bounds.dfl_msd_approx", {"mu": Arr((0.01, 0.1), positive=True, nonempty=False),
                                        "strong_nu": Real(0.5, low=0, low_open=True), "sigma_s2": Real(0.1, low=0),
                                        "eps2": Real(0.1, low=0), "sigma_q2": Real(1e-3, low=0)}),
    Case(f"{M}.bounds.dfl_transient", {"i": Arr(np.arange(3.0), nonneg=True, nonempty=False),
                                       "e0": Real(1.0, low=0), "mu": Real(0.01, low=0, low_open=True), **BOUND}),
    Case(f"{M}.bounds.dfl_opt_mu", {**BOUND, "exact": Flag(True)},
         edge=("delta", "beta_s2", "sigma_s2", "eps2", "sigma_q2")),
    Case(f"{M}.bounds.dfl_opt_msd", dict(BOUND)),
    Case(f"{M}.bounds.scalar_quadratic_msd", {"mu": Arr((0.01, 0.1), positive=True, nonempty=False),
                                              "strong_nu": Real(0.5, low=0, low_open=True),
                                              "sigma_s2": Real(0.1, low=0), "sigma_q2": Real(1e-3, low=0)}),
    Case(f"{M}.bounds.ls_noise_at_opt", {"feature_var": Arr(V, positive=True, ndim=1, also=("offsets", "batch")),
                                         "offsets": Arr(np.ones((K, 2)) * 0.1, ndim=2, link=True,
                                                        also=("feature_var",)),
                                         "batch": Arr(3.0, positive=True, nonempty=False, extra=(0.5,),
                                                      also=("feature_var",)),
                                         "n_active": Int(2, low=1, high=K, also=("feature_var",)),
                                         "noise_std": Real(0.5, low=0),
                                         "local_steps": Arr(1.0, positive=True, nonempty=False, extra=(0.5,),
                                                            also=("feature_var",))}),
    Case(f"{M}.bounds.ls_msd_prediction", {"mu": Arr((0.01, 0.1), positive=True, nonempty=False),
                                           "feature_var": Arr(V, positive=True, ndim=1),
                                           "noise_at_opt": Real(0.1, low=0), "sigma_q2": Real(1e-3, low=0)}),
    Case(f"{M}.bounds.ls_lemma1_constants", {
        "feature_var": Arr(V, positive=True, ndim=1, also=("offsets", "batch")),
        "offsets": Arr(np.ones((K, 2)) * 0.1, ndim=2, link=True, also=("feature_var",)),
        "batch": Arr(3.0, positive=True, nonempty=False, extra=(0.5,), also=("feature_var", "n_samples")),
        "n_active": Int(2, low=1, high=K, also=("feature_var",)), "noise_std": Real(0.5, low=0),
        "local_steps": Arr(1.0, positive=True, nonempty=False, extra=(0.5,), also=("feature_var",)),
        "n_samples": Arr(np.inf, finite=False, positive=True, nonempty=False, extra=(NAN, 0.5, 2.0),
                         also=("batch",))}),
    # ---------------------------------------------------------------- experiments
    Case(f"{M}.experiments.dfl_setup", {"seed": Int(0, low=0), "n_agents": Int(K, low=1), "dim": Int(2, low=1),
                                        "offset_var": Real(0.1, low=0), "drift_var": Real(0.0, low=0),
                                        "noise_std": Real(0.5, low=0), "local_steps_range": PAIR,
                                        "batch_range": PAIR}, edge=("n_agents", "dim", "offset_var", "noise_std")),
    Case(f"{M}.experiments.dfl_step_sweep", {
        "lrs": Arr((0.01, 0.1), positive=True, ndim=1), "drift_vars": Arr((0.0, 1e-3), nonneg=True, ndim=1),
        "offset_var": Real(0.1, low=0), "n_agents": Int(K, low=1), "n_active": Int(2, low=1, high=K,
                                                                                   also=("n_agents",)),
        "dim": Int(2, low=1), "local_steps_max": Int(2, low=1), "batch_range": PAIR, "noise_std": Real(0.5, low=0),
        "n_iters": Int(6, low=1, also=("tail",)), "tail": Int(3, low=1, high=7, also=("n_iters",)),
        "normalize": Flag(True), "n_grid": Int(5, low=2), "seed": Int(0, low=0)},
         edge=("offset_var", "n_active", "dim", "local_steps_max", "noise_std", "tail", "n_grid")),
    Case(f"{M}.experiments.dfl_learning_curves", {
        "lrs": Arr((0.01,), positive=True, ndim=1), "drift_vars": Arr((0.0,), nonneg=True, ndim=1),
        "offset_vars": Arr((0.1,), nonneg=True, ndim=1), "n_agents": Int(K, low=1),
        "n_active": Int(2, low=1, high=K, also=("n_agents",)), "dim": Int(2, low=1), "local_steps_max": Int(2, low=1),
        "batch_range": PAIR, "noise_std": Real(0.5, low=0), "n_iters": Int(6, low=1, also=("tail", "every")),
        "tail": Int(3, low=1, high=7, also=("n_iters",)), "every": Int(2, low=1, also=("n_iters",)),
        "normalize": Flag(True), "seed": Int(0, low=0)},
         edge=("n_active", "dim", "local_steps_max", "noise_std", "tail", "every")),
    Case(f"{M}.experiments.dfl_normalization_bias", {
        "lrs": Arr((0.01, 0.1), positive=True, ndim=1), "n_agents": Int(K, low=1), "dim": Int(2, low=1),
        "offset_var": Real(0.1, low=0), "local_steps_max": Int(2, low=1), "n_iters": Int(4, low=1),
        "seed": Int(0, low=0)}, edge=("n_agents", "dim", "offset_var", "local_steps_max", "n_iters")),
    Case(f"{M}.experiments.db", {"x": Arr((1.0, 10.0), nonneg=True, nonempty=False)}),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.plot_msd_vs_step", {
        "lrs": Arr((0.01, 0.1), positive=True, ndim=1, also=("steady",)),
        "steady": Arr(np.ones((2, 1, 2)), nonneg=True, also=("lrs", "drift_vars")),
        "drift_vars": Arr((0.0,), nonneg=True, ndim=1, also=("steady",)),
        "fine_lrs": Arr(None, optional=True, extra=(np.array([-1.0, 0.1]),)),
        "bound": Arr(None, optional=True, extra=(np.ones((1, 2)),), also=("fine_lrs",)),
        "prediction": Arr(None, optional=True, extra=(np.ones((1, 2)),), also=("fine_lrs",)),
        "mu_star": Arr(None, optional=True, extra=(np.array([0.1, 0.2]),), also=("drift_vars", "bound")),
        "ax": AX}),
    Case(f"{M}.plots.plot_normalization_bias", {"lrs": Arr((0.01, 0.1), positive=True, ndim=1,
                                                           also=("normalized", "unnormalized")),
                                                "normalized": Arr((0.1, 0.2), nonneg=True, link=True, also=("lrs",)),
                                                "unnormalized": Arr((0.3, 0.4), nonneg=True, link=True,
                                                                    also=("lrs",)),
                                                "ax": AX}),
]


@functools.cache
def logistic_problem():
    from fedlab.dynamic.data import make_drifting_logistic

    return make_drifting_logistic(K, rng=0)


RISK = {"feature_var": Arr(V, positive=True, ndim=1, also=("agent_optima",)),
        "agent_optima": Arr(np.ones((K, 2)), also=("feature_var",), extra=(np.ones((K, 3)), np.ones(2))),
        "reg_rho": Real(0.01, low=0, low_open=True)}
"""The aggregate logistic risk (29) of a small problem."""

CASES += [
    Case(f"{M}.data.DriftingLogistic", {
        "feature_var": Arr(V, positive=True, ndim=1, also=("offset_dirs",)),
        "offset_dirs": Arr(np.ones((K, 2)), ndim=2, link=True, also=("feature_var",), extra=(np.ones((K, 3)),)),
        "offset_var": Real(0.1, low=0), "drift_var": Real(0.0, low=0), "reg_rho": Real(0.01, low=0, low_open=True),
        "w_start": Arr(None, optional=True, extra=(np.zeros(3), np.full(2, NAN)))}),
    Case(f"{M}.data.make_drifting_logistic", {
        "n_agents": Int(K, low=1), "offset_var": Real(0.1, low=0), "drift_var": Real(0.0, low=0),
        "reg_rho": Real(0.01, low=0, low_open=True),
        "feature_var_range": Kind((0.5, 2.0), extra=((0.0, 1.0), (2.0, 1.0), (NAN, 1.0), (1.0,), BAD_TEXT)),
        "rng": Rng(0)}, edge=("n_agents", "offset_var")),
    Case(f"{M}.data.logistic_risk_minimizer", {
        **RISK, "w_init": Arr(None, optional=True, extra=(np.zeros(3), np.full(2, NAN))),
        "newton_steps": Int(2, low=1), "n_angle": Int(4, low=2), "n_radius": Int(4, low=2)}),
    Case(f"{M}.data.logistic_risk_curvature", {**RISK, "w": Arr(np.zeros(2), also=("agent_optima",),
                                                                 extra=(np.zeros(3),))}),
    Case(f"{M}.algorithms.DynamicFedAvgLogistic", {
        "lr": Arr((0.01, 0.1), positive=True, nonempty=False, extra=(np.ones((2, 2)),)),
        "n_iters": Int(4, low=1), "n_active": Int(2, low=1), "local_steps": budget(1, per_agent=False),
        "batch": budget(3, per_agent=False), "drift_var": Arr(None, optional=True, extra=(-1.0, NAN, np.ones((2, 2)))),
        "offset_var": Arr(None, optional=True, extra=(-1.0, NAN)), "w_init": Choice("zeros")},
         edge=("n_iters", "n_active")),
    Case(f"{M}.algorithms.DynamicFedAvgLogistic.init", {"problem": Obj(fresh(logistic_problem), extra=(w.fed(),)),
                                                        "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.dynamic.algorithms", fromlist=["x"]).DynamicFedAvgLogistic(
             lr=0.1, n_iters=2, n_active=2).init(**kw)),
    Case(f"{M}.experiments.dfl_logistic_setup", {"seed": Int(0, low=0), "n_agents": Int(K, low=1),
                                                 "offset_var": Real(0.1, low=0), "drift_var": Real(0.0, low=0),
                                                 "reg_rho": Real(0.01, low=0, low_open=True),
                                                 "local_steps_range": PAIR, "batch_range": PAIR}),
    Case(f"{M}.experiments.dfl_logistic_step_sweep", {
        "lrs": Arr((0.01, 0.1), positive=True, ndim=1), "drift_vars": Arr((0.0, 1e-3), nonneg=True, ndim=1),
        "offset_var": Real(0.1, low=0), "n_agents": Int(K, low=1),
        "n_active": Int(2, low=1, high=K, also=("n_agents",)), "local_steps_max": Int(2, low=1), "batch_range": PAIR,
        "reg_rho": Real(0.01, low=0, low_open=True), "n_iters": Int(6, low=1, also=("tail",)),
        "tail": Int(3, low=1, high=7, also=("n_iters",)), "seed": Int(0, low=0)}),
    Case(f"{M}.experiments.dfl_logistic_curves", {
        "lrs": Arr((0.01,), positive=True, ndim=1), "drift_vars": Arr((0.0,), nonneg=True, ndim=1),
        "offset_vars": Arr((0.1,), nonneg=True, ndim=1), "n_agents": Int(K, low=1),
        "n_active": Int(2, low=1, high=K, also=("n_agents",)), "local_steps_max": Int(2, low=1),
        "batch_range": PAIR, "reg_rho": Real(0.01, low=0, low_open=True),
        "n_iters": Int(6, low=1, also=("tail", "every")), "tail": Int(3, low=1, high=7, also=("n_iters",)),
        "every": Int(2, low=1, also=("n_iters",)), "seed": Int(0, low=0)}),
    # ---------------------------------------------------------------- curve summaries and claims
    Case(f"{M}.experiments.curve_summary", {"runs": Kind(fresh(lambda: [dict(CURVE_RUN)]), extra=(
        [], BAD_TEXT, [{"floor": [1.0]}], {"floor": [1.0]}, [dict(CURVE_RUN, floor=[-1.0])],
        [CURVE_RUN, dict(CURVE_RUN, floor=[0.1])]))}),
    Case(f"{M}.claims.chapter_claims", {"results": Obj(fresh(claim_results), extra=({}, [1])),
                                       "scale": Choice("smoke")}),
]
