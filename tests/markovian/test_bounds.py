"""Calculators of streaming FL with Markovian data (fedlab.markovian.bounds) and the facts of spec D.8."""
import itertools
import math

import numpy as np
import pytest

from fedlab.markovian.bounds import (TABLE1_ALGORITHMS, lemma_c2, local_sgd_bound, local_sgd_complexity,
                                     local_sgdm_bound, local_sgdm_complexity, minibatch_bound,
                                     minibatch_complexity, product_mixing_time_bound,
                                     product_two_state_mixing_time, product_two_state_tv,
                                     step_conditions_local_sgdm, table1_complexity, tv_l1,
                                     tv_series_geometric, tv_sup, two_state_mixing_time, two_state_tv)
from fedlab.markovian.data import mixing_time, flip_matrix

CONST = dict(smooth_L=1.0, delta0=1.0, sigma2=1.0, mixing_time=69, n_clients=10)


def test_tv_conventions():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.0, 0.5, 0.5])
    assert tv_l1(p, q) == 1.0 and tv_sup(p, q) == 0.5
    # sup convention = max over events, by brute force over all subsets
    best = max(abs(p[list(a)].sum() - q[list(a)].sum()) for r in range(4) for a in itertools.combinations(range(3), r))
    assert tv_sup(p, q) == pytest.approx(best)
    assert np.allclose(tv_l1(np.eye(2), [[0.5, 0.5], [0.5, 0.5]]), [1.0, 1.0])
    with pytest.raises(ValueError, match="sum to 1"):
        tv_l1([0.5, 0.6], [0.5, 0.5])


def test_d1_two_state_tv_and_mixing_times():
    for p in (0.3, 0.01):
        pt = np.linalg.matrix_power(flip_matrix(p), 40)
        assert two_state_tv(p, 40) == pytest.approx(tv_l1(pt[0], [0.5, 0.5]), rel=1e-10)
    expected = [1, 2, 7, 14, 69, 693]
    assert list(two_state_mixing_time([0.5, 0.25, 0.1, 0.05, 0.01, 0.001])) == expected
    for p, tau in zip([0.25, 0.1, 0.05, 0.01], expected[1:]):
        assert mixing_time(flip_matrix(p)) == tau                      # matrix-power check
    assert two_state_mixing_time(0.01) == pytest.approx(math.log(4) / (2 * 0.01), abs=1)


def test_d2_mixing_time_at_smaller_eps():
    assert two_state_mixing_time(0.01, eps=1 / 16) == 138 == 2 * two_state_mixing_time(0.01)
    for p in (0.3, 0.05, 0.01):
        tau = two_state_mixing_time(p)
        for n in (2, 3):
            assert two_state_mixing_time(p, eps=4.0 ** -n) <= n * tau


def _product_tv_bruteforce(flips, t):
    """L1 TV of the product chain from state (0,..,0), by Kronecker products of the transition matrices."""
    big = np.ones((1, 1))
    for p in flips:
        big = np.kron(big, np.linalg.matrix_power(flip_matrix(p), t))
    unif = np.full(big.shape[1], 1.0 / big.shape[1])
    return tv_l1(big[0], unif)


def test_product_chain_tv_against_kronecker_bruteforce():
    for m in (1, 2, 3, 4):
        for t in (0, 1, 7, 50):
            assert product_two_state_tv(m, 0.05, t) == pytest.approx(_product_tv_bruteforce([0.05] * m, t), abs=1e-12)
    vals = product_two_state_tv(10, 0.01, [0, 10, 50, 100, 200, 400])
    assert np.allclose(vals, [1.998, 1.7781, 0.8807, 0.3397, 0.0436, 0.0008], atol=5e-4)


