"""Robustness cases of the availability chapter (notebook 02): chains, bounds, CA-Fed and the baselines, plots."""
from __future__ import annotations

import functools

import numpy as np

import world as w
from harness import BAD_TEXT, NAN, Arr, Case, Choice, Int, Kind, Obj, Real, Rng, fresh

AX = Kind(None, extra=(BAD_TEXT, 3))
M = "fedlab.availability"
ALPHA = np.full(4, 0.25)
PI = np.array([0.9, 0.5, 0.2, 0.7])
LAM = np.array([0.1, 0.3, 0.5, 0.0])
GAP = np.array([0.1, 0.2, 0.3, 0.05])
Q = np.array([0.3, 0.2, 0.1, 0.4])
TRACE = np.array([[1, 0, 1, 1], [1, 1, 0, 1], [0, 1, 1, 1]], dtype=bool)


def alpha_kind(**kw):
    return Arr(ALPHA, simplex=True, ndim=1, link=True, **kw)


def pi_kind(ndim=1, **kw):
    return Arr(PI, prob=True, ndim=ndim, link=True, **kw)


def lam_kind(ndim=1, **kw):
    return Arr(LAM, ndim=ndim, link=True, extra=(np.array([1.5, 0, 0, 0]), np.array([-1.5, 0, 0, 0])), **kw)


def trace_kind(**kw):
    return Arr(TRACE, finite=False, extra=(TRACE.astype(float) * 0.5, np.zeros((0, 4), bool), TRACE[0]), **kw)


@functools.cache
def population():
    from fedlab.availability.data import make_population

    return make_population(4, rng=0)


@functools.cache
def bounds():
    from fedlab.availability.bounds import subset_bounds

    return subset_bounds(ALPHA, PI, LAM, T=20)


@functools.cache
def availability_history():
    """The History of three Unbiased rounds on the world's data, following TRACE."""
    from fedlab.availability.algorithms.baselines import Unbiased
    from fedlab.engine import run

    return run(Unbiased(w.model(), w.solver(), participation=TRACE, pi=PI), w.fed(), rounds=3)[1]


STEP_RECORDS = [{"config": {"method": "unbiased", "lr": 0.1, "server_lr": 1.0}, "seed": 0,
                 "result": {"final_accuracy": 0.5}}]
SWEEP_RECORDS = [{"config": {"method": "unbiased", "heterogeneity": 0.5}, "seed": 0, "result": {"final_accuracy": 0.5}}]


@functools.cache
def _claim_results():
    """The hand-made results under which the paper's statements hold (tests/availability/test_claims.py)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "availability" / "test_claims.py"
    spec = importlib.util.spec_from_file_location("availability_claims_results", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.results(True)


def claim_results():
    return dict(_claim_results())


@functools.cache
def _cafed_result():
    from fedlab.availability.experiments import run_availability

    return run_availability(dataset="digits", method="cafed", layout="spatial", n_clients=10, rounds=2, eval_every=2)


def cafed_result():
    return dict(_cafed_result())


def _algorithm_args(**extra):
    return {"model": Obj(w.model()), "solver": Obj(w.solver(), extra=(w.model(),)),
            "participation": Kind(TRACE, extra=(BAD_TEXT, TRACE.astype(float) * 0.5, 3)),
            "pi": Arr(PI, prob=True, ndim=1, optional=True, extra=(np.array([0.0, 0.5, 0.2, 0.7]),)),
            "lam": Arr(LAM, ndim=1, optional=True, also=("pi",)),
            "alpha": Kind("size", extra=(BAD_TEXT, [0.5, 0.6])),
            "server_lr": Real(1.0, low=0, low_open=True), "estimator": Choice("oracle"),
            "prior_trace": Arr(None, optional=True, finite=False, extra=(np.full((2, 4), 0.5),)),
            "prior": Kind((1.0, 1.0), extra=((-1.0, 1.0), (1.0,), BAD_TEXT, (NAN, 1.0))),
            "backend": Choice("batched"), "server_momentum": Real(0.0, low=0, high=1, high_open=True),
            "server_weight_decay": Real(0.0, low=0), **extra}


def concrete_availability_algorithm(*args, **kwargs):
    """The abstract base class's constructor, through a subclass that only adds the weights."""
    from fedlab.availability.algorithms.baselines import AvailabilityAlgorithm

    class Probe(AvailabilityAlgorithm):
        def weights(self, state, data, mask, pi_hat, lam_hat):
            return np.where(mask, 1.0, 0.0), {}, {}

    return Probe(*args, **kwargs)


