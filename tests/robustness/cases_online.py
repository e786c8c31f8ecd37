"""Robustness cases of the online-mixtures chapter (notebook 06): FEM-OMD pieces, bounds, streams, plots."""
from __future__ import annotations

import functools

import numpy as np

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, Flag, Int, Kind, Obj, Real, Rng, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.online"
MEANS = np.array([[0.0, 0.0], [3.0, 0.0]])
P2 = np.array([0.3, 0.7])
WSTAR = np.full((3, 2, 2), 0.5)
"""T = 3 steps, C = 2 clients, m = 2 components."""


@functools.cache
def stream():
    from fedlab.online.data import make_gmm_stream

    return make_gmm_stream(n_components=2, dim=2, n_clients=2, horizon=3, seed=0)


@functools.cache
def gmm_history():
    from fedlab.online.experiments import run_fem_omd_gmm

    return run_fem_omd_gmm(stream(), n_samples=4, n_mc_loss=5)[1]


@functools.cache
def gmm_result():
    from fedlab.online.experiments import gmm_regret

    return gmm_regret(n_samples=4, n_clients=2, horizon=4, n_mc_loss=5)


def gmm_history_kind(**kw):
    return Obj(gmm_history(), extra=(w.history(), {"clients": {}}), **kw)


def means_kind(**kw):
    return Arr(MEANS, ndim=2, **kw)


def pi_kind(**kw):
    return Arr(P2, simplex=True, **kw)


FEM_SETTINGS = {"n_em_steps": Int(1, low=1), "lr": Real(1.0, low=0, low_open=True), "schedule": Choice("anytime"),
                "split": Flag(True), "grad_clip": Real(10.0, low=0, low_open=True, optional=True),
                "gradient": Choice("model"), "pi_init": Choice("uniform"), "n_mc": Int(None, low=1, optional=True),
                "init_scale": Real(1 / 16, low=0)}
"""The settings of GaussianFEMOMD (shared by run_fem_omd_gmm)."""