def test_d3_product_mixing_time_bound_holds_and_main_text_form_fails():
    exact = {m: product_two_state_mixing_time(m, 0.01) for m in (1, 2, 10, 100)}
    assert exact == {1: 69, 2: 74, 10: 115, 100: 172}
    assert [product_mixing_time_bound([69] * m) for m in (1, 2, 10, 100)] == [69, 138, 207, 345]
    for m in (2, 3, 4, 10, 100):
        assert product_two_state_mixing_time(m, 0.01) <= product_mixing_time_bound([69] * m)
    assert exact[2] > 69 * math.log(2)                                      # "max tau_m ln M" is not a bound
    # heterogeneous chains (brute force over the 2^M product states)
    flips = [0.05, 0.1, 0.2]
    taus = [two_state_mixing_time(p) for p in flips]
    t_prod = next(t for t in range(1, 500) if _product_tv_bruteforce(flips, t) <= 0.25)
    assert t_prod <= product_mixing_time_bound(taus)


def test_d4_lemma_c2_test_triples():
    for (tau, k, t), (series, bound) in {(69, 100, 1000): (1.3175, 1.9955), (69, 69, 1000): (1.3333, 2.4427),
                                         (10, 15, 50): (1.2698, 1.9618)}.items():
        s = tv_series_geometric(tau, k, t)
        assert s == pytest.approx(series, abs=1e-4) and lemma_c2(tau, k) == pytest.approx(bound, abs=1e-4)
        assert s <= lemma_c2(tau, k)
    with pytest.raises(ValueError, match="K >= tau"):
        lemma_c2(69, 10)


def test_exact_tv_series_vs_uniform_ergodicity():
    """The L1 TV of a product chain can exceed Assumption 3.4's (1/4)^floor(t/tau) <= 1 at t < tau."""
    tau = product_two_state_mixing_time(10, 0.01)
    exact = product_two_state_tv(10, 0.01, 100 * np.arange(50))
    assert exact[0] > 1.9                                                   # Q = delta_0 is at L1 distance ~2
    assert np.sum(exact) > 1.0 and np.all(exact[1:] <= 0.25 ** np.floor(100 * np.arange(1, 50) / tau) + 1e-12)


def test_d5_explicit_bound_test_vectors():
    assert minibatch_bound(1, 1, 1000, 69, 1, 10, 100) == pytest.approx(0.14)
    geo = tv_series_geometric(69, 100, 1000)
    assert minibatch_bound(1, 1, 1000, 69, 1, 10, 100, geo) == pytest.approx(0.141317, abs=1e-6)
    assert local_sgd_bound(1, 1e-3, 100, 1000, 69, 1, 10, 1, 1, 1) == pytest.approx(0.500089, abs=1e-6)
    assert local_sgdm_bound(1, 1, 0.1, 0.1 / math.sqrt(60), 1000, 69, 1, 10, 100) == pytest.approx(1.725226, abs=1e-6)


def test_d10_stationary_start_has_no_tv_term():
    assert two_state_tv(0.01, 0) == 1.0                                     # from state 0, not from pi
    base = minibatch_bound(1, 0.5, 100, 10, 1, 5, 20)
    assert minibatch_bound(1, 0.5, 100, 10, 1, 5, 20, tv_sum=0.0) == base
    assert minibatch_bound(1, 0.5, 100, 10, 1, 5, 20, tv_sum=2.0) == pytest.approx(base + 2.0 / 100)


def test_bound_step_conditions_are_checked():
    with pytest.raises(ValueError, match="1/L"):
        minibatch_bound(1, 2.0, 100, 10, 1, 5, 20, smooth_L=1.0)
    with pytest.raises(ValueError, match="1/\\(10 L delta\\^2\\)"):
        local_sgd_bound(1, 1e-2, 100, 1000, 69, 1, 10, 1, 1, 1)
    assert np.isfinite(local_sgd_bound(1, 1e-2, 100, 1000, 69, 1, 10, 1, 1, 1, check_step=False))
    with pytest.raises(ValueError, match="het_delta2"):
        local_sgd_bound(1, 1e-4, 10, 10, 1, 1, 1, 1, 0, 0.5)                 # delta >= 1 in Assumption 4.4


