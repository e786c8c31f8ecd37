"""Robustness cases of the data-streams chapter (notebook 05): arrivals, memories, bounds, experiments, plots."""
from __future__ import annotations

import functools

import numpy as np
import torch

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, Int, Kind, Obj, Real, Rng, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.streams"
N = np.array([0.5, 0.25, 0.25])
P = np.array([0.4, 0.3, 0.3])


@functools.cache
def stream():
    from fedlab.streams.data import make_stream_dataset

    xs, ys = w.client_arrays()
    return make_stream_dataset(xs, ys, [[1, 1]] * 4, [3, 3, 3, 3], horizon=2, n_classes=w.N_CLASSES, rng=0)


@functools.cache
def schedule():
    from fedlab.streams.data import simulate_memory

    return simulate_memory([2, 1, 2], 3, rng=0)


def fractions_kind(**kw):
    return Arr(N, simplex=True, ndim=1, link=True, **kw)


def p_kind(**kw):
    return Arr(P, simplex=True, ndim=1, link=True, **kw)


def weights_list():
    return [np.full((2, 3), 1 / 18), np.full((2, 6), 1 / 18)]


SUMMARY_ROW = {"h": 0.2, "metric": "acc", "grid": [0.0, 1.0], "grid_mean": [0.7, 0.6], "grid_std": [0.01, 0.02],
               "h_mean": 0.2, "p_hat_mean": 0.5, "p_hat_std": 0.1,
               **{f"{s}_{t}": 0.7 for s in ("fresh", "historical", "uniform", "ours", "optimal")
                  for t in ("mean", "std")}}
"""A row of ``fedlab.streams.experiments.summarize``: what the result plots read."""

CASE_STUDY = {"h": Real(0.2, low=0, high=1, low_open=True, high_open=True), "n_total": Int(40, low=1),
              "horizon": Int(2, low=1), "m_hist": Int(1, low=1), "m_fresh": Int(1, low=1), "dim": Int(2, low=1),
              "eps": Real(0.1, low=0), "noise": Real(0.0, low=0), "test_per_client": Int(5, low=1),
              "seed": Int(0, low=0), "task": Choice("logistic")}