CASES = [
    # ---------------------------------------------------------------- algorithms
    Case(f"{M}.algorithms.step_size", {"schedule": Choice("anytime"), "t": Int(1, low=1),
                                       "n_components": Int(2, low=1), "lr": Real(1.0, low=0, low_open=True),
                                       "horizon": Int(None, low=1, optional=True)}, edge=("n_components", "horizon")),
    Case(f"{M}.algorithms.omd_step", {"log_pi": Arr(np.log(P2), also=("grad",)),
                                      "grad": Arr(np.array([-1.0, -0.5]), link=True, also=("log_pi",)),
                                      "lr": Real(1.0, low=0, low_open=True),
                                      "grad_clip": Real(None, low=0, low_open=True, optional=True)}),
    Case(f"{M}.algorithms.mixture_weight_gradient", {
        "pi": pi_kind(also=("means",)), "means": means_kind(also=("pi", "pi_tilde")),
        "pi_tilde": pi_kind(also=("means", "samples")),
        "samples": Kind(None, extra=(np.full((4, 2), NAN), np.zeros((4, 3)), BAD_TEXT), also=("pi_tilde",)),
        "n_mc": Int(5, low=1), "rng": Rng(0), "variance": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.data.mixture_kl", {"pi_p": pi_kind(also=("means_p",)), "means_p": means_kind(also=("pi_p",)),
                                        "pi_q": pi_kind(also=("means_q",)),
                                        "means_q": means_kind(also=("pi_q", "means_p")),
                                        "n_mc": Int(5, low=1), "rng": Rng(0),
                                        "variance": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.algorithms.center_error", {"means": means_kind(also=("means_star",)),
                                          "means_star": means_kind(link=True, also=("means",))}),
    Case(f"{M}.data.GMMEnvironment", {"means_star": means_kind(also=("weights_star",)),
                                            "weights_star": Arr(WSTAR, simplex=True, ndim=3, also=("means_star",)),
                                            "n_samples": Int(4, low=1), "n_mc_loss": Int(5, low=1),
                                            "variance": Real(1.0, low=0, low_open=True), "seed": Int(0, low=0)},
         edge=("n_samples", "n_mc_loss")),
    Case(f"{M}.algorithms.GaussianFEMOMD", {**FEM_SETTINGS, "means_init": Arr(None, optional=True,
                                                                              extra=(np.full((2, 2), NAN),
                                                                                     np.zeros(2)))},
         edge=("n_mc", "init_scale")),
    Case(f"{M}.algorithms.GaussianFEMOMD.init", {
        "data": Obj(fresh(lambda: __import__("fedlab.online.data", fromlist=["x"]).GMMEnvironment(
            MEANS, WSTAR, n_samples=4, n_mc_loss=5)(0)), extra=(w.fed(),)),
        "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.online.algorithms", fromlist=["x"]).GaussianFEMOMD().init(**kw)),
    *[Case(f"{M}.algorithms.{name}", {"history": gmm_history_kind()})
      for name in ("regret_curves", "played_weights")],
    Case(f"{M}.algorithms.logged", {"history": gmm_history_kind(also=("name",)),
                                    "name": Kind("eta", extra=(BAD_TEXT, 3), also=("history",))}),
    Case(f"{M}.algorithms.FEMOMD", {"model": Obj(w.model(), extra=(w.solver(),)),
                                    "solver": Obj(w.solver(), extra=(w.model(),)),
                                    "n_components": Int(2, low=1), "lr": Real(1.0, low=0, low_open=True),
                                    "schedule": Choice("anytime"), "horizon": Int(None, low=1, optional=True),
                                    "n_em_steps": Int(1, low=1),
                                    "grad_clip": Real(10.0, low=0, low_open=True, optional=True),
                                    "gradient": Choice("model"), "pi_init": Choice("uniform"),
                                    "average": Choice("running"), "backend": Choice("auto")},
         edge=("n_components", "horizon")),
    Case(f"{M}.algorithms.FedOMD", {"model": Obj(w.model(), extra=(w.solver(),)),
                                    "solver": Obj(w.solver(), extra=(w.model(),)), "schedule": Choice("anytime"),
                                    "weights": Kind("uniform", extra=(BAD_TEXT, [0.5, 0.6], 3)),
                                    "backend": Choice("auto")}),
    Case(f"{M}.algorithms.OMD", {"lr": Real(1.0, low=0, low_open=True), "schedule": Choice("anytime"),
                                 "horizon": Int(None, low=1, optional=True)}, edge=("horizon",)),
    Case(f"{M}.algorithms.OMD.init", {"data": Arr(np.full((2, 3), 1 / 3), simplex=True, ndim=2),
                                      "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.online.algorithms", fromlist=["x"]).OMD().init(**kw)),
    Case(f"{M}.data.sample_mixture", {"pi": pi_kind(also=("means",)), "means": means_kind(also=("pi",)),
                                      "n": Int(3, low=1), "variance": Real(1.0, low=0, low_open=True),
                                      "rng": Rng(0)}, edge=("n",)),
    Case(f"{M}.data.dirichlet_weights", {"n_components": Int(3, low=2, also=("floor",)),
                                         "alpha": Real(0.1, low=0, low_open=True), "horizon": Int(4, low=1),
                                         "floor": Real(1e-12, low=0, high=1 / 3, high_open=True,
                                                       also=("n_components",)),
                                         "seed": Int(0, low=0)}, edge=("n_components", "horizon", "floor")),
    Case(f"{M}.algorithms.FEMOMD.init", {"data": Obj(fresh(w.fed), extra=(w.clients(),)), "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.online.algorithms", fromlist=["x"]).FEMOMD(
             w.model(), w.solver(), n_components=2).init(**kw)),
    # ---------------------------------------------------------------- bounds
    Case(f"{M}.bounds.omd_inexact_regret_bound", {"horizon": Int(3, low=1, also=("grad_err",)),
                                                  "diam_r": Real(1.0, low=0), "grad_bound": Real(1.0, low=0),
                                                  "diam_x": Real(2.0, low=0),
                                                  "grad_err": Arr(np.full(3, 0.1), nonneg=True, link=True,
                                                                  also=("horizon",))}),
    Case(f"{M}.bounds.omd_stepsize", {"horizon": Int(10, low=1), "n_components": Int(2, low=1),
                                      "grad_bound": Real(1.0, low=0, low_open=True)}, edge=("horizon", "n_components")),
    Case(f"{M}.bounds.eta_anytime", {"t": Arr(np.arange(1.0, 4.0), positive=True, nonempty=False, extra=(-0.5,)),
                                     "n_components": Int(2, low=1), "eta0": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.bounds.fem_omd_regret_bound", {"horizon": Arr(np.array([10.0, 100.0]), positive=True, nonempty=False),
                                              "n_components": Int(2, low=1), "n_samples": Int(10, low=1),
                                              "grad_bound": Real(1.0, low=0), "c_omd": Real(1.0, low=0),
                                              "diam_x": Real(2.0, low=0), "c_err": Real(1.0, low=0)},
         edge=("n_components", "n_samples", "grad_bound", "c_omd", "diam_x", "c_err")),
    Case(f"{M}.bounds.fem_omd_regret_bound_eps", {"horizon": Arr(np.array([10.0, 100.0]), positive=True,
                                                                 nonempty=False),
                                                  "n_components": Int(2, low=1), "eps": Real(0.1, low=0),
                                                  "grad_bound": Real(1.0, low=0), "c_omd": Real(1.0, low=0),
                                                  "diam_x": Real(2.0, low=0), "c_eps": Real(1.0, low=0)}),
    Case(f"{M}.bounds.regret_crossover_horizon", {"n_components": Int(2, low=1), "n_samples": Int(10, low=1),
                                                  "grad_bound": Real(1.0, low=0), "c_omd": Real(1.0, low=0),
                                                  "diam_x": Real(2.0, low=0, low_open=True),
                                                  "c_err": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.bounds.em_sample_requirement", {"dim": Int(2, low=1), "eps": Real(0.1, low=0, low_open=True),
                                               "beta": Real(0.25, low=0, high=0.5, low_open=True),
                                               "n_components": Int(2, low=1, also=("beta",)),
                                               "horizon": Int(10, low=1), "n_em_steps": Int(1, low=1),
                                               "delta": Real(0.1, low=0, high=1, low_open=True, high_open=True),
                                               "c2": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.bounds.em_accuracy", {"n_samples": Int(100, low=1), "dim": Int(2, low=1),
                                     "beta": Real(0.25, low=0, high=0.5, low_open=True),
                                     "n_components": Int(2, low=1, also=("beta",)),
                                     "horizon": Int(10, low=1), "n_em_steps": Int(1, low=1),
                                     "delta": Real(0.1, low=0, high=1, low_open=True, high_open=True),
                                     "c2": Real(1.0, low=0, low_open=True)},
         edge=("n_samples", "dim", "beta", "n_components", "horizon")),
    Case(f"{M}.bounds.separation_required", {"n_components": Int(2, low=1, also=("pi_min",)),
                                             "pi_min": Real(0.25, low=0, high=0.5, low_open=True),
                                             "c1": Real(128.0, low=0, low_open=True)}),
    Case(f"{M}.bounds.gradient_error_bound", {"means": means_kind(also=("means_star", "pi_tilde", "pi_star")),
                                              "means_star": means_kind(link=True, also=("means",)),
                                              "pi_tilde": pi_kind(ndim=1, also=("means",)),
                                              "pi_star": pi_kind(ndim=1, also=("means",)),
                                              "gamma": Real(1.0, low=0)}),
    Case(f"{M}.bounds.neg_entropy", {"pi": pi_kind()}),
    Case(f"{M}.bounds.neg_entropy_diameter", {"n_components": Int(2, low=1)}),
    *[Case(f"{M}.bounds.{name}", {"mu1": Arr(np.zeros(2), ndim=1, also=("mu2",)),
                                  "mu2": Arr(np.ones(2), ndim=1, link=True, also=("mu1",)),
                                  "variance": Real(1.0, low=0, low_open=True)})
      for name in ("gauss_kl", "gauss_tv_sup", "gauss_tv_sup_upper")],
    Case(f"{M}.bounds.mixture_tv_sup_upper", {"pi": pi_kind(ndim=1, also=("means",)),
                                              "means": means_kind(also=("pi", "means2", "pi2")),
                                              "pi2": pi_kind(ndim=1, also=("means",)),
                                              "means2": means_kind(link=True, also=("means",)),
                                              "variance": Real(1.0, low=0, low_open=True)}),
    # ---------------------------------------------------------------- experiments
    Case(f"{M}.data.GMMStream", {"means": means_kind(also=("weights",)),
                                        "weights": Arr(WSTAR, simplex=True, ndim=3, also=("means",))}),
    Case(f"{M}.data.make_gmm_stream", {"n_components": Int(2, low=1), "dim": Int(2, low=1),
                                              "n_clients": Int(2, low=1), "horizon": Int(3, low=1),
                                              "spread": Real(4.0, low=0, low_open=True),
                                              "alpha": Real(0.1, low=0, low_open=True), "centers": Choice("circle"),
                                              "weight_floor": Real(1e-12, low=0, high=0.5, high_open=True,
                                                                   also=("n_components",)),
                                              "seed": Int(0, low=0)},
         edge=("n_components", "n_clients", "horizon", "weight_floor")),
    Case(f"{M}.experiments.run_fem_omd_gmm", {"stream": Obj(fresh(stream), extra=(w.fed(),)), **FEM_SETTINGS,
                                              "n_samples": Int(4, low=1), "n_mc_loss": Int(5, low=1),
                                              "means_init": Arr(None, optional=True,
                                                                extra=(np.full((2, 2), NAN), np.zeros((3, 2)))),
                                              "variance": Real(1.0, low=0, low_open=True), "seed": Int(0, low=0)},
         edge=("n_mc", "init_scale", "n_samples", "n_mc_loss")),
    Case(f"{M}.experiments.late_regret_ratio", {"regret": Arr(np.sqrt(np.arange(1.0, 9.0)), ndim=1,
                                                              extra=(np.ones(3),))}),
    Case(f"{M}.experiments.gmm_regret", {"n_samples": Int(4, low=1), "n_clients": Int(2, low=1),
                                         "spread": Real(4.0, low=0, low_open=True),
                                         "lr": Real(1.0, low=0, low_open=True), "schedule": Choice("anytime"),
                                         "horizon": Int(3, low=1), "n_components": Int(2, low=1),
                                         "dim": Int(2, low=1), "alpha": Real(0.1, low=0, low_open=True),
                                         "n_em_steps": Int(1, low=1), "centers": Choice("circle"),
                                         "grad_clip": Real(10.0, low=0, low_open=True, optional=True),
                                         "split": Flag(True), "gradient": Choice("model"),
                                         "n_mc_loss": Int(5, low=1), "seed": Int(0, low=0)}),
    Case(f"{M}.experiments.separated_limit_regret", {"n_components": Int(2, low=2),
                                                     "alpha": Real(0.1, low=0, low_open=True),
                                                     "horizon": Int(5, low=1), "seed": Int(0, low=0),
                                                     "n_refine": Int(1, low=1)}),
    Case(f"{M}.data.DigitsMixtureStream", {"n_clients": Int(2, low=1), "n_components": Int(2, low=1, high=10),
                                                  "n_samples": Int(3, low=1), "n_test": Int(1, low=1),
                                                  "alpha": Real(0.1, low=0, low_open=True),
                                                  "mode": Choice("label_groups"), "weights": Choice("iid"),
                                                  "seed": Int(0, low=0)}),
    Case(f"{M}.experiments.digits_stream_regret", {
        "n_components": Int(2, low=1, high=10), "n_clients": Int(2, low=1), "n_samples": Int(3, low=1),
        "n_test": Int(1, low=1), "horizon": Int(2, low=1), "alpha": Real(0.1, low=0, low_open=True),
        "mode": Choice("label_groups"), "weights": Choice("iid"), "lr": Real(1.0, low=0, low_open=True),
        "lr_em": Real(0.5, low=0, low_open=True), "local_steps": Int(1, low=1), "batch_size": Int(3, low=1),
        "n_em_steps": Int(1, low=1), "average": Choice("last"), "gradient": Choice("model"),
        "lr_fedomd": Real(None, low=0, low_open=True, optional=True), "seed": Int(0, low=0)},
         edge=("n_components", "n_clients", "n_samples", "horizon", "batch_size")),
    Case(f"{M}.experiments.thesis_fig49_configs", {"horizon": Int(10, low=2), "dim": Int(2, low=1),
                                                   "n_components": Int(3, low=1),
                                                   "n_values": Kind((1, 30), extra=((0,), (1.5,), (), BAD_TEXT)),
                                                   "c_values": Kind((5, 50), extra=((0,), (1.5,), (), BAD_TEXT)),
                                                   "s_values": Kind((1.0, 5.0), extra=((0.0,), (NAN,), (), BAD_TEXT))}),
    Case(f"{M}.experiments.regret_summary", {"results": Obj(fresh(lambda: [gmm_result()]),
                                                            extra=([], [{}], BAD_TEXT, [1]))}),
    Case(f"{M}.experiments.gradient_error_breakdown", {"history": gmm_history_kind(),
                                                       "clip": Real(10.0, low=0, low_open=True)}),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.plot_regret", {
        "curves": Obj({"a": (np.arange(1.0, 4.0), np.ones((2, 3)))},
                      extra=({}, {"a": (np.arange(1.0, 4.0), np.ones((2, 2)))}, {"a": 3}, [1],
                             {"a": (np.array([1.0, NAN, 3.0]), np.ones((2, 3)))})),
        "bounds": Obj(None, optional=True, extra=({"b": (np.arange(1.0, 4.0), np.ones(2))}, {"b": 3}, [1])),
        "ax": AX, "loglog": Flag(False), "per_step": Flag(False)}),
    Case(f"{M}.plots.plot_regret_panels", {
        "panels": Obj({"p": {"a": (np.arange(1.0, 4.0), np.ones((2, 3)))}},
                      extra=({}, {"p": 3}, [1], {"p": {"a": (np.arange(1.0, 4.0), np.ones((2, 2)))}})),
        "axes": Kind(None, extra=(BAD_TEXT, 3)), "loglog": Flag(True)}),
    Case(f"{M}.plots.plot_regret_bounds", {"horizons": Arr(np.array([10.0, 100.0]), positive=True, ndim=1),
                                           "n_components": Int(2, low=1),
                                           "n_values": Kind((10, 100), extra=((0,), (1.5,), (), BAD_TEXT)),
                                           "ax": AX}),
    Case(f"{M}.plots.plot_weight_paths", {"pi": Arr(np.full((4, 2), 0.5), nonneg=True, ndim=2, also=("pi_star",),
                                                    extra=(np.full((5, 2), 0.5),)),
                                          "pi_star": Arr(np.full((3, 2), 0.5), nonneg=True, ndim=2, also=("pi",)),
                                          "ax": AX, "window": Int(2, low=1)}),
]


