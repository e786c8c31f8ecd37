r"""Experiments of the SFedPO chapter (spec ``dynamic.md`` §B.8-B.9).

* :func:`bound_explorer`: Theorem 1 and :math:`\mathcal B` (15) for uniform sampling/averaging, DDS, DDS + SAW and
  the exact QPs, as functions of the buffer size (through the budget :math:`\alpha_n = b/D`), the shift speed
  :math:`\kappa` and the oracle (perfect, stationary, perturbed by :math:`\varepsilon`).
* :func:`compare_methods`: one draw of the synthetic temporal-shift environment
  (:func:`~fedlab.sfedpo.data.make_temporal_shift`), every method trained from the same initial model on
  the same stream (paired comparisons); returns the final accuracy on the global objective (3), the curves, each
  method's Theorem-1 bound and :math:`\mathcal B` at its strategy, and the training mixture it induces.
* :func:`summarize`: mean ± std over seeds and paired differences against a baseline.
* :data:`ABLATIONS`, :func:`ablation_configs` and :func:`ablation_gains`: the one-parameter ablations of the
  paper's Figs. 2-3 (time steps, rounds, buffer size, sampling budget, the DDS and SAW constants) and the number of
  states, as :func:`compare_methods` runs and paired gains.
* :func:`explorer_draws`: the explorer's bounds over several draws of its environment (the spread that the
  spec's reference numbers, from another draw, are judged against).

The paper's published numbers are in :mod:`fedlab.sfedpo.published`, its claims in :mod:`fedlab.sfedpo.claims`.
"""
from __future__ import annotations

import time
from typing import Mapping, Sequence

import numpy as np

from fedlab._rng import numpy_rng
from fedlab._validation import (check_array, check_choice, check_int, check_real, check_sequence, check_simplex,
                                check_type)
from fedlab.sfedpo.algorithms import PRESETS, SFedPO
from fedlab.sfedpo.strategies import (aggregation_weights)
from fedlab.sfedpo.bounds import (heterogeneity_score, sfedpo_B, sfedpo_client_stats, sfedpo_stepsize_ok,
                                  theorem1_terms)
from fedlab.sfedpo.strategies import (strategy)
from fedlab.sfedpo.data import (ORACLES, PredictionOracle, TemporalShiftDataset, availability_probabilities,
                                make_state_distributions, make_state_space, make_temporal_shift, oracle_error,
                                perturb_oracle, round_state_distribution, shift_persistence)
from fedlab.engine import LocalSGD, run
from fedlab.experiments.aggregate import group_by_config
from fedlab.models import MLP, LinearModel, Model

__all__ = [
    "MODELS",
    "make_model",
    "METHOD_LABELS",
    "DEFAULT_METHODS",
    "EXPLORER_STRATEGIES",
    "make_bound_environment",
    "budget_from_buffer",
    "bound_explorer",
    "method_bound",
    "training_mixture",
    "make_environment",
    "compare_methods",
    "mixture_ceiling",
    "summarize",
    "ABLATIONS",
    "ablation_configs",
    "ablation_gains",
    "explorer_draws",
]

#: Display names of the methods of :data:`fedlab.sfedpo.algorithms.PRESETS`.
METHOD_LABELS = {name: method.label for name, method in PRESETS.items()}
DEFAULT_METHODS = ("sfedpo", "sfedpo_dds", "sfedpo_saw", "fedavg_buffer", "fedavg_latest")

#: Strategies of the bound explorer: (sampling rule, aggregation rule).
EXPLORER_STRATEGIES = {
    "uniform": ("uniform", "uniform"),
    "DDS": ("dds", "uniform"),
    "DDS + SAW": ("dds", "saw"),
    "exact QPs": ("exact", "saw_exact"),
}


# ------------------------------------------------------------------------------------ bound explorer