def test_corollary_d3_and_e3_values():
    st = minibatch_complexity(0.1, **CONST)
    assert (st["n_local"], st["n_rounds"]) == (2760, 400)
    ns = minibatch_complexity(0.1, **CONST, stationary=False)
    assert (ns["n_local"], ns["n_rounds"]) == (5520, 800) and ns["eps_max"] == pytest.approx(0.894, abs=1e-3)
    # the 32-vs-64 slip: the stated K and T give M eps^4 / (32 ln 4 (L D0 v sigma^2))
    c = dict(smooth_L=1.0, delta0=1.0, sigma2=1.0, mixing_time=5, n_clients=10)
    r = minibatch_complexity(0.1, **c, stationary=False)
    assert r["residual"] == pytest.approx(2.254e-5, rel=1e-3)
    k, t = 8 * 5 / (10 * 0.01), 8 / 0.01
    assert 2 * 5 / (t * k * math.log(4)) == pytest.approx(r["residual"], rel=1e-9)
    assert local_sgd_complexity(0.1, **CONST, het_theta2=1.0, het_delta2=1.0)["n_local"] == 9016


def test_d6_corollary_choices_split_the_target():
    eps = 0.1
    # Local SGD, stationary: each of the three terms is exactly eps^2 / 3 (first step condition binding)
    tau, s2, m, big_l, d0, th2, de2 = 69.0, 1.0, 10, 1.0, 1.0, 1.0, 1.0
    k = 196 / 15 * tau * s2 / (m * eps ** 2)
    eta = 3 / 8 * de2 * eps ** 2 / (k * big_l * (th2 + s2))
    assert eta <= 1 / (10 * k * big_l * de2)
    t = 98 / 15 * d0 / (eta * k * eps ** 2)
    terms = [98 / 45 * d0 / (eta * k * t), 196 / 45 * tau * s2 / (m * k), 40 / 45 * big_l * eta * k * (th2 + s2) / de2]
    assert terms == pytest.approx([eps ** 2 / 3] * 3, rel=1e-12)
    # Minibatch stationary: each term <= eps^2 / 2, total <= eps^2
    r = minibatch_complexity(eps, **CONST)
    assert 2 * 1.0 / (1.0 * r["n_rounds"]) <= eps ** 2 / 2 + 1e-15
    assert 2 * 69 * 1.0 / (10 * r["n_local"]) <= eps ** 2 / 2 + 1e-15
    assert minibatch_bound(1, 1, r["n_rounds"], 69, 1, 10, r["n_local"]) <= eps ** 2 + 1e-15
    # the explicit choices satisfy the explicit bounds (Local SGD, Local SGD-M, both regimes)
    for stationary in (True, False):
        ls = local_sgd_complexity(eps, **CONST, het_theta2=1.0, het_delta2=1.0, stationary=stationary)
        tv = 0.0 if stationary else lemma_c2(69, ls["n_local"])
        val = local_sgd_bound(1, ls["lr_local"], ls["n_local"], ls["n_rounds"], 69, 1, 10, 1, 1, 1, tv)
        assert val <= eps ** 2 * (1 + 1e-9) if stationary else val <= eps ** 2 + 0.01 * eps ** 2
        sm = local_sgdm_complexity(eps, **CONST, momentum_beta=0.1, stationary=stationary)
        tv = 0.0 if stationary else lemma_c2(69, sm["n_local"])
        assert local_sgdm_bound(1, 1, 0.1, sm["lr_global"], sm["n_rounds"], 69, 1, 10, sm["n_local"], tv) \
            <= eps ** 2 * (1 + 1e-9)


def test_d7_table1_sample_complexity_scales_as_tau_over_m():
    ms = np.array([1, 10, 100, 1000])
    taus = np.array([1, 10, 100, 1000])
    for alg in ("minibatch", "local", "local_momentum"):
        for stationary in (True, False):
            kw = dict(eps=0.1, sigma2=1.0, momentum_beta=0.5, het_theta2=1.0, stationary=stationary)
            vs_m = table1_complexity(alg, n_clients=ms, mixing_time=10, **kw)["samples"]
            vs_tau = table1_complexity(alg, n_clients=10, mixing_time=taus, **kw)["samples"]
            assert np.polyfit(np.log(ms), np.log(vs_m), 1)[0] == pytest.approx(-1.0)
            assert np.polyfit(np.log(taus), np.log(vs_tau), 1)[0] == pytest.approx(1.0)
            t = table1_complexity(alg, n_clients=ms, mixing_time=10, **kw)["n_rounds"]
            assert np.allclose(t, t[0])                                     # communication does not depend on M
    lb = table1_complexity("lower_bound_iid", 0.1, n_clients=ms)
    assert np.polyfit(np.log(ms), np.log(lb["samples"]), 1)[0] == pytest.approx(-1.0)
    assert set(TABLE1_ALGORITHMS) == {"lower_bound_iid", "minibatch", "local", "local_momentum"}
    with pytest.raises(ValueError, match="algorithm"):
        table1_complexity("scaffold", 0.1)


