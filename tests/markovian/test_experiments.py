"""Experiment functions of notebook 09 (fedlab.markovian.experiments) and the simulated facts D8/D9 of spec D.8."""
import numpy as np
import pytest

from fedlab.markovian.bounds import local_sgd_bound, local_sgdm_bound, minibatch_bound
from fedlab.markovian.data import make_markov_regression
from fedlab.experiments import grid, sweep
from fedlab.markovian.experiments import (batch_dependence_ratio, explicit_bounds, final_values, markov_experiment,
                                          markov_problems, replica_exponents, replica_ratios, seed_end_values)
from fedlab.tables import loglog_slope

FLOOR = dict(start="stationary", init="optimum", n_replicas=2, seed=0)


def test_markov_experiment_structure_and_determinism():
    kw = dict(n_clients=4, n_local=3, n_rounds=20, mixing_times=[1, 10], modes=["markov", "iid"], n_replicas=2, every=5)
    a = markov_experiment(**kw)
    b = markov_experiment(**kw)
    assert a == b
    assert a["keys"] == ["1|markov", "1|iid", "10|markov", "10|iid"]
    assert a["rounds"] == [0, 5, 10, 15, 20] and a["flip_prob"] == [0.5, 0.1] and a["exact_mixing_time"] == [1, 7]
    for alg in ("minibatch", "local", "local_momentum"):
        assert len(a["curves"][alg]["10|iid"]) == 5 and len(a["floor"][alg]["1|markov"]) == 2
        assert len(a["average"][alg]["1|markov"]) == 2 and len(a["final"][alg]["1|markov"]) == 2
    opt = markov_experiment(**{**kw, "init": "optimum"})
    assert max(opt["curves"]["minibatch"]["1|markov"][0:1]) < 1e-10          # starts at the minimiser
    res = sweep(markov_experiment, grid(n_clients=[3, 4], n_local=2, n_rounds=5), seeds=[0], executor="sequential")
    assert len(res) == 2 and "floor" in res[0]["result"]
    with pytest.raises(ValueError, match="modes"):
        markov_experiment(modes=["shuffled"], n_rounds=2)


def test_problems_are_per_replica():
    probs = markov_problems(0, 5, 3)
    assert len(probs) == 3 and not np.allclose(probs[0].features, probs[1].features)


def test_mixing_time_degrades_markov_streams_but_not_iid_streams():
    """Paper Fig. 6 ("all three degrade as the mixing time increases") against i.i.d. streams with the same marginals."""
    r = markov_experiment(n_clients=10, n_local=10, n_rounds=150, mixing_times=[1, 10, 100], modes=["markov", "iid"],
                          **FLOOR)
    for alg in ("minibatch", "local", "local_momentum"):
        markov = [np.mean(r["floor"][alg][f"{t}|markov"]) for t in (1, 10, 100)]
        iid = [np.mean(r["floor"][alg][f"{t}|iid"]) for t in (1, 10, 100)]
        assert markov[0] < markov[1] < markov[2] and markov[2] > 10 * markov[0], alg
        assert max(iid) < 3 * min(iid), alg
        assert loglog_slope([10, 100], markov[1:]) > 0.6


def test_d8_more_local_samples_help_minibatch_and_momentum_not_local_sgd():
    """Spec D8 (paper Fig. 1), in the noise-floor regime (start at w*, stationary streams; M = 10, p = 0.01)."""
    f = {}
    for k in (10, 100):
        r = markov_experiment(n_clients=10, n_local=k, n_rounds=120, mixing_times=[100], modes=["markov"], **FLOOR)
        f[k] = {alg: np.mean(v["100|markov"]) for alg, v in r["floor"].items()}
    assert f[100]["minibatch"] < f[10]["minibatch"] / 3
    assert f[100]["local_momentum"] < f[10]["local_momentum"] / 3
    assert f[100]["local"] > 2 * f[100]["minibatch"]


def test_d9_more_clients_lower_the_gradient_norm_at_fixed_t():
    """Spec D9 (paper Fig. 2/5): from w0 = 0, state-0 start, p = 0.01, K = 20, T = 150."""
    last = {}
    for m in (10, 100):
        r = markov_experiment(n_clients=m, n_local=20, n_rounds=150, mixing_times=[100], modes=["markov"],
                              n_replicas=2, seed=1)
        last[m] = {alg: np.mean(v["100|markov"][-10:]) for alg, v in r["curves"].items()}
    for alg in last[10]:
        assert last[100][alg] < last[10][alg], alg