def make_bound_environment(*, n_clients: int = 10, n_states: int = 12, n_classes: int = 5, scenario: str = "full",
                           concentrations: Sequence[float] = (0.05, 0.1, 0.5, 100.0), q_mean: float = 0.2,
                           q_std: float = 0.01, states_per_client: int = 3, seed: int = 0) -> dict:
    r"""The numpy environment of spec §B.9 Part 1: :math:`\Pi` (N, M), :math:`q`, :math:`d` (normalised KL), uniform
    :math:`w`.

    Returns a dict ``pi``, ``q``, ``d``, ``w``, ``class_dist``, ``cluster`` (arrays).
    """
    seed = check_int("seed", seed, low=0)
    check_real("q_mean", q_mean, low=0, high=1, low_open=True)
    check_real("q_std", q_std, low=0)
    space = make_state_space(n_states, n_classes, 2, concentrations=concentrations, rng=numpy_rng(seed, 0))
    pi = make_state_distributions(n_clients, n_states, scenario, cluster=space.cluster,
                                  states_per_client=states_per_client, rng=numpy_rng(seed, 1))
    q = availability_probabilities(n_clients, q_mean, q_std, rng=numpy_rng(seed, 2))
    return {"pi": pi, "q": q, "d": space.discrepancy("kl"), "w": np.full(n_states, 1.0 / n_states),
            "class_dist": space.class_dist, "cluster": space.cluster}


def budget_from_buffer(capacity: int, arrivals: int) -> float:
    r"""Sampling budget :math:`\alpha_n = \min(1, b/D)`: the fraction of a buffer of D samples that b fresh samples per
    step can replace.

    Theorem 1 has no buffer size; a buffer enters it only through :math:`\alpha_n` (and :math:`\sigma^2`).
    """
    capacity = check_int("capacity", capacity, low=1)
    arrivals = check_int("arrivals", arrivals, low=1)
    return min(1.0, arrivals / capacity)


