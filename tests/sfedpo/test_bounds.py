"""Theorem 1, the term B (15) and Theorem 2 of SFedPO (fedlab.sfedpo.bounds); facts B3, B4, B6, B7, B9."""
import numpy as np
import pytest

from fedlab.sfedpo.bounds import (LAST_TERMS, dds_objective, heterogeneity_score, sfedpo_B,
                                  sfedpo_client_stats, sfedpo_gamma, sfedpo_stepsize_ok,
                                  sfedpo_theorem1_bound, theorem1_constants, theorem1_terms)
from fedlab.sfedpo.strategies import (strategy, theorem2_constants, theorem2_gap, theorem2_sweep)
from fedlab.sfedpo.data import perturb_oracle

# the spec's test vector (dynamic.md §B.6)
PI = np.array([[0.7, 0.3], [0.2, 0.8]])
A = np.array([[0.4, 0.6], [0.5, 0.5]])
W = np.array([0.5, 0.5])
D = np.array([0.1, 0.3])
P = np.array([0.6, 0.4])
Q = np.array([0.2, 0.3])


def env(n=6, m=5, seed=0):
    rng = np.random.default_rng(seed)
    return dict(pi=rng.dirichlet(np.ones(m), size=n), q=np.clip(0.2 + 0.01 * rng.standard_normal(n), 0.01, 1),
                d=rng.random(m), w=np.full(m, 1 / m))


def test_client_stats_test_vector():
    st = sfedpo_client_stats(PI, A, D, W, G=2, n_steps=5)
    expected = {"alpha_n": [0.46, 0.5], "beta": [0.082, 0.13], "gamma": [0.224002, 0.19375],
                "beta_prime": [0.5408, 0.58], "t1": [0.13833, 0.209625], "t2": [0.684023, 0.599333],
                "t3": [0.021172, 0.1395], "Q": [0.843525, 0.948458]}
    for key, vals in expected.items():
        assert st[key] == pytest.approx(vals, abs=1e-6), key
    one = sfedpo_client_stats(PI[0], A[0], D, W, G=2, n_steps=5)
    assert isinstance(one["Q"], float) and one["Q"] == pytest.approx(0.843525, abs=1e-6)


def test_theorem1_test_vector_and_decomposition():
    bound = sfedpo_theorem1_bound(1, 1, 0.01, 5, 100, 1, 2, D, W, PI, A, P, Q)
    assert bound == pytest.approx(43.352055, abs=1e-6)  # fact B7
    terms = theorem1_terms(1, 1, 0.01, 5, 100, 1, 2, D, W, PI, A, P, Q)
    parts = sum(terms[k] for k in ("init", "variance", "local_variance", "drift_t1", "drift_t2", "drift_t3", "last"))
    assert terms["bracket"] == pytest.approx(parts)
    assert terms["bound"] == pytest.approx(terms["prefactor"] * parts)
    assert terms["prefactor"] == pytest.approx(18 / (P @ Q))


@pytest.mark.parametrize("last_term", sorted(LAST_TERMS))
def test_every_last_term(last_term):
    terms = theorem1_terms(1, 1, 0.01, 5, 100, 1, 2, D, W, PI, A, P, Q, last_term=last_term)
    assert terms["last"] > 0
    gamma = sfedpo_gamma(np.array([0.46, 0.5]), 5)
    denom = 1 - (1 - np.array([0.46, 0.5])) ** 10
    expected = (7 * 2 * gamma * Q / denom).sum() / 100 if last_term == "printed" else \
        (20 / 3 * 2 * gamma * P / denom).sum() / 100
    assert terms["last"] == pytest.approx(expected)


def test_heterogeneity_score_B_and_saw_vector():
    s = heterogeneity_score(PI, A, D, W, G=2, n_steps=5, L=1, eta=0.01, sigma2=1)
    assert s == pytest.approx([0.853525, 0.958458], abs=1e-6)
    assert sfedpo_B(1, 0.01, 1, P, Q, s) == pytest.approx(1.514986, abs=1e-6)
    assert dds_objective(PI, A, D, W, G=2, n_steps=5) == pytest.approx([0.843525, 0.948458], abs=1e-6)
    with pytest.raises(ValueError, match="p must sum to 1"):  # aggregation weights lie on the simplex
        sfedpo_B(1, 0.01, 1, [0.0, 0.0], Q, s)


def test_gamma_closed_form_equals_definition():
    assert sfedpo_gamma(0.5, 5) == pytest.approx(0.19375)  # fact B3
    assert sfedpo_gamma(0.2, 5) == pytest.approx(0.537856)
    assert sfedpo_gamma(0.5, 2) == pytest.approx(0.375)
    a = np.linspace(0.05, 1.0, 20)
    for t in (1, 3, 10):
        assert np.allclose(sfedpo_gamma(a, t), sfedpo_gamma(a, t, form="sum"))
    with pytest.raises(ValueError, match="alpha_n"):
        sfedpo_gamma(0.0, 5)
    with pytest.raises(ValueError, match="form"):
        sfedpo_gamma(0.5, 5, form="integral")


def test_theorem1_constants_fact_B6():
    c18, c53 = theorem1_constants()
    assert c18 == pytest.approx(18) and c53 == pytest.approx(5 / 3)
    assert 2 * np.sqrt(0.2) / (1 - 0.4) <= 5 / 3 and 5 / 3 * 4 <= 7
    with pytest.raises(ValueError, match="c_squared"):
        theorem1_constants(0.6)
    with pytest.raises(ValueError, match="infinite"):
        theorem1_constants(0.45)