CASES = [
    # ---------------------------------------------------------------- data
    Case(f"{M}.data.ConstantArrivals", {"rate": Int(2, low=0)}, edge=("rate",)),
    Case(f"{M}.data.StaticArrivals", {"size": Int(2, low=1)}, edge=("size",)),
    Case(f"{M}.data.PoissonArrivals", {"rate": Real(2.0, low=0, low_open=True)}),
    Case(f"{M}.data.IntermittentArrivals", {"rate": Int(2, low=1), "p_online": Real(0.5, low=0, high=1, low_open=True),
                                            "rounds": Kind(None, extra=((-1,), (1.5,), BAD_TEXT))},
         edge=("rate", "p_online")),
    Case(f"{M}.data.make_arrivals", {"kind": Choice("constant"), "rate": Int(2, low=0)}),
    Case(f"{M}.data.arrival_counts", {"process": Arr([1, 0, 2], nonneg=True, integer=True,
                                                     extra=(np.array([1, 0]),), also=("counts", "horizon")),
                                      "horizon": Int(3, low=1, also=("counts",)), "rng": Rng(0)}),
    Case(f"{M}.data.Memory", {"capacity": Int(3, low=0), "rule": Choice("fifo"), "rng": Rng(0)}, edge=("capacity",)),
    Case(f"{M}.data.simulate_memory", {"counts": Arr([2, 1, 2], nonneg=True, integer=True), "capacity": Int(3, low=0),
                                       "rule": Choice("fifo"), "rng": Rng(0)}, edge=("capacity",)),
    Case(f"{M}.data.StreamDataset", {
        "train": Obj(fresh(lambda: stream().train), extra=(w.fed(),), also=("test", "memory_index")),
        "test": Obj(fresh(lambda: stream().test), extra=(w.fed(),), also=("train",)),
        "n_classes": Int(w.N_CLASSES, low=1, optional=True, extra=(2,)),
        "memory_index": Arr(fresh(lambda: stream().memory_index), integer=True, nonneg=True,
                            also=("memory_count", "train")),
        "memory_count": Arr(fresh(lambda: stream().memory_count), integer=True, nonneg=True,
                            also=("memory_index",)),
        "historical": Arr(None, optional=True, finite=False, extra=(torch.ones(2, dtype=torch.bool),
                                                                    torch.zeros(w.N_CLIENTS)))}),
    Case(f"{M}.data.make_stream_dataset", {
        "xs": Obj(w.client_arrays()[0], extra=([], [np.full((6, w.DIM), NAN)] * 4), also=("ys", "arrivals")),
        "ys": Obj(w.client_arrays()[1], extra=([np.zeros(1)] * 4,), also=("xs",)),
        "arrivals": Obj([[1, 1]] * 4, extra=([[1, 1]] * 2, [[-1, 1]] * 4, [[9, 9]] * 4, [1.5] * 4),
                        also=("xs", "counts")),
        "capacities": Obj([3, 3, 3, 3], extra=([3], [-1, 3, 3, 3], [1.5, 3, 3, 3]), also=("xs", "capacity")),
        "rules": Kind("fifo", extra=(BAD_TEXT, ["fifo"], 3), also=("rule",)),
        "horizon": Int(2, low=1), "n_classes": Int(w.N_CLASSES, low=1, optional=True),
        "historical": Kind(None, extra=([True], BAD_TEXT)), "rng": Rng(0)}),
    Case(f"{M}.data.make_case_study", {
        "hist_xs": Obj([w.client_arrays()[0][0]], extra=(3, [np.full((2, w.DIM), NAN)]), also=("hist_ys",)),
        "hist_ys": Obj([w.client_arrays()[1][0]], extra=(3, []), also=("hist_xs",)),
        "fresh_xs": Obj([w.client_arrays()[0][3]], extra=(3, [np.zeros((3, w.DIM))]), also=("fresh_ys",)),
        "fresh_ys": Obj([w.client_arrays()[1][3]], extra=(3, []), also=("fresh_xs",)),
        "horizon": Int(2, low=1), "n_classes": Int(w.N_CLASSES, low=1, optional=True)}, edge=("horizon",)),
    Case(f"{M}.data.StreamSynthetic", {"theta": Arr(np.ones((2, 3)), ndim=2, also=("theta0",)),
                                       "theta0": Arr(np.zeros(3), ndim=1, link=True, also=("theta",)),
                                       "task": Choice("logistic"), "noise": Real(0.0, low=0)}),
    Case(f"{M}.data.make_stream_synthetic", {"n_clients": Int(2, low=1), "dim": Int(3, low=1),
                                             "eps": Real(0.1, low=0), "task": Choice("logistic"),
                                             "noise": Real(0.0, low=0), "rng": Rng(0)},
         edge=("n_clients", "dim", "eps")),
    # ---------------------------------------------------------------- algorithms
    Case(f"{M}.algorithms.StreamingFedAvg", {"model": Obj(w.model(), extra=(w.solver(),)),
                                             "solver": Obj(w.solver(), extra=(w.model(),)),
                                             "weights": Arr(None, optional=True, simplex=True),
                                             "sample_weights": Kind(None, extra=(BAD_TEXT, 3)),
                                             "radius": Real(None, low=0, low_open=True, optional=True),
                                             "backend": Choice("auto")}),
    Case(f"{M}.algorithms.StreamingScaffold", {"model": Obj(w.model(), extra=(w.solver(),)),
                                               "solver": Obj(w.solver(), extra=(w.model(), __import__(
                                                   "fedlab.engine", fromlist=["x"]).LocalSGD(
                                                   lr=0.1, local_steps=1, batch_size=2, momentum=0.5))),
                                               "weights": Arr(None, optional=True, simplex=True),
                                               "sample_weights": Kind(None, extra=(BAD_TEXT, 3)),
                                               "radius": Real(None, low=0, low_open=True, optional=True),
                                               "backend": Choice("auto")}),
    Case(f"{M}.algorithms.StreamingFedAvg.init", {"data": Obj(fresh(stream), extra=(w.fed(), w.clients())),
                                                  "seed": Int(0, low=0)},
         fn=lambda **kw: __import__("fedlab.streams.algorithms", fromlist=["x"]).StreamingFedAvg(
             w.model(), w.solver()).init(**kw)),
    Case(f"{M}.algorithms.strategy_weights", {"strategy": Choice("uniform"), "n": fractions_kind(also=("m_hist",)),
                                              "m_hist": Int(1, low=0, high=3, also=("n",)),
                                              "p_hist": Real(None, low=0, high=1, optional=True),
                                              "ratio": Real(None, low=0, optional=True, inf_ok=True),
                                              "method": Choice("auto")}, edge=("m_hist", "p_hist", "ratio")),
    Case(f"{M}.algorithms.sample_weight_schedule", {"data": Obj(fresh(stream), extra=(w.fed(),)),
                                                    "rule": Choice("ones"),
                                                    "p": Arr(None, optional=True, simplex=True)}),
    Case(f"{M}.algorithms.local_sample_weights", {"lam": Arr(np.array([0.5, 0.25, 0.25]), nonneg=True, ndim=1)}),
    Case(f"{M}.algorithms.algorithm13_gradient", {"per_sample_grads": Arr(np.ones((3, 2)), ndim=2, link=True,
                                                                          also=("lam",)),
                                                  "lam": Arr(np.array([0.5, 0.25, 0.25]), nonneg=True, link=True,
                                                             also=("per_sample_grads",)),
                                                  "batch_size": Int(2, low=1), "rng": Rng(0)}, edge=("batch_size",)),
    # ---------------------------------------------------------------- bounds
    Case(f"{M}.bounds.psi", {"p": p_kind(also=("n",)), "n": fractions_kind(also=("p", "m_hist")),
                             "m_hist": Int(1, low=0, high=3, also=("n",)), "c1": Real(1.0, low=0),
                             "c2": Real(1.0, low=0), "c0": Real(0.0, low=0)}, edge=("m_hist", "c1", "c2")),
    Case(f"{M}.bounds.psi_general", {"p": p_kind(also=("n",)), "n": fractions_kind(also=("p", "alpha", "m_hist")),
                                     "alpha": Arr(P, simplex=True, link=True, also=("n",)),
                                     "m_hist": Int(1, low=0, high=3, also=("n",)), "c1": Real(1.0, low=0),
                                     "c2_tilde": Real(1.0, low=0), "disc_max": Real(0.1, low=0),
                                     "c0": Real(0.0, low=0)}, edge=("m_hist", "c1", "c2_tilde", "disc_max")),
    Case(f"{M}.bounds.l1_distance_bound", {"p": p_kind(also=("n",)), "n": fractions_kind(also=("p",))}),
    Case(f"{M}.bounds.n_eff", {"p": p_kind(also=("n",)), "n": fractions_kind(also=("p",)),
                               "n_total": Real(100.0, low=0, low_open=True)}),
    Case(f"{M}.bounds.effective_sample_size", {"p_samples": Arr(np.full(4, 0.25), simplex=True)}),
    Case(f"{M}.bounds.importance_from_schedule", {"weights": Obj(fresh(weights_list),
                                                                 extra=([], [np.ones(3)], [-np.ones((2, 3))],
                                                                        [np.ones((2, 3)), np.ones((3, 3))]))}),
    Case(f"{M}.bounds.p_hist_weights", {"p_hist": Real(0.5, low=0, high=1), "n": fractions_kind(also=("m_hist",)),
                                        "m_hist": Int(1, low=0, high=3, also=("n",))}, edge=("p_hist",)),
    *[Case(f"{M}.bounds.{name}", {"ratio": Arr(0.15, nonneg=True, nonempty=False, finite=False,
                                              extra=(NAN, -1.0)),
                                  "h": Arr(0.2, prob=True, nonempty=False),
                                  "m_fresh": Int(4, low=1)})
      for name in ("optimal_p_hist", "psi_closed_form")],
    Case(f"{M}.bounds.optimal_weights", {"ratio": Real(0.15, low=0, inf_ok=True),
                                         "n": fractions_kind(also=("m_hist",)),
                                         "m_hist": Int(1, low=0, high=3, also=("n",)), "method": Choice("auto")},
         edge=("ratio", "m_hist")),
    Case(f"{M}.bounds.historical_threshold", {"h": Arr(0.2, prob=True, nonempty=False),
                                              "m_fresh": Int(4, low=1)}),
    Case(f"{M}.bounds.crossover_ratio", {"h": Arr(0.2, prob=True, nonempty=False), "m_fresh": Int(4, low=1)}),
    Case(f"{M}.bounds.crossover_fraction", {"ratio": Arr(0.15, nonneg=True, nonempty=False),
                                            "m_fresh": Int(4, low=1)}),
    Case(f"{M}.bounds.psi_constants", {"sigma0": Real(1.0, low=0), "diameter": Real(1.0, low=0),
                                       "horizon": Int(10, low=1), "m_fresh": Int(4, low=0),
                                       "loss_bound": Real(1.0, low=0), "pdim": Real(5.0, low=0, low_open=True),
                                       "n_total": Real(100.0, low=0, low_open=True), "disc_max": Real(0.0, low=0),
                                       "version": Choice("thesis")},
         edge=("sigma0", "diameter", "horizon", "m_fresh", "loss_bound")),
    Case(f"{M}.bounds.ratio_exact", {"sigma0": Real(1.0, low=0), "diameter": Real(1.0, low=0),
                                     "horizon": Int(10, low=1), "m_fresh": Int(4, low=0),
                                     "loss_bound": Real(1.0, low=0), "pdim": Real(5.0, low=0, low_open=True),
                                     "n_total": Real(100.0, low=0, low_open=True)},
         edge=("sigma0", "diameter", "horizon", "m_fresh", "loss_bound")),
    Case(f"{M}.bounds.estimate_ratio", {  # vectorised: numbers or arrays
        "loss_bound": Arr(1.0, nonneg=True, nonempty=False, extra=(-1.0,)),
        "grad_bound": Arr(1.0, positive=True, nonempty=False, extra=(0.0,)),
        "diameter": Arr(1.0, positive=True, nonempty=False, extra=(0.0,)),
        "d": Arr(5.0, nonneg=True, nonempty=False, extra=(-1.0,)),
        "n_total": Arr(100.0, positive=True, nonempty=False, extra=(0.0,)),
        "m_fresh": Arr(4, positive=True, integer=True, nonempty=False, extra=("3", 1.5, 0))}),
    Case(f"{M}.bounds.ratio_spread", {"loss_bound": Real(2.3, low=0), "grad_bound": Real(5.5, low=0, low_open=True),
                                      "diameter": Real(1.0, low=0, low_open=True, extra=(0.05,)),
                                      "d": Real(100.0, low=0), "n_total": Real(1e4, low=0, low_open=True),
                                      "m_fresh": Int(25, low=1), "rounding": Real(0.05, low=0)},
         edge=("loss_bound", "d", "m_fresh", "rounding")),
    Case(f"{M}.bounds.table_4_1_check", {"tolerance": Real(0.005, low=0)}),
    # ---------------------------------------------------------------- experiments
    Case(f"{M}.experiments.LinearNoBias", {"in_features": Int(3, low=1)}),
    Case(f"{M}.data.case_study_sizes", {"h": Real(0.2, low=0, high=1, low_open=True, high_open=True),
                                               "n_total": Int(100, low=1), "horizon": Int(5, low=1),
                                               "m_hist": Int(2, low=1), "m_fresh": Int(2, low=1)},
         edge=("n_total", "horizon", "m_hist", "m_fresh")),
    Case(f"{M}.data.synthetic_case_study", dict(CASE_STUDY),
         edge=("n_total", "horizon", "dim", "eps", "test_per_client")),
    Case(f"{M}.experiments.excess_risk", {"params": Obj(fresh(lambda: {"weight": torch.zeros(1, 3),
                                                                        "bias": torch.zeros(1)}),
                                                        extra=({}, {"weight": torch.zeros(2, 1)},
                                                               {"weight": torch.full((1, 3), NAN),
                                                                "bias": torch.zeros(1)})),
                                          "theta": Arr(np.ones((2, 3)), ndim=2, also=("params", "n")),
                                          "n": Arr(np.array([0.5, 0.5]), simplex=True, link=True,
                                                   also=("theta",))}),
    Case(f"{M}.experiments.estimate_constants", {
        "model": Obj(fresh(lambda: __import__("fedlab.streams.experiments", fromlist=["x"]).LinearNoBias(w.DIM)),
                     extra=(w.solver(),)),
        "data": Obj(fresh(lambda: __import__("fedlab.engine", fromlist=["x"]).ClientData.from_arrays(
            w.client_arrays()[0], [y.astype(np.float32) for y in w.client_arrays()[1]])), extra=(w.fed(),)),
        "params": Kind(None, extra=(BAD_TEXT, {})),
        "fraction": Real(0.5, low=0, high=1, low_open=True), "steps": Int(2, low=1), "lr": Real(0.5, low=0,
                                                                                               low_open=True),
        "batch_size": Int(4, low=1), "seed": Int(0, low=0)}, edge=("fraction", "steps", "batch_size")),
    Case(f"{M}.experiments.compare_strategies", {**CASE_STUDY, "local_steps": Int(1, low=1),
                                                 "batch_size": Int(4, low=1), "lr": Real(0.25, low=0, low_open=True),
                                                 "grid": Kind((0.0, 1.0), extra=((NAN,), (1.5,), (), BAD_TEXT)),
                                                 "estimate_fraction": Real(0.5, low=0, high=1, low_open=True),
                                                 "estimate_steps": Int(2, low=1), "optimizer": Choice("fedavg"),
                                                 "prox_mu": Real(0.1, low=0, low_open=True)},
         edge=("n_total", "horizon", "dim", "eps", "test_per_client", "batch_size", "estimate_fraction",
               "estimate_steps")),
    Case(f"{M}.experiments.summarize", {"records": Obj([], extra=(3, [3], [{"seed": 0}])),
                                        "digits": Int(3, low=0)}),
    Case(f"{M}.experiments.bayes_accuracy_draws", {"n_draws": Int(3, low=1), "n_clients": Int(2, low=1),
                                                   "dim": Int(3, low=1), "eps": Real(0.1, low=0),
                                                   "n_samples": Int(20, low=1), "seed": Int(0, low=0)},
         edge=("n_draws", "n_clients", "dim", "eps", "n_samples")),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.plot_memory_schedule", {"schedule": Obj(fresh(schedule), extra=(np.full((2, 2), 0.5), np.ones(3))),
                                             "ax": AX}),
    *[Case(f"{M}.plots.{name}", {"h_values": Kind((0.05, 0.2), extra=((NAN,), (1.5,), (), BAD_TEXT)),
                                 "m": Int(10, low=2, also=("m_hist",)), "m_hist": Int(5, low=1, also=("m",)),
                                 "ratios": Arr(None, optional=True, extra=(np.array([-1.0]), np.array([NAN]))),
                                 "mark": Real(None, optional=True, low=0, low_open=True), **extra})
      for name, extra in (("plot_p_hist_vs_ratio", {"ax": AX}), ("plot_bound_tradeoff", {}))],
    Case(f"{M}.plots.plot_psi_gaps", {"ratios": Kind((0.05, 0.15), extra=((NAN,), (-1.0,), (), BAD_TEXT)),
                                      "m": Int(10, low=2, also=("m_hist",)), "m_hist": Int(5, low=1, also=("m",)),
                                      "h_values": Arr(None, optional=True, extra=(np.array([1.5]),)),
                                      "mark_h": Real(None, optional=True, low=0, high=1)}),
    Case(f"{M}.plots.plot_client_weights", {"p": p_kind(also=("n",)), "m_hist": Int(1, low=0, high=3,
                                                                                   also=("p", "n")),
                                            "n": Arr(None, optional=True, simplex=True, extra=(N[:2] / N[:2].sum(),)),
                                            "ax": AX}),
    Case(f"{M}.plots.plot_bound_explorer", {"ratio": Real(0.15, low=0), "h": Real(0.2, low=0, high=1, low_open=True,
                                                                                   high_open=True),
                                            "m": Int(10, low=2, also=("m_hist",)), "m_hist": Int(5, low=1,
                                                                                             also=("m",)),
                                            "unequal": Kind(False, extra=(BAD_TEXT,)), "seed": Int(0, low=0),
                                            "h_values": Kind((0.05, 0.2), extra=((NAN,), (1.5,), ()))}),
    Case(f"{M}.plots.plot_strategy_comparison", {
        "rows": Obj([SUMMARY_ROW], extra=([], [3], [{"h": 0.2}], BAD_TEXT)),
        "key": Kind("h", extra=(BAD_TEXT, 3)), "ax": AX,
        "strategies": Kind(("fresh", "ours"), extra=((BAD_TEXT,), (), BAD_TEXT, (3,)))}),
    Case(f"{M}.plots.plot_p_hist_curve", {"row": Obj(SUMMARY_ROW, extra=({}, {**SUMMARY_ROW, "grid_mean": [NAN, 1.0]},
                                                                          {**SUMMARY_ROW, "grid_std": [0.1]},
                                                                          {**SUMMARY_ROW, "h_mean": NAN}, [1])),
                                          "ax": AX}),
]