def bound_explorer(env: Mapping, *, alpha_budget: float = 0.5, speed: float = 1.0, oracle: str = "exact",
                   eps: float = 0.0, n_steps: int = 5, n_rounds: int = 100, a1: float = 0.1, b1: float = 0.2,
                   a2: float = 1.0, b2: float = 0.0, variant: str = "eq10", G: float = 1.0, L: float = 1.0,
                   eta: float = 0.01, sigma2: float = 1.0, F1: float = 1.0, lam2: float = 0.0, n_draws: int = 16,
                   strategies: Sequence[str] = tuple(EXPLORER_STRATEGIES), last_term: str = "printed",
                   seed: int = 0) -> dict:
    r"""Theorem 1's bound and :math:`\mathcal B` of each strategy, under a shift speed and an imperfect oracle.

    **Shift speed** [assumption, outside the theorem]. Theorem 1 assumes i.i.d. states (:math:`\kappa = 1`). For a lazy
    chain the states of a round follow :math:`\pi^{(r)}_n = \rho e_{m_0} + (1-\rho)\pi_n`
    (:func:`~fedlab.sfedpo.data.round_state_distribution`); we evaluate (6) with :math:`\pi^{(r)}` in place of
    :math:`\pi` and average over ``n_draws`` draws of the starting states :math:`m_0\sim\pi_n`.
    **Oracle.** Strategies are computed from the forecast: ``"exact"`` = :math:`\pi^{(r)}`, ``"stationary"`` =
    :math:`\pi` (its error :math:`\rho\|e_{m_0}-\pi\|_1` grows as the shift slows), plus the perturbation
    ``eps``; they are evaluated under the truth :math:`\pi^{(r)}` (Theorem 2's convention, with :math:`\alpha_n` =
    :math:`\sum_m\pi^{(r)}_{n,m}\hat\alpha_{n,m}`).

    Parameters
    ----------
    env : dict
        ``pi`` (N, M), ``q`` (N,), ``d`` (M,), ``w`` (M,) (e.g. :func:`make_bound_environment`).
    alpha_budget : float in (0, 1]
    speed : float in [0, 1]
    oracle : {"exact", "stationary"}
    eps : float >= 0
    n_steps, n_rounds : int
        T and R of (6).
    a1, b1, a2, b2, variant, G, L, eta, sigma2, F1, lam2 : the constants (spec §B.9 defaults).
    n_draws : int
        Monte-Carlo draws of the starting states (one when ``speed == 1`` and ``eps == 0``).
    strategies : keys of :data:`EXPLORER_STRATEGIES`
    last_term : {"printed", "corrected"}
    seed : int

    Returns
    -------
    dict: ``strategies``; per strategy ``bound``, ``B`` (means over draws), ``terms`` (mean decomposition of (6)),
    ``Q`` (per-client mean), ``alpha`` (N, M) and ``p`` (N,) of the first draw; ``delta_sum`` (mean
    :math:`\sum\delta_n`), ``stepsize`` (the check of the theorem's condition), ``rho``.
    """
    check_type("env", env, Mapping)
    missing = [k for k in ("pi", "q", "d", "w") if k not in env]
    if missing:
        raise ValueError(f"env lacks {missing}: it needs pi, q, d and w (see make_bound_environment).")
    pi = np.atleast_2d(check_array("env['pi']", env["pi"], nonnegative=True))
    q, d, w = (check_array(f"env[{k!r}]", env[k], ndim=1) for k in ("q", "d", "w"))
    check_real("alpha_budget", alpha_budget, low=0, high=1, low_open=True)
    for name, value in (("a1", a1), ("b1", b1), ("a2", a2), ("b2", b2), ("lam2", lam2)):
        check_real(name, value)
    check_choice("variant", variant, ("eq10", "oracle"))
    check_real("G", G, low=0, low_open=True)
    check_sequence("strategies", strategies, nonempty=True)
    speed = check_real("speed", speed, low=0, high=1)
    oracle = check_choice("oracle", oracle, ("exact", "stationary"))
    eps = check_real("eps", eps, low=0)
    n_draws = check_int("n_draws", n_draws, low=1)
    for name in strategies:
        check_choice("strategies", name, EXPLORER_STRATEGIES)
    rho = shift_persistence(speed, n_steps)
    deterministic = rho == 0 and eps == 0
    draws = 1 if deterministic else n_draws
    rng = numpy_rng(check_int("seed", seed, low=0), 7)
    kw = dict(d=d, w=w, alpha_budget=alpha_budget, G=G, n_steps=n_steps, L=L, eta=eta, sigma2=sigma2, a1=a1,
              b1=b1, a2=a2, b2=b2, variant=variant)
    acc = {name: {"bound": [], "B": [], "terms": [], "Q": []} for name in strategies}
    first: dict = {}
    deltas = []
    for k in range(draws):
        start = np.array([rng.choice(pi.shape[1], p=row) for row in pi])
        truth = round_state_distribution(pi, speed, start, n_steps)
        base = truth if oracle == "exact" else pi
        fc = perturb_oracle(base, eps, rng) if eps > 0 else base
        deltas.append(float(oracle_error(truth, fc).sum()))
        for name in strategies:
            samp, agg = EXPLORER_STRATEGIES[name]
            a, _, _ = strategy(fc, q=q, sampling=samp, aggregation="uniform", **kw)
            # weights from the forecast, as the server computes them
            eff_hat = (fc * a).sum(1)
            s_hat = heterogeneity_score(fc, a, d, w, G=G, n_steps=n_steps, L=L, eta=eta, sigma2=sigma2,
                                        budget=np.clip(eff_hat, 1e-12, 1))
            p = aggregation_weights(agg, q, s_hat, a2=a2, b2=b2, L=L, eta=eta, sigma2=sigma2, lam2=lam2)
            eff = (truth * a).sum(1)
            ok = eff > 0
            a_eval = np.where(ok[:, None], a, 1.0)  # a client that never samples its states: count it as fully fresh
            terms = theorem1_terms(F1, L, eta, n_steps, n_rounds, sigma2, G, d, w, truth, a_eval, p, q,
                                   last_term=last_term)
            stats = sfedpo_client_stats(truth, a_eval, d, w, G=G, n_steps=n_steps)
            acc[name]["bound"].append(terms["bound"])
            acc[name]["B"].append(sfedpo_B(L, eta, sigma2, p, q, L * eta * sigma2 + stats["Q"]))
            acc[name]["terms"].append(terms)
            acc[name]["Q"].append(stats["Q"])
            if k == 0:
                first[name] = (a, p)
    out = {"strategies": list(strategies), "rho": rho, "delta_sum": float(np.mean(deltas)),
           "stepsize": sfedpo_stepsize_ok(L, n_steps, eta, pi.shape[1]), "alpha_budget": float(alpha_budget)}
    for name, vals in acc.items():
        out[name] = {
            "bound": float(np.mean(vals["bound"])), "B": float(np.mean(vals["B"])),
            "terms": {t: float(np.mean([v[t] for v in vals["terms"]])) for t in vals["terms"][0]},
            "Q": np.mean(vals["Q"], axis=0).tolist(), "alpha": first[name][0].tolist(), "p": first[name][1].tolist(),
        }
    return out