# ---------------------------------------------------------------- mixture streams on any pools, paper mode (Fig. 4.10)
_RNG = np.random.default_rng(0)
X_POOL, Y_POOL = _RNG.random((20, 1, 2, 2), dtype=np.float32), np.arange(20) % 10
POOLS = ((X_POOL, Y_POOL), (X_POOL[:10], Y_POOL[:10]))
BAD_POOLS = ((X_POOL, Y_POOL[:-1]), (X_POOL,), [1], (X_POOL[:, 0, 0, 0], Y_POOL), (X_POOL, Y_POOL - 1.5),
             (X_POOL, np.zeros(20, dtype=int)))


@functools.cache
def mixture_stream():
    from fedlab.online.data import MixtureStream

    return MixtureStream(*POOLS, n_clients=2, n_components=2, n_samples=3)


def paper_setting():
    import dataclasses

    from fedlab.online.real_data import SETTINGS

    s = SETTINGS["mnist"]
    return dataclasses.replace(s, clients=2, rounds=2, seeds=1,
                               loader={**s.loader, "comparator": {**s.loader["comparator"], "epochs": 1}})


def paper_results():
    curve = {"regret": [0.5, 0.8, 1.0], "regret_runs": [[0.5, 0.8, 1.0]], "accuracy": [0.5] * 3, "mean_accuracy": 0.5}
    return {"mnist": {"seeds": [0], "mean": {"t": [1, 2, 3], "comparator_accuracy": 0.9, "fem_omd": curve,
                                             "fedomd": curve}}}