def REAL_SETTING():
    """The FEMNIST setting shrunk to the robustness files, on a softmax regression."""
    from fedlab.streams.real_data import SETTINGS

    return w.tiny(SETTINGS["femnist"], model="mnist_logistic")


@functools.cache
def image_study():
    """A case study of 28x28 images for :func:`REAL_SETTING`'s model: 2 historical and 2 fresh clients, T=2."""
    from fedlab.streams.data import make_case_study

    rng = np.random.default_rng(0)
    xs, ys = [rng.random((4, 1, 28, 28), dtype=np.float32) for _ in range(4)], [np.arange(4) % 3] * 4
    return make_case_study(xs[:2], ys[:2], xs[2:], ys[2:], horizon=2, n_classes=62)


def REAL_SETTING_DICT():
    import dataclasses

    return dataclasses.asdict(REAL_SETTING())


CASES += [
    # ---------------------------------------------------------------- paper mode (fedlab.streams.real_data)
    Case(f"{M}.real_data.case_study", {"setting": Obj(REAL_SETTING(), extra=("femnist",)),
                                       "h": Real(0.2, low=0, high=1, low_open=True, high_open=True),
                                       "seed": Int(0, low=0)}),
    Case(f"{M}.real_data.compare_on", {"data": Obj(fresh(image_study), extra=(w.client_arrays(),)),
                                       "setting": Obj(REAL_SETTING(), extra=("femnist",)),
                                       "m_hist": Int(1, low=1, high=3), "seed": Int(0, low=0)}, skip=("device",),
         edge=("m_hist",)),
    Case(f"{M}.real_data.stream_paper_run", {"setting": Obj(REAL_SETTING_DICT(), extra=("femnist", [1])),
                                             "h": Real(0.2, low=0, high=1, low_open=True, high_open=True),
                                             "seed": Int(0, low=0)}, skip=("device",)),
    Case(f"{M}.real_data.run_paper", {"seeds": Int(None, low=1, optional=True),
                                      "datasets": Kind(("femnist",), extra=((), ("mnist",), 3)),
                                      "settings": Kind(fresh(lambda: {"femnist": REAL_SETTING()}),
                                                       extra=(BAD_TEXT, 3))}, skip=("device", "store")),
    Case(f"{M}.real_data.expected_seconds", {"n_clients": Int(None, low=2, optional=True),
                                             "settings": Kind(fresh(lambda: {"femnist": REAL_SETTING()}),
                                                              extra=(BAD_TEXT, 3))}, skip=("device",),
         edge=("n_clients",)),
]