# ------------------------------------------------------------------------------------ simulations

#: Models of :func:`compare_methods`: softmax regression from zero (the spec's), or a one-hidden-layer ReLU network.
MODELS = ("linear", "mlp")


def make_model(model: str, dim: int, n_classes: int, *, hidden: int = 32) -> Model:
    r"""The model :func:`compare_methods` trains: ``"linear"`` (``LinearModel``, zero init) or ``"mlp"``
    (``MLP(dim, (hidden,), n_classes)``, random init from the run's seed).

    A softmax regression is well specified on Gaussian classes with a shared covariance, so it can fit the Bayes
    classifier of any state mixture when the states differ only in their class priors; with a per-state feature shift
    it cannot, and the MLP can.

    Parameters
    ----------
    model : {"linear", "mlp"}
    dim, n_classes : int
        Input dimension and number of classes (>= 1, >= 2).
    hidden : int
        Width of the MLP's hidden layer (>= 1).
    """
    check_choice("model", model, MODELS)
    dim = check_int("dim", dim, low=1)
    n_classes = check_int("n_classes", n_classes, low=2)
    hidden = check_int("hidden", hidden, low=1)
    return LinearModel(dim, n_classes, zero_init=True) if model == "linear" else MLP(dim, (hidden,), n_classes)


def method_bound(method: SFedPO, data: TemporalShiftDataset, *, F1: float = 1.0, last_term: str = "printed") -> dict:
    r"""Theorem 1's bound and :math:`\mathcal B` (15) at a method's strategy for the data set's long-run :math:`\pi`.

    The strategy is ``method.strategy(pi)`` with weights over all N clients (the theory's fixed :math:`p_n`);
    :math:`\eta` = the solver's step size, R = the data set's horizon. Returns ``bound``, ``B``, the terms of (6)
    and ``stepsize_ok``. Buffers that are not updated by uniform eviction (``buffer_rule`` other than
    ``"random"``: the mixture update (1) behind the theorem does not hold) get NaN.
    """
    check_type("method", method, SFedPO)
    check_type("data", data, TemporalShiftDataset)
    a, s, p = method.strategy(data.pi, data)
    if method.buffer_rule != "random":
        nan = float("nan")
        return {"bound": nan, "B": nan, "terms": {}, "stepsize_ok": False}
    eta = method.solver.lr
    terms = theorem1_terms(F1, method.L, eta, data.n_steps, data.n_rounds, method.sigma2, method.G, data.d, data.w,
                           data.pi, a, p, data.q, last_term=last_term)
    b = sfedpo_B(method.L, eta, method.sigma2, p, data.q, s)
    ok = sfedpo_stepsize_ok(method.L, data.n_steps, eta, data.n_states)["ok"]
    return {"bound": terms["bound"], "B": b, "terms": terms, "stepsize_ok": ok}


def training_mixture(pi, alpha, p, q) -> np.ndarray:
    r"""The state mixture the global model is trained on in expectation: :math:`\sum_n p_nq_nc_n / \sum_n p_nq_n`.

    :math:`c_{n,m} = \pi_{n,m}\alpha_{n,m}/\sum_{m'}\pi_{n,m'}\alpha_{n,m'}` is the long-run composition of client n's
    buffer under the mixture update (1). Its distance to :math:`w` is the objective inconsistency the
    :math:`t_3` term of (6) measures.
    """
    pi = np.atleast_2d(check_simplex("pi", pi, ndim=(1, 2)))
    alpha = check_array("alpha", alpha, shape=pi.shape, nonnegative=True)
    if np.any(alpha > 1):
        raise ValueError(f"alpha must hold sampling ratios in [0, 1], got maximum {alpha.max():.4g}.")
    p = check_simplex("p", p, shape=(pi.shape[0],))
    q = check_array("q", q, shape=(pi.shape[0],))
    if np.any(q <= 0) or np.any(q > 1):
        raise ValueError(f"q must hold availability probabilities in (0, 1], got {q.tolist()}.")
    mass = (pi * alpha).sum(1, keepdims=True)
    comp = np.divide(pi * alpha, mass, out=np.zeros_like(pi), where=mass > 0)
    weight = p * q
    if weight.sum() <= 0:
        raise ValueError("sum_n p_n q_n must be positive.")
    return weight @ comp / weight.sum()