CASES = [
    # ---------------------------------------------------------------- bounds
    Case(f"{M}.bounds.biased_importance", {"pi": pi_kind(also=("q",)), "q": Arr(Q, nonneg=True, link=True,
                                                                                 also=("pi",))}),
    Case(f"{M}.bounds.unbiased_weights", {"alpha": alpha_kind(also=("pi",)), "pi": pi_kind(also=("alpha",))}),
    Case(f"{M}.bounds.chi2_divergence", {"alpha": alpha_kind(also=("p",)), "p": Arr(Q, simplex=True, link=True,
                                                                                     also=("alpha",))}),
    Case(f"{M}.bounds.tv_distance", {"alpha": alpha_kind(also=("p",)), "p": Arr(Q, simplex=True, link=True,
                                                                                 also=("alpha",))}),
    *[Case(f"{M}.bounds.{name}", {"alpha": alpha_kind(also=("pi", "q")), "pi": pi_kind(also=("alpha", "q")),
                                  "q": Arr(Q, nonneg=True, link=True, also=("alpha", "pi")), **extra})
      for name, extra in [("eps_bias", {}), ("eps_bias_tv", {}),
                          ("bias_bound", {"kappa2": Real(1.0, low=0), "gamma": Real(1.0, low=0)}),
                          ("bias_bound_tv", {"kappa2": Real(1.0, low=0), "gamma_prime": Real(1.0, low=0)})]],
    Case(f"{M}.bounds.total_error_bound", {"eps_opt_value": Arr(1.0, nonneg=True, nonempty=False),
                                           "eps_bias_value": Arr(0.5, nonneg=True, nonempty=False,
                                                                 finite=False),
                                           "kappa2": Real(1.0, low=0)}),
    Case(f"{M}.bounds.heterogeneity", {"f_at": Arr(np.array([1.0, 2.0]), link=True, also=("f_star",)),
                                       "f_star": Arr(np.array([0.5, 1.0]), link=True, also=("f_at",))}),
    Case(f"{M}.bounds.ergodicity_constants", {"P": Arr(w.stochastic(2), stochastic=True)}),
    Case(f"{M}.bounds.correlation_horizon", {"t": Arr(np.array([1, 5, 10]), integer=True, positive=True),
                                             "c_p": Real(1.0, low=0, low_open=True),
                                             "h": Real(1.0, low=0, low_open=True),
                                             "mixing": Real(0.5, low=0, high=1, low_open=True, high_open=True),
                                             "t_p": Int(0, low=0)}),
    Case(f"{M}.bounds.max_step_size", {"L": Real(1.0, low=0, low_open=True), "E": Int(5, low=1),
                                       "Q": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.bounds.bound_constants", {"Q": Real(1.0, low=0, low_open=True), "M": Real(4.0, low=0, low_open=True),
                                         "mixing": Real(0.5, low=0, high=1, low_open=True, high_open=True),
                                         "t_max": Int(100, low=1)}),
    Case(f"{M}.bounds.eps_opt", {"q": Arr(Q, nonneg=True, link=True, also=("pi",)), "pi": pi_kind(also=("q",)),
                                 "sigma2": Arr(1.0, nonneg=True, nonempty=False),
                                 "mixing": Real(0.5, low=0, high=1, low_open=True, high_open=True),
                                 "T": Int(None, low=1, optional=True), "t_max": Int(100, low=1)}, edge=("T", "t_max")),
    Case(f"{M}.bounds.eps_opt_quadratic", {"q": Arr(Q, nonneg=True, link=True, also=("pi",)),
                                           "pi": pi_kind(also=("q", "A")), "A": Arr(1.0, nonneg=True,
                                                                                  nonempty=False),
                                           "B": Real(1.0, low=0), "C": Real(0.0)}),
    Case(f"{M}.bounds.opt_quadratic_terms", {"pi": Arr(PI, prob=True, ndim=1),
                                             "sigma2": Arr(1.0, nonneg=True, nonempty=False),
                                             "Q": Real(1.0, low=0, low_open=True),
                                             "mixing": Real(0.5, low=0, high=1, low_open=True, high_open=True),
                                             "t_max": Int(100, low=1)}),
    *[Case(f"{M}.bounds.{name}", {"pi": pi_kind(also=("A",)), "A": Arr(np.ones(4), nonneg=True, link=True,
                                                                       also=("pi",)),
                                  "B": Real(1.0, low=0), "Q": Real(1.0, low=0, low_open=True)})
      for name in ("minimize_eps_opt", "minimize_eps_opt_cvxpy")],
    Case(f"{M}.bounds.total_error_objective", {
        "q": Arr(Q, nonneg=True, link=True, also=("pi", "alpha")), "alpha": alpha_kind(also=("pi", "q")),
        "pi": pi_kind(also=("alpha", "q")), "A": Arr(np.ones(4), nonneg=True, link=True, also=("pi",)),
        "B": Real(1.0, low=0), "C": Real(0.0), "kappa2": Real(1.0, low=0), "gamma": Real(1.0, low=0)},
         edge=("B", "kappa2", "gamma")),
    Case(f"{M}.bounds.minimize_total_error_cvxpy", {
        "alpha": alpha_kind(also=("pi",)), "pi": pi_kind(also=("alpha", "A")),
        "A": Arr(np.ones(4), nonneg=True, link=True, also=("pi",)), "B": Real(1.0, low=0), "C": Real(0.0),
        "kappa2": Real(1.0, low=0), "gamma": Real(1.0, low=0), "Q": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.bounds.subset_bounds", {"alpha": alpha_kind(also=("pi", "lam")), "pi": pi_kind(also=("alpha", "lam")),
                                       "lam": lam_kind(also=("alpha", "pi")),
                                       "sigma2": Arr(1.0, nonneg=True, nonempty=False),
                                       "gamma_prime": Real(1.0, low=0), "T": Int(20, low=1),
                                       "Q": Real(1.0, low=0, low_open=True)}),
    Case(f"{M}.bounds.best_subset", {"bounds": Obj(fresh(bounds), extra=({},)), "kappa2": Real(1.0, low=0)}),
    # ---------------------------------------------------------------- data
    Case(f"{M}.data.two_state_matrix", {"pi": pi_kind(None, also=("lam",)), "lam": lam_kind(None, also=("pi",))}),
    Case(f"{M}.data.lambda_bounds", {"pi": Arr(PI, prob=True, nonempty=False)}),
    *[Case(f"{M}.data.{name}", {"P": Arr(w.stochastic(2), stochastic=True)})
      for name in ("second_eigenvalue_modulus", "mixing_parameter")],
    Case(f"{M}.data.product_chain", {"matrices": Obj([w.stochastic(2), w.stochastic(2)],
                                                     extra=([], [np.ones((2, 2))], [BAD_TEXT]))}),
    *[Case(f"{M}.data.{name}", {"pi": pi_kind(None, also=("lam",)), "lam": lam_kind(None, also=("pi",))})
      for name in ("mean_sojourn_times", "hitting_time")],
    Case(f"{M}.data.simulate_availability", {"pi": pi_kind(also=("lam", "P")), "lam": lam_kind(also=("pi", "P")),
                                             "rounds": Int(3, low=0), "rng": Rng(0),
                                             "clusters": Arr(None, optional=True, extra=(np.array([0, 0, 9, 1]),)),
                                             "initial": Arr(None, optional=True, finite=False,
                                                            extra=(np.full(4, 0.5),))}, edge=("rounds",)),
    Case(f"{M}.data.MarkovAvailability", {"pi": pi_kind(also=("lam",)), "lam": lam_kind(also=("pi",)),
                                          "clusters": Arr(None, optional=True, extra=(np.array([0, 9]),)),
                                          "group": Arr(None, optional=True, extra=(np.array([0, 1]),
                                                                                   np.array([0.5, 0, 0, 0]))),
                                          "group_names": Kind((), extra=(3,))}),
    Case(f"{M}.data.make_population", {"n_clients": Int(4, low=3),
                                       "g": Real(0.4, low=0, high=0.5, low_open=True, high_open=True),
                                       "nu": Real(0.9, low=0, high=1, high_open=True), "eps": Real(0.01, low=0),
                                       "layout": Choice("code3"), "rng": Rng(0)}, edge=("n_clients", "nu", "eps")),
    Case(f"{M}.data.make_clustered_population", {"clients_per_cluster": Int(2, low=1),
                                                 "pi": Arr(np.array([0.5, 0.2]), prob=True, link=True,
                                                           also=("lam",)),
                                                 "lam": Arr(np.array([0.1, 0.3]), link=True, also=("pi",),
                                                            extra=(np.array([1.5, 0.0]),))}),
    Case(f"{M}.data.AvailabilityEstimator", {
        "t": Int(3, low=0), "active": Arr(np.array([2, 1, 3]), nonneg=True, integer=True, also=("transitions",)),
        "transitions": Arr(np.zeros((3, 2, 2), int), nonneg=True, integer=True, also=("active",)),
        "last": Arr(None, optional=True, finite=False, extra=(np.ones(2, bool),)),
        "prior": Kind((1.0, 1.0), extra=((-1.0, 1.0), (1.0,), BAD_TEXT)),
        "row_prior": Kind(((1.0, 1.0), (1.0, 1.0)), extra=(((-1.0, 1.0), (1.0, 1.0)), BAD_TEXT))}),
    Case(f"{M}.data.estimate_availability", {"trace": Arr(TRACE, finite=False, nonempty=False,
                                                          extra=(TRACE.astype(float) * 0.5, TRACE[0])),
                                             "prior": Kind((1.0, 1.0), extra=((-1.0, 1.0), (1.0,), BAD_TEXT)),
                                             "row_prior": Kind(((1.0, 1.0), (1.0, 1.0)),
                                                               extra=(((-1.0, 1.0), (1.0, 1.0)), BAD_TEXT))}),
    Case(f"{M}.data.trace_participation", {"trace": trace_kind()}),
    # ---------------------------------------------------------------- algorithms
    Case(f"{M}.algorithms.baselines.AvailabilityAlgorithm", _algorithm_args(), fn=concrete_availability_algorithm),
    Case(f"{M}.algorithms.baselines.Unbiased", _algorithm_args()),
    Case(f"{M}.algorithms.baselines.AdaFed", _algorithm_args()),
    Case(f"{M}.algorithms.baselines.MoreAvailable", _algorithm_args(threshold=Real(0.5, low=0, high=1)),
         edge=("threshold",)),
    Case(f"{M}.algorithms.baselines.LessCorrelated", _algorithm_args(threshold=Real(0.5, low=0, high=1))),
    Case(f"{M}.algorithms.baselines.F3AST", _algorithm_args(k=Int(None, low=1, optional=True),
                                                            smoothing=Real(1e-3, low=0, high=1, high_open=True)),
         edge=("k", "smoothing")),
    Case(f"{M}.algorithms.cafed.CAFed", _algorithm_args(kappa2=Real(1.0, low=0), tau=Real(0.0, low=0),
                                                        beta=Real(1.0, low=0, high=1, low_open=True),
                                                        fstar=Choice("running_min"),
                                                        f_star=Arr(None, optional=True)), edge=("kappa2",)),
    Case(f"{M}.algorithms.cafed.cafed_proxy", {"q": Arr(Q, nonneg=True, link=True, also=("alpha", "pi")),
                                               "alpha": alpha_kind(also=("pi", "q", "gap")),
                                               "pi": pi_kind(also=("alpha", "q", "gap")),
                                               "gap": Arr(GAP, nonneg=True, link=True, also=("alpha", "pi")),
                                               "kappa2": Real(1.0, low=0),
                                               "gamma_prime": Real(None, low=0, optional=True)}),
    Case(f"{M}.algorithms.cafed.cafed_weights", {"alpha": alpha_kind(also=("pi", "lam", "gap")),
                                                 "pi": pi_kind(also=("alpha", "lam", "gap")),
                                                 "lam": lam_kind(also=("alpha", "pi", "gap")),
                                                 "gap": Arr(GAP, nonneg=True, link=True, also=("alpha", "pi")),
                                                 "kappa2": Real(1.0, low=0), "tau": Real(0.0, low=0),
                                                 "gamma_prime": Real(None, low=0, optional=True)},
         edge=("kappa2", "gamma_prime")),
    Case(f"{M}.algorithms.cafed.cafed_tradeoff", {"alpha": alpha_kind(also=("pi", "lam", "gap")),
                                                  "pi": pi_kind(also=("alpha", "lam", "gap")),
                                                  "lam": lam_kind(also=("alpha", "pi", "gap")),
                                                  "gap": Arr(GAP, nonneg=True, link=True, also=("alpha", "pi")),
                                                  "kappa2_grid": Arr([0.5, 1.0], nonneg=True)}),
    Case(f"{M}.algorithms.cafed.client_losses", {"model": Obj(w.model(), extra=(w.solver(),), also=("data",)),
                                                 "params": Obj(fresh(w.single_params), extra=({}, w.params())),
                                                 "data": Obj(fresh(w.clients), extra=(w.fed(),), also=("model",)),
                                                 "clients": Arr(np.array([0, 2]), integer=True, nonneg=True,
                                                                extra=(np.array([0, 9]),)),
                                                 "weight_decay": Real(0.0, low=0)}),
    # ---------------------------------------------------------------- experiments
    Case(f"{M}.data.leaf_federation", {"n_clients": Int(4, low=1), "seed": Int(0, low=0),
                                              "gamma": Real(0.5, low=0), "delta": Real(0.5, low=0),
                                              "max_samples": Int(50, low=1)},
         edge=("n_clients", "gamma", "delta", "max_samples")),
    Case(f"{M}.data.digits_federation", {"n_clients": Int(4, low=1), "seed": Int(0, low=0),
                                                "dirichlet": Real(0.5, low=0, low_open=True),
                                                "split": Choice("client"), "n_clusters": Int(10, low=1)},
         edge=("n_clients", "n_clusters")),
    Case(f"{M}.experiments.availability_setup", {"dataset": Choice("leaf"), "n_clients": Int(4, low=3),
                                                 "rounds": Int(3, low=1), "seed": Int(0, low=0),
                                                 "layout": Choice("code3"),
                                                 "g": Real(0.4, low=0, high=0.5, low_open=True, high_open=True),
                                                 "nu": Real(0.9, low=0, high=1, high_open=True),
                                                 "eps": Real(0.01, low=0),
                                                 "t_prior": Int(0, low=0),
                                                 "heterogeneity": Real(0.5, low=0)},
         edge=("n_clients", "rounds", "eps", "heterogeneity")),
    Case(f"{M}.experiments.method_label", {"config": Obj({"method": "cafed", "kappa2": 1.0},
                                                         extra=({"method": BAD_TEXT},))}),
    Case(f"{M}.experiments.comparison_configs", {"dataset": Choice("leaf"),
                                                 "kappa2_grid": Kind((1.0,), extra=((NAN,), (-1.0,), 3)),
                                                 "baselines": Kind(("unbiased",), extra=((BAD_TEXT,), BAD_TEXT)),
                                                 "no_correlation": Kind(True, extra=(BAD_TEXT,))}),
    Case(f"{M}.experiments.by_label", {"records": Obj([{"config": {"method": "cafed", "kappa2": 1.0}, "seed": 0,
                                                        "result": {"a": 1.0}}], extra=([3], [{"seed": 0}]))}),
    Case(f"{M}.experiments.seed_stats", {"runs": Obj({0: {"a": 1.0}, 1: {"a": 2.0}}, extra=({}, [1])),
                                         "metric": Choice("a"),
                                         "other": Obj(None, optional=True, extra=({5: {"a": 1.0}},))}),
    Case(f"{M}.experiments.run_availability", {"dataset": Choice("leaf"), "method": Choice("cafed"),
                                               "rounds": Int(2, low=1), "n_clients": Int(4, low=3),
                                               "lr": Real(None, low=0, low_open=True, optional=True)},
         edge=("n_clients", "rounds")),
    Case(f"{M}.experiments.summarize_run", {"history": Obj(fresh(availability_history), extra=({}, w.history())),
                                            "population": Obj(fresh(population), extra=(PI,), also=("alpha",)),
                                            "alpha": Arr(ALPHA, simplex=True),
                                            "at": Int(1, low=0)}),
    Case(f"{M}.experiments.seed_values", {"runs": Obj({0: {"a": 1.0}, 1: {"a": 2.0}}, extra=({}, [1])),
                                          "metric": Choice("a"),
                                          "other": Obj(None, optional=True, extra=({5: {"a": 1.0}},))}),
    Case(f"{M}.experiments.format_spread", {"values": Kind([0.1, 0.2], extra=([], [NAN], BAD_TEXT)),
                                            "scale": Real(1.0), "fmt": Kind("{:.3f}", extra=(3,))}),
    Case(f"{M}.experiments.step_size_configs", {"dataset": Choice("leaf"),
                                                "methods": Kind(("unbiased",), extra=((BAD_TEXT,), BAD_TEXT)),
                                                "lrs": Kind((0.1,), extra=((), (-1.0,), (NAN,), BAD_TEXT)),
                                                "server_lrs": Kind((1.0,), extra=((), (0.0,), BAD_TEXT))}),
    Case(f"{M}.experiments.tune_step_sizes", {"records": Obj(STEP_RECORDS, extra=([3], [{"seed": 0}], BAD_TEXT)),
                                              "metric": Kind("final_accuracy", extra=("nope_metric", 3))}),
    Case(f"{M}.experiments.curves_by", {"records": Obj(SWEEP_RECORDS, extra=([3], BAD_TEXT)),
                                        "key": Kind("heterogeneity", extra=("nope_key", 3)),
                                        "metric": Kind("final_accuracy", extra=("nope_metric", 3))}),
    Case(f"{M}.data.spatial_population", {"n_clients": Int(20, low=10, extra=(25,))}),
    Case(f"{M}.experiments.exclusion_when_available", {"result": Obj(fresh(cafed_result),
                                                                     extra=({"availability": []}, BAD_TEXT))}),
    Case(f"{M}.experiments.estimator_errors", {"priors": Kind([1], extra=([-1], [1.5], BAD_TEXT, [])),
                                               "n_clients": Int(4, low=3), "layout": Choice("code3"),
                                               "seeds": Kind((0,), extra=((-1,), (), (1.5,)))}),
    # ---------------------------------------------------------------- claims
    Case(f"{M}.claims.chapter_claims", {"results": Obj(fresh(claim_results), extra=({}, [1])),
                                        "scale": Choice("smoke")}),
    Case(f"{M}.claims.paper_claims", {"results": Kind(None, extra=(BAD_TEXT, 3, [1]))}),
    # ---------------------------------------------------------------- plots
    Case(f"{M}.plots.plot_availability_raster", {"trace": trace_kind(),
                                                 "group": Arr(None, optional=True, extra=(np.array([0, 1]),)),
                                                 "group_names": Kind((), extra=(3,)),
                                                 "excluded": Kind(None, extra=([9], BAD_TEXT)), "ax": AX}),
    Case(f"{M}.plots.plot_step_size_grid", {"tuned": Obj({"Unbiased": {"lrs": [0.1], "server_lrs": [1.0], "grid": [[0.5]],
                                                                     "best": (0.1, 1.0)}},
                                                        extra=({}, {"Unbiased": {"lrs": [0.1]}},
                                                               {"Unbiased": {"lrs": [0.1], "server_lrs": [1.0],
                                                                             "grid": [[0.5, 0.6]], "best": (0.1, 1.0)}})),
                                             "axes": Kind(None, extra=(BAD_TEXT, 3))}),
    Case(f"{M}.plots.plot_chain_memory", {"pi": Real(0.5, low=0, high=1),
                                          "lams": Arr(np.array([0.2]), extra=(np.array([1.5]),)),
                                          "lags": Int(5, low=1), "trace": Arr(None, optional=True, finite=False),
                                          "trace_lambda": Real(None, optional=True, low=-1, high=1), "ax": AX}),
    Case(f"{M}.plots.plot_tradeoff", {"kappa2": Arr([0.5, 1.0], nonneg=True, link=True,
                                                    also=("opt", "bias", "n_excluded")),
                                      "opt": Arr([1.0, 0.5], link=True, also=("kappa2",)),
                                      "bias": Arr([0.1, 0.2], nonneg=True, link=True, also=("kappa2",)),
                                      "n_excluded": Arr([0, 1], nonneg=True, integer=True, link=True,
                                                        also=("kappa2",)),
                                      "current": Real(None, optional=True, low=0),
                                      "axes": Kind(None, extra=(BAD_TEXT, 3))}),
    Case(f"{M}.plots.plot_client_weights", {"q": Arr(Q, nonneg=True, link=True, also=("p", "alpha")),
                                            "p": Arr(Q, nonneg=True, link=True, also=("q", "alpha")),
                                            "alpha": Arr(ALPHA, nonneg=True, link=True, also=("q", "p")),
                                            "excluded": Kind((), extra=([9], BAD_TEXT)),
                                            "group": Arr(None, optional=True, extra=(np.array([0, 1]),)),
                                            "ax": AX}),
    Case(f"{M}.plots.plot_group_weights", {"weights": Obj({"m": {"g": 0.5, "h": (0.4, 0.1)}},
                                                          extra=({}, {"m": {"g": NAN}}, {"m": {"g": (1, 2, 3)}},
                                                                 {"m": [0.5]})), "ax": AX}),
    Case(f"{M}.plots.plot_minimizer_path", {"B": Arr([0.1, 1.0], nonneg=True, link=True, also=("q_star",)),
                                            "q_star": Arr(np.full((2, 4), 0.25), nonneg=True, link=True,
                                                          also=("B", "pi")),
                                            "pi": pi_kind(also=("q_star",)),
                                            "b0": Real(None, optional=True, low=0), "ax": AX}),
]


