"""Experiment functions of notebook 09 (streaming FL with Markovian data, Huynh et al.); module level for ``sweep``.

:func:`markov_experiment` runs Minibatch SGD, Local SGD and Local SGD-M (:mod:`fedlab.markovian.algorithms`,
engine runs on vectorised numpy data) on the paper's regression (§5) for a grid of client mixing times and stream
modes, with ``n_replicas`` independent problems and streams per seed, all rows in one run per algorithm, and returns
JSON-serialisable curves and floors.
"""
from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from fedlab._rng import numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_sequence, check_type
from fedlab.markovian.algorithms import average, floor, replica_curves, run_streaming_fl
from fedlab.markovian.bounds import local_sgd_bound, local_sgdm_bound, minibatch_bound, two_state_mixing_time
from fedlab.markovian.data import (STARTS, STREAM_MODES, flip_prob_from_mixing_time, make_markov_regression,
                                   two_state_streams)
from fedlab.tables import loglog_slope

__all__ = ["markov_experiment", "markov_problems", "explicit_bounds", "batch_dependence_ratio", "replica_ratios",
           "final_values", "seed_end_values", "replica_exponents"]


def markov_problems(seed: int, n_clients: int, n_replicas: int, *, dim: int = 10, reg_lambda: float = 0.01,
                    optima: str = "per_client") -> list:
    """The ``n_replicas`` regression problems of a seed (replica r uses ``numpy_rng(seed, 0, r)``)."""
    check_int("seed", seed, low=0)
    return [make_markov_regression(n_clients, dim=dim, reg_lambda=reg_lambda, optima=optima,
                                   rng=numpy_rng(seed, 0, r)) for r in range(check_int("n_replicas", n_replicas, low=1))]


def markov_experiment(*, n_clients: int = 10, n_local: int = 50, n_rounds: int = 500, mixing_times=(100.0,),
                      mapping: str = "inverse", modes=("markov", "iid"), start: str = "state0",
                      algorithms=("minibatch", "local", "local_momentum"), lr_global: float = 0.01,
                      lr_local: float = 0.001, momentum_beta: float = 0.1, reg_lambda: float = 0.01, dim: int = 10,
                      n_replicas: int = 3, init: str = "zeros", tail: float = 0.8, every: int = 5,
                      seed: int = 0) -> dict:
    r"""Gradient-norm curves and floors of the three algorithms for each (mixing time, stream mode).

    Parameters
    ----------
    n_clients, n_local, n_rounds : int
        M, K (samples = local steps per round), T.
    mixing_times : sequence of float >= 1
        Client mixing times :math:`\tau_m`, mapped to flip probabilities by ``mapping``
        (:func:`fedlab.markovian.data.flip_prob_from_mixing_time`; ``"inverse"``: p = 1/τ_m).
    modes : subset of ``STREAM_MODES``
        ``"markov"`` (dependent batches), ``"independent"`` (restart from π every round), ``"iid"`` (same marginals).
    start : {"state0", "stationary"}
    lr_global, lr_local, momentum_beta : float
        γ, η, β (paper: 0.01, 0.001, 0.1).
    init : {"zeros", "optimum"}
        :math:`w_0 = 0` (the paper's setting: transient + noise) or the minimiser of F (only the stationary
        noise floor remains, the regime where the :math:`\tau\sigma^2/(MK)` term of the bounds is measured).
    tail : float in (0, 1]
        Floors are means of :math:`\|\nabla F(w_t)\|^2` over the last ``tail`` fraction of rounds.
    every : int
        Curves are kept every ``every`` rounds.

    Returns
    -------
    dict with ``rounds``, ``keys`` (``"tau|mode"`` labels), ``flip_prob`` and ``exact_mixing_time`` per τ_m, and
    per algorithm ``curves[alg][key]`` (replica mean), ``floor[alg][key]`` and ``average[alg][key]``
    (per replica; ``average`` = :math:`\frac1T\sum_{t<T}\|\nabla F(w_t)\|^2`).
    """
    m = check_int("n_clients", n_clients, low=1)
    k = check_int("n_local", n_local, low=1)
    t = check_int("n_rounds", n_rounds, low=1)
    r = check_int("n_replicas", n_replicas, low=1)
    every = check_int("every", every, low=1)
    tail = check_real("tail", tail, low=0, high=1, low_open=True)
    check_choice("start", start, STARTS)
    check_choice("init", init, ("zeros", "optimum"))
    modes = list(check_sequence("modes", modes, nonempty=True))
    for mode in modes:
        check_choice("modes", mode, STREAM_MODES)
    check_real("lr_global", lr_global, low=0, low_open=True)
    check_real("lr_local", lr_local, low=0, low_open=True)
    check_real("momentum_beta", momentum_beta, low=0, high=1, low_open=True)
    taus = check_array("mixing_times", mixing_times, ndim=1)
    if taus.size == 0 or np.any(taus < 1):
        raise ValueError(f"mixing_times must be a non-empty list of mixing times >= 1, got {taus.tolist()}.")
    flips = np.atleast_1d(flip_prob_from_mixing_time(taus, mapping))
    problems = markov_problems(seed, m, r, dim=dim, reg_lambda=reg_lambda)
    w0 = np.stack([p.minimizer() for p in problems]) if init == "optimum" else np.zeros((r, dim))
    rows_problem, rows_states, rows_w0, keys = [], [], [], []
    for i_tau, p in enumerate(flips):
        for i_mode, mode in enumerate(modes):
            keys.append(f"{taus[i_tau]:g}|{mode}")
            for rep in range(r):
                rows_problem.append(problems[rep])
                rows_w0.append(w0[rep])
                rows_states.append(two_state_streams(p, n_clients=m, n_rounds=t, n_local=k, mode=mode, start=start,
                                                     rng=numpy_rng(seed, 1, rep, i_tau, i_mode)))
    histories = run_streaming_fl(rows_problem, np.stack(rows_states), algorithms=algorithms, lr_global=lr_global,
                                 lr_local=lr_local, momentum_beta=momentum_beta, w0=np.stack(rows_w0), seed=seed)
    idx = np.arange(0, t + 1, every)
    out = {"rounds": idx.tolist(), "keys": keys, "n_clients": m, "n_local": k, "mixing_times": taus.tolist(),
           "flip_prob": flips.tolist(),
           "exact_mixing_time": np.atleast_1d(two_state_mixing_time(flips)).tolist(), "modes": modes,
           "curves": {}, "floor": {}, "average": {}, "final": {}}
    for alg, history in histories.items():
        g = replica_curves(history)[1].reshape(len(keys), r, t + 1)
        floors = floor(history, tail).reshape(len(keys), r)
        averages = average(history).reshape(len(keys), r)
        out["curves"][alg] = {key: g[i].mean(0)[idx].tolist() for i, key in enumerate(keys)}
        out["floor"][alg] = {key: floors[i].tolist() for i, key in enumerate(keys)}
        out["average"][alg] = {key: averages[i].tolist() for i, key in enumerate(keys)}
        out["final"][alg] = {key: g[i, :, -1].tolist() for i, key in enumerate(keys)}
    return out