def make_environment(*, scenario: str = "full", speed: float = 1.0, n_clients: int = 20, n_states: int = 12,
                     n_classes: int = 5, dim: int = 10, n_rounds: int = 60, n_steps: int = 5, capacity: int = 200,
                     sep: float = 1.0, feature_shift: float = 0.0, q_mean: float = 0.3, q_std: float = 0.05,
                     seed: int = 0, **unused) -> TemporalShiftDataset:
    r"""The data set :func:`compare_methods` trains on for the same keyword arguments (others are ignored).

    Spec §B.9 Part 2: 20 clients, 12 states in 4 clusters (Dirichlet 0.05/0.1/0.5/100 over 5 classes), 10-D
    Gaussian classes, :math:`q_n\sim\mathcal N(0.3, 0.05^2)`, buffers of 200, T = 5.
    """
    return make_temporal_shift(n_clients, n_states, n_classes, dim, scenario=scenario, speed=speed,
                               n_rounds=n_rounds, n_steps=n_steps, capacity=capacity, sep=sep,
                               feature_shift=feature_shift, q_mean=q_mean, q_std=q_std, seed=seed)


def compare_methods(*, methods: Sequence[str] = DEFAULT_METHODS, scenario: str = "full", speed: float = 1.0,
                    oracle: str = "exact", eps: float = 0.0, n_clients: int = 20, n_states: int = 12,
                    n_classes: int = 5, dim: int = 10, n_rounds: int = 60, n_steps: int = 5, capacity: int = 200,
                    alpha_budget: float = 0.5, lr: float = 0.1, batch_size: int = 32, sep: float = 1.0,
                    feature_shift: float = 0.0, q_mean: float = 0.3, q_std: float = 0.05, a1: float = 0.1,
                    b1: float = 0.2, a2: float = 1.0, b2: float = 0.0, model: str = "linear", hidden: int = 32,
                    eval_every: int = 5, tail: int = 4, seed: int = 0) -> dict:
    r"""Train several methods on one draw of the temporal-shift environment (paired: same data, same initial model).

    The model is softmax regression (``LinearModel(dim, n_classes)``, zero init) or, with ``model="mlp"``, a
    one-hidden-layer network of width ``hidden`` (:func:`make_model`); the metric is the accuracy on
    the global objective (3) (test samples of every state weighted by :math:`w`), averaged over the last ``tail``
    evaluations (every ``eval_every`` rounds) to smooth the last-iterate noise.

    Returns
    -------
    dict (JSON-serialisable): ``methods``, ``accuracy`` {method: %}, ``rounds`` and ``curves`` {method: %},
    ``bound``/``B`` {method: Theorem 1 / (15) at the method's strategy, NaN for non-uniform eviction},
    ``mixture`` {method: the expected training mixture over states (:func:`training_mixture`)}, ``mixture_l1``
    {method: :math:`\|\text{training mixture} - w\|_1`}, ``buffer_l1`` {method: the same for the pooled final
    buffers}, ``delta_sum`` (oracle error at round 0), ``stepsize_ok``, ``seconds``.
    """
    start_time = time.perf_counter()
    methods = [check_choice("methods", m, PRESETS) for m in methods]
    if not methods:
        raise ValueError("methods must name at least one method.")
    seed = check_int("seed", seed, low=0)
    tail = check_int("tail", tail, low=1)
    oracle_obj = PredictionOracle(check_choice("oracle", oracle, ORACLES), eps=check_real("eps", eps, low=0))
    net = make_model(model, dim, n_classes, hidden=hidden)
    data = make_environment(scenario=scenario, speed=speed, n_clients=n_clients, n_states=n_states,
                            n_classes=n_classes, dim=dim, n_rounds=n_rounds, n_steps=n_steps, capacity=capacity,
                            sep=sep, feature_shift=feature_shift, q_mean=q_mean, q_std=q_std, seed=seed)
    solver = LocalSGD(lr=lr, batch_size=batch_size)
    out = {"methods": methods, "accuracy": {}, "curves": {}, "bound": {}, "B": {}, "mixture": {}, "mixture_l1": {},
           "buffer_l1": {}, "p_spread": {}}
    for name in methods:
        method = PRESETS[name](net, solver, oracle=oracle_obj, alpha_budget=alpha_budget, a1=a1, b1=b1,
                             a2=a2, b2=b2, backend="batched")  # a fixed backend: bitwise-reproducible numbers
        state, history = run(method, data, rounds=n_rounds, seed=seed, eval_every=eval_every, progress=False)
        rounds, curve = history.curve("global_accuracy", "mean")
        out["rounds"] = rounds.tolist()
        out["curves"][name] = (100 * curve).tolist()
        out["accuracy"][name] = float(100 * curve[-tail:].mean())
        mb = method_bound(method, data)
        out["bound"][name], out["B"][name] = mb["bound"], mb["B"]
        out["stepsize_ok"] = mb["stepsize_ok"]
        a, _, p = method.strategy(data.pi, data)
        if method.sampling == "latest" or method.buffer_rule != "random":
            a = np.ones_like(data.pi)  # the buffers follow the state frequencies pi_n
        mix = training_mixture(data.pi, a, p, data.q)
        out["mixture"][name] = mix.tolist()
        out["mixture_l1"][name] = float(np.abs(mix - data.w).sum())
        pooled = state.buffers.composition(data.n_states).mean(0)
        out["buffer_l1"][name] = float(np.abs(pooled - data.w).sum())
        out["p_spread"][name] = float(p.max() / max(p.min(), 1e-12))
    out["delta_sum"] = float(oracle_error(data.round_distribution(0), oracle_obj.predict(data, 0, seed)).sum())
    out["seconds"] = time.perf_counter() - start_time
    return out