def test_explicit_bounds_use_the_problem_constants():
    c = make_markov_regression(10, rng=0).constants()
    out = explicit_bounds(c, n_clients=10, n_local=50, n_rounds=500, mixing_time=69, tv_sum=1.3)
    common = dict(n_rounds=500, mixing_time=69, sigma2=c["sigma2"], n_clients=10, n_local=50, tv_sum=1.3)
    assert out["minibatch"] == pytest.approx(minibatch_bound(c["delta0"], 0.01, **common))
    assert out["local"] == pytest.approx(local_sgd_bound(c["delta0"], 0.001, smooth_L=c["smooth_L"],
                                                         het_theta2=c["het_theta2"], het_delta2=1.0,
                                                         check_step=False, **common))
    assert out["local_momentum"] == pytest.approx(local_sgdm_bound(c["delta0"], c["smooth_L"], 0.1, 0.01, **common))
    assert out["conditions"]["minibatch gamma <= 1/L"]
    assert not out["conditions"]["local_momentum gamma <= beta/(sqrt(60) L)"]


def test_batch_dependence_ratio_and_final_values():
    r = markov_experiment(n_clients=4, n_local=3, n_rounds=40, mixing_times=[1, 30], modes=["markov", "independent"],
                          **FLOOR)
    assert r["n_local"] == 3 and r["n_clients"] == 4
    out = batch_dependence_ratio(r)
    assert out["k_over_tau"] == [3 / t for t in r["exact_mixing_time"]]
    for alg, ratios in out["ratio"].items():
        expected = [np.mean(r["floor"][alg][f"{t:g}|independent"]) / np.mean(r["floor"][alg][f"{t:g}|markov"])
                    for t in (1, 30)]
        assert ratios == pytest.approx(expected)
    # p = 1/1 is a chain that restarts from pi anyway: both modes are the same process; K << tau: dependence hurts
    assert out["ratio"]["minibatch"][1] < out["ratio"]["minibatch"][0]
    ends = final_values(r, 0.25)
    n = max(1, round(0.25 * len(r["rounds"])))
    assert ends["local"]["30|markov"] == pytest.approx(np.mean(r["curves"]["local"]["30|markov"][-n:]))
    with pytest.raises(ValueError, match="independent"):
        batch_dependence_ratio(markov_experiment(n_clients=2, n_local=2, n_rounds=3, modes=["markov"]))
    with pytest.raises(ValueError, match="markov_experiment result"):
        final_values({"keys": []})


def test_replica_ratios_are_the_spread_behind_the_ratio_of_means():
    r = markov_experiment(n_clients=4, n_local=3, n_rounds=30, mixing_times=[1, 30], modes=["markov", "independent"],
                          **{**FLOOR, "n_replicas": 3})
    per = replica_ratios(r, 30)
    for alg, values in per.items():
        fl = r["floor"][alg]
        assert values == pytest.approx([i / m for i, m in zip(fl["30|independent"], fl["30|markov"])])
        assert len(values) == 3
    with pytest.raises(ValueError, match="mixing_time 7"):
        replica_ratios(r, 7)
    with pytest.raises(ValueError, match="independent"):
        replica_ratios(markov_experiment(n_clients=2, n_local=2, n_rounds=3, modes=["markov"]), 100)


def test_seed_end_values_pairs_the_settings_by_seed():
    recs = sweep(markov_experiment, grid(n_clients=3, n_local=[2, 4], n_rounds=12, mixing_times=[(10, 100)],
                                         modes=[("markov",)], n_replicas=1, every=2), seeds=[1, 0],
                 executor="sequential")
    ends = seed_end_values(recs)
    assert sorted(ends) == [(10.0, 3, 2), (10.0, 3, 4), (100.0, 3, 2), (100.0, 3, 4)]
    by_seed = {r["seed"]: final_values(r["result"]) for r in recs if r["config"]["n_local"] == 4}
    assert ends[(100, 3, 4)]["local"] == [by_seed[0]["local"]["100|markov"], by_seed[1]["local"]["100|markov"]]
    with pytest.raises(ValueError, match="records"):
        seed_end_values([])
    with pytest.raises(ValueError, match=r"records\[0\]"):
        seed_end_values([{"config": {}, "seed": 0}])


def test_replica_exponents_fit_each_row():
    x = [10, 100, 1000]
    floors = [[1.0, 0.1, 0.01], [1.0, 1.0, 1.0], [2.0, 20.0, 200.0]]
    assert replica_exponents(x, floors) == pytest.approx([-1.0, 0.0, 1.0], abs=1e-12)
    assert replica_exponents(x, floors)[0] == pytest.approx(loglog_slope(x, floors[0]))
    with pytest.raises(ValueError, match="floors"):
        replica_exponents(x, [[1.0, 2.0]])