def test_stepsize_condition():
    out = sfedpo_stepsize_ok(1, 5, 0.01, 2)
    assert out["ok"] and out["c"] == pytest.approx(0.05) and out["limit"] == pytest.approx(0.25)
    assert not sfedpo_stepsize_ok(1, 5, 0.1, 12)["ok"]
    proof = sfedpo_stepsize_ok(1, 5, 0.01, 2, n_active=20)
    assert not proof["ok_proof"] and proof["limit_proof"] == pytest.approx(0.025)
    with pytest.raises(ValueError, match="eta"):
        sfedpo_stepsize_ok(1, 5, 0.0, 2)


def test_uniform_sampling_t3_fact_B4():
    e = env()
    a = np.full_like(e["pi"], 0.3)
    st = sfedpo_client_stats(e["pi"], a, e["d"], e["w"], G=1.5, n_steps=4)
    gamma = sfedpo_gamma(0.3, 4)
    assert st["t3"] == pytest.approx(2 * 1.5 * gamma * ((e["pi"] - e["w"]) ** 2).sum(1))


def test_budget_override_and_errors():
    st = sfedpo_client_stats(PI, A, D, W, G=2, n_steps=5, budget=0.5)
    assert st["alpha_n"] == pytest.approx([0.5, 0.5])
    with pytest.raises(ValueError, match="budget"):
        sfedpo_client_stats(PI, A, D, W, G=2, n_steps=5, budget=1.5)
    with pytest.raises(ValueError, match="alpha"):
        sfedpo_client_stats(PI, A * 2, D, W, G=2, n_steps=5)
    with pytest.raises(ValueError, match="pi"):
        sfedpo_client_stats(PI * 2, A, D, W, G=2, n_steps=5)
    with pytest.raises(ValueError, match="d"):
        sfedpo_client_stats(PI, A, [0.1], W, G=2, n_steps=5)
    with pytest.raises(ValueError, match="positive sampling budget"):
        sfedpo_client_stats(PI, np.zeros_like(A), D, W, G=2, n_steps=5)
    with pytest.raises(ValueError, match="q"):
        theorem1_terms(1, 1, 0.01, 5, 100, 1, 2, D, W, PI, A, P, [0.0, 0.3])
    with pytest.raises(ValueError, match="last_term"):
        theorem1_terms(1, 1, 0.01, 5, 100, 1, 2, D, W, PI, A, P, Q, last_term="other")


# ------------------------------------------------------------------------------------ Theorem 2

def test_strategy_and_gap_vanish_with_a_perfect_oracle():
    e = env()
    a, s, p = strategy(e["pi"], q=e["q"], d=e["d"], w=e["w"])
    assert np.allclose((e["pi"] * a).sum(1), 0.5) and p.sum() == pytest.approx(1) and s.shape == (6,)
    res = theorem2_gap(e["pi"], e["pi"], q=e["q"], d=e["d"], w=e["w"])
    assert res["abs_gap"] == pytest.approx(0, abs=1e-12) and res["delta_sum"] == 0  # fact B9 at eps = 0
    noisy = theorem2_gap(e["pi"], perturb_oracle(e["pi"], 0.05, 0), q=e["q"], d=e["d"], w=e["w"])
    assert noisy["delta_sum"] > 0 and noisy["abs_gap"] > 0 and len(noisy["delta"]) == 6


def test_bound_degradation_is_monotone_in_the_oracle_error():
    e = env(n=8, m=6, seed=1)
    eps = [0.0, 0.005, 0.01, 0.02, 0.04, 0.08]
    sw = theorem2_sweep(e["pi"], eps, n_draws=30, rng=0, q=e["q"], d=e["d"], w=e["w"])
    gaps = np.array(sw["mean_abs_gap"])
    assert gaps[0] == pytest.approx(0, abs=1e-12) and np.all(np.diff(gaps) > 0)  # larger error, larger degradation
    assert np.all(np.diff(sw["mean_delta_sum"]) > 0)
    # Theorem 2: |dB| <= O(sum delta), and -> 0 as eps -> 0 (fact B9)
    assert gaps[1] < gaps[-1] / 10
    k = theorem2_constants(e["pi"], q=e["q"], d=e["d"], w=e["w"])["K"]
    assert np.all(gaps <= k * np.array(sw["mean_delta_sum"]) + 1e-15)
    with pytest.raises(ValueError, match="eps_values"):
        theorem2_sweep(e["pi"], [], q=e["q"], d=e["d"], w=e["w"])


def test_theorem2_constants_are_positive_and_grow_with_G():
    e = env()
    c = theorem2_constants(e["pi"], q=e["q"], d=e["d"], w=e["w"])
    for key in ("C1", "C2", "C3", "C4", "Cs", "Cs_tilde"):
        assert np.all(np.array(c[key]) > 0), key
    assert c["Cs"] == pytest.approx(np.array(c["C2"]) + np.array(c["C3"]) + np.array(c["C4"]))
    assert c["K"] > 0 and c["L_s"] > 0
    assert theorem2_constants(e["pi"], q=e["q"], d=e["d"], w=e["w"], G=4.0)["K"] > c["K"]
    with pytest.raises(ValueError, match="zero"):
        theorem2_constants(e["pi"], q=e["q"], d=e["d"], w=e["w"], a2=100.0)