def REAL_SETTING():
    """The MNIST setting shrunk to the robustness files."""
    from fedlab.availability.real_data import SETTINGS

    return w.tiny(SETTINGS["mnist"], clients=6)


def REAL_SETTING_DICT():
    import dataclasses

    return dataclasses.asdict(REAL_SETTING())


CASES += [
    # ---------------------------------------------------------------- paper mode (fedlab.availability.real_data)
    Case(f"{M}.real_data.availability_paper_run", {"setting": Obj(REAL_SETTING_DICT(), extra=("mnist", [1])),
                                                   "method": Choice("cafed"), "seed": Int(0, low=0)},
         skip=("device",)),
    Case(f"{M}.real_data.run_paper", {"seeds": Int(None, low=1, optional=True),
                                      "datasets": Kind(("mnist",), extra=((), ("femnist",), 3)),
                                      "settings": Kind(fresh(lambda: {"mnist": REAL_SETTING()}), extra=(BAD_TEXT, 3))},
         skip=("device", "store")),
    Case(f"{M}.real_data.expected_seconds", {"n_clients": Int(None, low=4, optional=True),
                                             "settings": Kind(fresh(lambda: {"mnist": REAL_SETTING()}),
                                                              extra=(BAD_TEXT, 3))}, skip=("device",),
         edge=("n_clients",)),
]