def _check_result(name: str, result) -> None:
    """``result`` must be a :func:`markov_experiment` dict."""
    check_type(name, result, Mapping)
    missing = [k for k in ("keys", "floor", "curves", "mixing_times", "exact_mixing_time", "n_local") if k not in result]
    if missing:
        raise ValueError(f"{name} must be a markov_experiment result; it lacks {missing}.")


def batch_dependence_ratio(result: Mapping) -> dict:
    r"""Floor ratio *independent / dependent batches* (paper App. G, Fig. 7) per algorithm and mixing time.

    ``result`` is a :func:`markov_experiment` run with both ``"markov"`` and ``"independent"`` modes. The ratio of
    the replica-mean floors is 1 when restarting every round from π changes nothing (the paper's "similar
    performance"); below 1 when the dependence *between* rounds, which only the continuous chain keeps, raises the
    floor. Returns ``{"k_over_tau": [K/τ(1/4) per τ_m], "ratio": {alg: [ratio per τ_m]}}`` (τ(1/4) the exact
    mixing time of the client chain).
    """
    _check_result("result", result)
    taus = result["mixing_times"]
    for tau in taus:
        for mode in ("markov", "independent"):
            if f"{tau:g}|{mode}" not in result["keys"]:
                raise ValueError(f"result has no {mode!r} run for mixing time {tau:g}: run markov_experiment with "
                                 "modes=('markov', 'independent').")
    ratio = {alg: [float(np.mean(fl[f"{t:g}|independent"]) / np.mean(fl[f"{t:g}|markov"])) for t in taus]
             for alg, fl in result["floor"].items()}
    return {"k_over_tau": [result["n_local"] / t for t in result["exact_mixing_time"]], "ratio": ratio}


def replica_ratios(result: Mapping, mixing_time: float) -> dict[str, list[float]]:
    """Per replica, the floor ratio independent / dependent batches at ``mixing_time``, ``{alg: [ratio per
    replica]}``: the spread behind :func:`batch_dependence_ratio`'s ratio of replica means (same problem and noise,
    the streams differ by mode)."""
    _check_result("result", result)
    tau = check_real("mixing_time", mixing_time, low=1)
    keys = [f"{tau:g}|{mode}" for mode in ("independent", "markov")]
    missing = [k for k in keys if k not in result["keys"]]
    if missing:
        raise ValueError(f"result has no run {missing} for mixing_time {tau:g}: run markov_experiment with "
                         "modes=('markov', 'independent') and that mixing time.")
    return {alg: (np.asarray(fl[keys[0]]) / np.asarray(fl[keys[1]])).tolist() for alg, fl in result["floor"].items()}