def mixture_ceiling(result: Mapping, data: TemporalShiftDataset, *, n_samples: int = 20000, rng=0) -> dict:
    r"""What the training mixture alone costs: accuracy (%) on the global objective of the Bayes classifier of each
    method's training mixture (:meth:`~fedlab.sfedpo.data.StateSpace.mixture_accuracy`), and of :math:`w`
    itself (key ``"w"``, the Bayes accuracy). Same Monte-Carlo samples for all (paired).

    Parameters
    ----------
    result : dict
        A :func:`compare_methods` result (its ``mixture`` entry).
    data : TemporalShiftDataset
        The same environment (:func:`make_environment` with the same arguments).
    """
    n_samples = check_int("n_samples", n_samples, low=1)
    seed = check_int("rng", rng, low=0)
    check_type("result", result, Mapping)
    if not isinstance(result.get("mixture"), Mapping):
        raise ValueError("result must be a compare_methods result (a dict with a 'mixture' entry).")
    check_type("data", data, TemporalShiftDataset)
    out = {"w": 100 * data.space.mixture_accuracy(data.w, n_samples=n_samples, rng=seed)}
    for name, mix in result["mixture"].items():
        mix = np.asarray(mix, dtype=float)
        out[name] = 100 * data.space.mixture_accuracy(mix / mix.sum(), data.w, n_samples=n_samples, rng=seed)
    return out