def test_table1_values():
    kw = dict(smooth_L=2.0, delta0=3.0, sigma2=4.0, mixing_time=5.0, n_clients=10, momentum_beta=0.5)
    eps = 0.1
    assert table1_complexity("minibatch", eps, **kw)["n_rounds"] == pytest.approx(6 / eps ** 2)
    assert table1_complexity("minibatch", eps, **kw, stationary=False)["n_rounds"] == pytest.approx(6 / eps ** 2)
    assert table1_complexity("local_momentum", eps, **kw)["samples"] == pytest.approx(5 * 12 * 4 / (10 * eps ** 4))
    h = max(1.0, 4.0 / eps ** 2)
    assert table1_complexity("local", eps, **kw)["n_rounds"] == pytest.approx(6 / eps ** 2 * h)


def test_step_conditions_local_sgdm_binding():
    # the paper's experiment (L ~ 3.3, eta = 1e-3, K = 100, M = 10, beta = 0.1, gamma = 0.01) violates them
    r = step_conditions_local_sgdm(lr_local=1e-3, n_local=100, smooth_L=3.3, momentum_beta=0.1, n_clients=10,
                                   delta0=1.0, n_rounds=1000, G0=1.0, lr_global=0.01)
    expected = {"1/(2 beta)": 5.0, "1/sqrt(120 M K beta^2)": 1 / math.sqrt(1200),
                "sqrt(L D0/(360 beta^3 T G0))": math.sqrt(3.3 / 360), "(1/225)/(1-beta)": 1 / (225 * 0.9),
                "(1/525)/(beta gamma L T)": 1 / (525 * 0.1 * 0.01 * 3.3 * 1000)}
    assert r["limits"] == pytest.approx(expected)
    assert r["etaKL"] == pytest.approx(0.33) and r["binding"] == "(1/525)/(beta gamma L T)"
    assert r["limits"]["1/sqrt(120 M K beta^2)"] == pytest.approx(0.0289, abs=1e-4)   # spec D.7: far below 0.33
    assert not r["satisfied"] and r["gamma_max"] == pytest.approx(0.1 / (math.sqrt(60) * 3.3))
    short = step_conditions_local_sgdm(lr_local=1e-3, n_local=100, smooth_L=3.3, momentum_beta=0.1, n_clients=10,
                                       delta0=1.0, n_rounds=10, G0=1.0, lr_global=0.01)
    assert short["binding"] == "(1/225)/(1-beta)"
    ok = step_conditions_local_sgdm(lr_local=r["eta_max"] * 0.99, n_local=100, smooth_L=3.3, momentum_beta=0.1,
                                    n_clients=10, delta0=1.0, n_rounds=1000, G0=1.0, lr_global=r["gamma_max"])
    assert ok["satisfied"]


@pytest.mark.parametrize("call", [
    lambda: two_state_tv(0.0, 3), lambda: two_state_tv(1.0, 3), lambda: two_state_mixing_time(-0.1),
    lambda: minibatch_bound(1, 0.0, 10, 5, 1, 2, 3), lambda: minibatch_bound(1, 0.1, 10, 5, -1.0, 2, 3),
    lambda: minibatch_complexity(0.0, **CONST), lambda: product_mixing_time_bound([]),
    lambda: local_sgdm_bound(1, 1, 1.5, 0.1, 10, 5, 1, 2, 3), lambda: tv_series_geometric(0, 1, 1),
])
def test_bad_inputs_raise(call):
    with pytest.raises((ValueError, TypeError)):
        call()