def claims_results():
    """Results for ``fedlab.streams.claims.chapter_claims`` under which the paper's statements hold (3 seeds)."""
    from fedlab.streams.published import PAPER_ACCURACY, REPORTED_P_HIST, REPORTED_RATIOS, TABLE_4_1, TABLES

    def run(h, seed):
        acc = PAPER_ACCURACY[h]["Synthetic"]
        return {"config": {"h": h}, "seed": seed, "result": {
            "values": {m: acc[m] for m in ("fresh", "historical", "uniform", "ours")}, "best_grid_value":
            acc["optimal"], "best_grid_p": 0.5, "p_hat": REPORTED_P_HIST["Synthetic"][h], "bayes": 90.0,
            "ratio": REPORTED_RATIOS["Synthetic"][h], "constants": {"loss_bound": 0.7, "grad_bound": 0.4,
                                                                    "diameter": 1.9}}}

    records = [run(h, s) for h in TABLES for s in range(3)]
    row = {"ours_mean": 3.0, "uniform_mean": 2.0, "fresh_mean": 1.0, "historical_mean": 0.0,
           "ours_minus_unif_mean": 1.0}
    return {"table_4_1": [{"dataset": n, "h": h, "ratio_formula": REPORTED_RATIOS[n][h],
                           "p_hist_from_reported": REPORTED_P_HIST[n][h]} for n in TABLE_4_1 for h in TABLES],
            "ratio_caption": 0.15,
            "fig42": {"ratios": np.array([1e-3, 1e2]), "p_hist": {h: np.array([1.0, h]) for h in (0.05, 0.2, 0.5)},
                      "threshold": {0.05: 0.04, 0.2: 0.09, 0.5: 0.14}},
            "fig43": {"h": np.array([0.1, 0.5, 0.9]), "gap_hist": {0.15: np.array([0.3, 0.2, 0.1])},
                      "gap_unif": {0.15: np.array([0.1, 0.3, 0.2])}, "crossover": {0.15: 0.3}},
            "crossover_cifar10": 0.3, "synthetic": records, "synthetic_spec": records,
            "bayes_draws": np.full(20, 90.0), "optimizers": {o: row for o in ("fedavg", "fedprox", "scaffold")},
            "linear": {"low noise, N=1000": {"best_grid_p": [0.2] * 3, "p_hat_mean": 0.3},
                       "high noise, N=10^4": {"best_grid_p": [0.6] * 3, "p_hat_mean": 0.7}}}


CASES += [
    # ---------------------------------------------------------------- claims (fedlab.streams.claims)
    Case(f"{M}.claims.chapter_claims", {
        "results": Obj(fresh(claims_results), extra=({}, [1], fresh(lambda: {**claims_results(), "synthetic": "x"}),
                                                     fresh(lambda: {**claims_results(), "bayes_draws": [NAN] * 20}),
                                                     fresh(lambda: {**claims_results(), "linear": {}}))),
        "scale": Choice("smoke")}),
    Case(f"{M}.claims.paper_claims", {"results": Kind(None, extra=(BAD_TEXT, 3, [1]))}),
]