def summarize(records: Sequence[Mapping], *, baseline: str = "fedavg_buffer", digits: int = 2) -> list[dict]:
    r"""Mean ± std over seeds of :func:`compare_methods` records, grouped by config.

    Returns
    -------
    list of dict, one per config: the config, ``n_seeds``, ``methods``, and per method ``acc``/``bound``/``B``/
    ``mixture_l1``/``buffer_l1`` as ``(mean, std)`` and ``diff`` = paired accuracy difference to ``baseline`` (pp,
    ``(mean, std)``, ``None`` when the baseline was not run), plus ``curves`` {method: (mean list, std list)},
    ``diff_curves`` (the same for the paired differences to the baseline; empty without it), ``baseline`` and
    ``rounds``.
    """
    check_type("baseline", baseline, str)
    digits = check_int("digits", digits, low=0)
    rows = []
    for recs in group_by_config(records):
        res = [r["result"] for r in recs]
        methods = res[0]["methods"]
        row = {**recs[0]["config"], "n_seeds": len(res), "seeds": [r["seed"] for r in recs], "methods": methods,
               "rounds": res[0]["rounds"], "curves": {}, "diff_curves": {}, "baseline": baseline}

        def ms(vals):
            vals = np.asarray(vals, dtype=float)
            if np.all(np.isnan(vals)):
                return (float("nan"), float("nan"))
            return (round(float(np.nanmean(vals)), digits + 2), round(float(np.nanstd(vals)), digits + 2))

        for m in methods:
            row[m] = {key: ms([r[key][m] for r in res]) for key in ("accuracy", "bound", "B", "mixture_l1",
                                                                      "buffer_l1")}
            row[m]["diff"] = ms([r["accuracy"][m] - r["accuracy"][baseline] for r in res]) \
                if baseline in methods else None
            c = np.array([r["curves"][m] for r in res], dtype=float)
            row["curves"][m] = (c.mean(0).round(digits + 2).tolist(), c.std(0).round(digits + 2).tolist())
            if baseline in methods:
                c = c - np.array([r["curves"][baseline] for r in res], dtype=float)
                row["diff_curves"][m] = (c.mean(0).round(digits + 2).tolist(), c.std(0).round(digits + 2).tolist())
        row["delta_sum"] = ms([r["delta_sum"] for r in res])
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------------ ablations (Figs. 2-3)

#: One-parameter ablations: :func:`compare_methods` argument -> (figure, values, method, baselines). The gain of
#: ``method`` over each baseline is measured at every value, everything else at the defaults (partial access in the
#: paper). Figs. 2a-c compare SFedPO with baselines; 2d DDS against uniform sampling (both with SAW, "an ablated
#: version where clients sample data uniformly"); 3a/b DDS (uniform weights) and 3c/d SAW (uniform sampling)
#: against uniform sampling and averaging. ``n_states`` (the number of latent states) is not in the paper's figures.
ABLATIONS = {
    "n_steps": ("Fig. 2a", (2, 5, 8, 10), "sfedpo", ("fedavg_buffer", "fedavg_latest")),
    "n_rounds": ("Fig. 2b", (50, 100, 150, 200), "sfedpo", ("fedavg_buffer", "fedavg_latest")),
    "capacity": ("Fig. 2c", (250, 500, 750, 1000), "sfedpo", ("fedavg_buffer", "fedavg_latest")),
    "alpha_budget": ("Fig. 2d", (0.2, 0.3, 0.4, 0.5, 0.6), "sfedpo", ("sfedpo_saw",)),
    "a1": ("Fig. 3a", (0.05, 0.1, 0.15, 0.2, 0.25), "sfedpo_dds", ("fedavg_buffer",)),
    "b1": ("Fig. 3b", (0.15, 0.2, 0.25, 0.3, 0.35), "sfedpo_dds", ("fedavg_buffer",)),
    "a2": ("Fig. 3c", (0.5, 1.0, 1.5, 2.0), "sfedpo_saw", ("fedavg_buffer",)),
    "b2": ("Fig. 3d", (0.0, 0.25, 0.5, 1.0), "sfedpo_saw", ("fedavg_buffer",)),
    "n_states": ("number of states", (4, 8, 12, 24), "sfedpo", ("fedavg_buffer",)),
}


def ablation_configs(param: str, *, values: Sequence | None = None, scenario: str = "partial", **fixed) -> list[dict]:
    r""":func:`compare_methods` configurations of the ablation of ``param`` (:data:`ABLATIONS`).

    Parameters
    ----------
    param : str
        A key of :data:`ABLATIONS`.
    values : sequence, optional
        The values of ``param`` (default: the paper's grid).
    scenario : {"full", "partial"}
    **fixed
        Other :func:`compare_methods` arguments, the same at every value.

    Returns
    -------
    list of dict
        One keyword dict per value, with ``methods`` = the method and its baselines.
    """
    check_choice("param", param, ABLATIONS)
    _, grid_values, method, baselines = ABLATIONS[param]
    values = grid_values if values is None else check_sequence("values", values, nonempty=True)
    check_choice("scenario", scenario, ("full", "partial"))
    if param in fixed or "methods" in fixed:
        raise ValueError(f"fixed must not set the ablated parameter {param!r} or methods.")
    return [{**fixed, "scenario": scenario, "methods": (method, *baselines), param: v} for v in values]