def _paper_pools():
    from fedlab.paper_mode import DATA_SHAPES

    rng = np.random.default_rng(0)
    return tuple((rng.random((n, *DATA_SHAPES["mnist"][0]), dtype=np.float32), np.arange(n) % 10) for n in (20, 10))


def chapter_results():
    """A small results mapping of notebook 06 (the builder of tests/online/test_claims.py, loaded by its path)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "online" / "test_claims.py"
    spec = importlib.util.spec_from_file_location("online_claims_results", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.results()


def _comparator(x, y):
    return lambda inputs: np.zeros(len(inputs), dtype=int)


CASES += [
    Case(f"{M}.data.MixtureStream", {
        "train": Obj(POOLS[0], extra=BAD_POOLS), "test": Obj(POOLS[1], extra=BAD_POOLS),
        "n_classes": Int(None, low=10, optional=True), "n_clients": Int(2, low=1),
        "n_components": Int(2, low=1, high=10), "n_samples": Int(3, low=1), "n_test": Int(1, low=1),
        "alpha": Real(0.1, low=0, low_open=True), "mode": Choice("label_groups"), "weights": Choice("iid"),
        "seed": Int(0, low=0), "groups_rng": Obj(None, optional=True, extra=(1.5,))},
         edge=("n_classes", "n_clients", "n_components", "n_samples")),
    Case(f"{M}.experiments.mixture_stream_regret", {
        "stream": Obj(fresh(mixture_stream)), "model": Obj(lambda: __import__("fedlab.models", fromlist=["LinearModel"]).LinearModel(4, 10)),
        "comparator": Obj(_comparator), "horizon": Int(2, low=1),
        "methods": Kind(("fedomd",), extra=((BAD_TEXT,), (), 3)),
        "lr": Real(1.0, low=0, low_open=True), "lr_em": Real(0.5, low=0, low_open=True),
        "local_steps": Int(1, low=1), "batch_size": Int(3, low=1), "n_em_steps": Int(1, low=1),
        "average": Choice("last"), "gradient": Choice("model"),
        "lr_fedomd": Real(None, low=0, low_open=True, optional=True), "seed": Int(0, low=0)}, skip=("device",),
         edge=("horizon", "batch_size")),
    Case(f"{M}.experiments.logistic_comparator", {"x": Arr(np.eye(4), ndim=2),
                                                  "y": Arr(np.arange(4), integer=True, link=True, also=("x",))}),
    Case(f"{M}.experiments.sublinear_from", {"t": Arr(np.arange(1.0, 9.0), positive=True, ndim=1, link=True,
                                                      also=("values",)),
                                             "values": Arr(np.sqrt(np.arange(1.0, 9.0)), link=True, also=("t",)),
                                             "linear": Real(0.8, low=0, low_open=True),
                                             "every": Int(None, low=1, optional=True)}),
    Case(f"{M}.plots.plot_paper_regret", {"results": Obj(fresh(paper_results), extra=({}, {"mnist": 3}, [1],
                                                                                       {"mnist": {"mean": {}}})),
                                          "axes": Kind(None, extra=(BAD_TEXT, 3)), "loglog": Flag(False)}),
    Case(f"{M}.real_data.paper_stream", {"setting": Obj(fresh(paper_setting), extra=({"dataset": "mnist"},)),
                                         "seed": Int(0, low=0),
                                         "pools": Obj(fresh(_paper_pools), optional=True, also=("train", "test"),
                                                      extra=((1, 2), BAD_POOLS[:2]))}),
    Case(f"{M}.real_data.train_central", {
        "model": Obj(fresh(lambda: __import__("fedlab.models", fromlist=["LinearModel"]).LinearModel(4, 2))), "x": Arr(np.eye(4, dtype=np.float32), also=("y",)),
        "y": Arr(np.array([0, 1, 0, 1]), integer=True, nonneg=True, link=True, also=("x",)),
        "epochs": Int(1, low=1), "batch_size": Int(2, low=1), "lr": Real(0.1, low=0, low_open=True),
        "momentum": Real(0.0, low=0, high=1, high_open=True), "seed": Int(0, low=0)}, skip=("device",),
         edge=("batch_size",)),
    Case(f"{M}.real_data.online_paper_run", {
        "setting": Obj(fresh(lambda: __import__("dataclasses").asdict(paper_setting())),
                       extra=("mnist", [1], {"dataset": "mnist"})),
        "seed": Int(0, low=0)}, skip=("device",)),
    Case(f"{M}.real_data.run_paper", {"seeds": Int(None, low=1, optional=True),
                                      "datasets": Kind(("mnist",), extra=((), ("femnist",), 3)),
                                      "settings": Kind(fresh(lambda: {"mnist": paper_setting()}),
                                                       extra=(BAD_TEXT, 3, {"mnist": 3}))},
         skip=("device", "store")),
    Case(f"{M}.claims.paper_claims", {"results": Kind(None, extra=(BAD_TEXT, 3, [1], {"mnist": 3}))}),
    Case(f"{M}.claims.chapter_claims", {"results": Obj(fresh(chapter_results),
                                                       extra=({}, BAD_TEXT, [1], {"thesis": 3})),
                                        "scale": Choice("smoke")}),
    Case(f"{M}.real_data.expected_seconds", {"settings": Kind(fresh(lambda: {"mnist": paper_setting()}),
                                                              extra=(BAD_TEXT, 3, {"mnist": 3}))},
         skip=("device",)),
]