def final_values(result: Mapping, fraction: float = 1 / 6) -> dict:
    r"""Mean of the replica-mean curve over the last ``fraction`` of the recorded rounds, ``{alg: {key: value}}``:
    where a curve from :math:`w_0 = 0` ends (Figs. 1, 3, 4 are read at their right edge)."""
    _check_result("result", result)
    fraction = check_real("fraction", fraction, low=0, high=1, low_open=True)
    n = max(1, int(round(fraction * len(result["rounds"]))))
    return {alg: {key: float(np.mean(c[-n:])) for key, c in curves.items()} for alg, curves in result["curves"].items()}


def explicit_bounds(constants: dict, *, n_clients: int, n_local: int, n_rounds: int, mixing_time: float,
                    tv_sum: float = 0.0, lr_global: float = 0.01, lr_local: float = 0.001,
                    momentum_beta: float = 0.1) -> dict:
    """The three explicit bounds of spec D.3 evaluated with a problem's constants (``MarkovRegression.constants``).

    The step sizes are those of the experiment; the bounds' own step conditions (γ ≤ 1/L, ηK ≤ 1/(10Lδ²),
    γ ≤ β/(√60 L)) are reported in ``conditions`` rather than enforced, since the paper's step sizes do not
    always satisfy them.
    """
    check_type("constants", constants, Mapping)
    missing = [k for k in ("delta0", "sigma2", "smooth_L", "het_theta2", "het_delta2") if k not in constants]
    if missing:
        raise ValueError(f"constants lacks {missing} (pass MarkovRegression.constants()).")
    c = {k: check_real(f"constants[{k!r}]", constants[k], low=0) for k in
         ("delta0", "sigma2", "smooth_L", "het_theta2", "het_delta2")}
    if c["smooth_L"] <= 0:
        raise ValueError(f"constants['smooth_L'] must be > 0, got {c['smooth_L']}.")
    common = dict(n_rounds=n_rounds, mixing_time=mixing_time, sigma2=c["sigma2"], n_clients=n_clients,
                  n_local=n_local, tv_sum=tv_sum)
    return {
        "minibatch": minibatch_bound(c["delta0"], lr_global, **common),
        "local": local_sgd_bound(c["delta0"], lr_local, smooth_L=c["smooth_L"], het_theta2=c["het_theta2"],
                                 het_delta2=c["het_delta2"], check_step=False, **common),
        "local_momentum": local_sgdm_bound(c["delta0"], c["smooth_L"], momentum_beta, lr_global, **common),
        "conditions": {"minibatch gamma <= 1/L": lr_global <= 1 / c["smooth_L"],
                       "local eta*K <= 1/(10 L delta^2)": lr_local * n_local <= 1 / (10 * c["smooth_L"] * c["het_delta2"]),
                       "local_momentum gamma <= beta/(sqrt(60) L)": lr_global <= momentum_beta / (np.sqrt(60) * c["smooth_L"])},
    }


def seed_end_values(records: Iterable[Mapping], fraction: float = 1 / 6) -> dict[tuple, dict[str, list[float]]]:
    """Per seed, where the dependent-batch (``"markov"``) curves of a sweep of :func:`markov_experiment` end
    (:func:`final_values` of every record, ``n_replicas=1``):
    ``{(mixing_time, n_clients, n_local): {alg: [value per seed, in increasing seed order]}}``. The runs of two
    settings of one seed and one ``n_clients`` share their problem (paired by seed)."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise TypeError(f"records must be a list of sweep records of markov_experiment, got {type(records).__name__}.")
    records = list(records)
    if not records:
        raise ValueError("records must hold at least one sweep record.")
    out: dict[tuple, dict[str, list[tuple[int, float]]]] = {}
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping) or not {"config", "seed", "result"} <= set(rec):
            raise ValueError(f"records[{i}] is not a sweep record (config, seed, result).")
        result = rec["result"]
        _check_result(f"records[{i}]['result']", result)
        ends = final_values(result, fraction)
        for key in (k for k in result["keys"] if k.endswith("|markov")):
            setting = (float(key.split("|")[0]), result["n_clients"], result["n_local"])
            for alg, values in ends.items():
                out.setdefault(setting, {}).setdefault(alg, []).append((rec["seed"], values[key]))
    return {setting: {name: [v for _, v in sorted(pairs)] for name, pairs in by_alg.items()}
            for setting, by_alg in out.items()}


def replica_exponents(x, floors) -> list[float]:
    """The log-log slope of each row of ``floors`` (replicas, len(x)) against ``x``: the exponent of the noise floor
    fitted to each replica (:func:`fedlab.tables.loglog_slope`), whose spread gives the exponents' interval.

    >>> [round(v, 6) for v in replica_exponents([1, 2, 4], [[1.0, 0.5, 0.25], [2.0, 8.0, 32.0]])]
    [-1.0, 2.0]
    """
    x = check_array("x", x, ndim=1)
    floors = check_array("floors", floors, ndim=2)
    if floors.shape[1] != x.size or floors.shape[0] == 0:
        raise ValueError(f"floors must have shape (replicas >= 1, {x.size}), got {floors.shape}.")
    return [loglog_slope(x, row) for row in floors]