def ablation_gains(records: Sequence[Mapping], param: str) -> dict:
    r"""Paired gains of an ablation's method over its baselines, per value of ``param``.

    Parameters
    ----------
    records : sequence of dict
        :func:`fedlab.experiments.sweep` records of :func:`compare_methods` on :func:`ablation_configs` ``(param)``.
    param : str
        A key of :data:`ABLATIONS`.

    Returns
    -------
    dict
        ``figure``, ``param``, ``method``, ``values`` (sorted), ``accuracy`` {method or baseline: list of mean
        accuracy (%)}, ``gain`` {baseline: list of (mean, std) over seeds of the paired difference (pp)},
        ``gain_seeds`` {baseline: list, per value, of the paired differences of every seed (pp), in the records'
        order}, ``n_seeds`` (per value, the smallest).
    """
    check_choice("param", param, ABLATIONS)
    check_sequence("records", records, nonempty=True)
    figure, _, method, baselines = ABLATIONS[param]
    by_value: dict = {}
    for r in records:
        if not isinstance(r, Mapping) or "config" not in r or "result" not in r or param not in r["config"]:
            raise ValueError(f"records must be sweep records of compare_methods with {param!r} in their config.")
        by_value.setdefault(r["config"][param], []).append(r["result"]["accuracy"])
    values = sorted(by_value)
    for v in values:
        if any(m not in acc for acc in by_value[v] for m in (method, *baselines)):
            raise ValueError(f"the records at {param} = {v} lack {method!r} or one of {baselines}.")
    stat = lambda xs: (float(np.mean(xs)), float(np.std(xs)))
    mean_acc = lambda m: [float(np.mean([a[m] for a in by_value[v]])) for v in values]
    return {"figure": figure, "param": param, "method": method, "values": values,
            "accuracy": {m: mean_acc(m) for m in (method, *baselines)},
            "gain": {b: [stat([a[method] - a[b] for a in by_value[v]]) for v in values] for b in baselines},
            "gain_seeds": {b: [[float(a[method] - a[b]) for a in by_value[v]] for v in values] for b in baselines},
            "n_seeds": min(len(by_value[v]) for v in values)}


# ------------------------------------------------------------------------------------ the explorer over draws

def explorer_draws(seeds: Sequence[int], *, scenario: str = "full", strategies: Sequence[str] = ("uniform",
                   "DDS + SAW"), **options) -> dict:
    r"""Theorem 1's bound of each strategy on several draws of the explorer's environment: one
    :func:`make_bound_environment` and one :func:`bound_explorer` per seed (both with that seed).

    Parameters
    ----------
    seeds : sequence of int
        One draw per seed (at least one).
    scenario : {"full", "partial"}
    strategies : keys of :data:`EXPLORER_STRATEGIES`
    **options
        Other :func:`bound_explorer` arguments (e.g. ``n_draws``), the same for every draw.

    Returns
    -------
    dict
        ``seeds`` and, per strategy, the list of bounds (one per seed).

    >>> draws = explorer_draws([0, 1], n_draws=1)
    >>> [len(draws[k]) for k in ("seeds", "uniform", "DDS + SAW")]
    [2, 2, 2]
    """
    seeds = [check_int("seeds", s, low=0) for s in check_sequence("seeds", seeds, nonempty=True)]
    check_choice("scenario", scenario, ("full", "partial"))
    strategies = [check_choice("strategies", s, EXPLORER_STRATEGIES)
                  for s in check_sequence("strategies", strategies, nonempty=True)]
    if "seed" in options or "env" in options:
        raise ValueError("options must not set seed or env: explorer_draws draws one environment per seed.")
    runs = [bound_explorer(make_bound_environment(scenario=scenario, seed=s), seed=s, strategies=strategies,
                           **options) for s in seeds]
    return {"seeds": seeds, **{k: [float(r[k]["bound"]) for r in runs] for k in strategies}}
