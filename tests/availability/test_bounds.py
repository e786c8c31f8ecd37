"""Bound calculators of the availability chapter (fedlab.availability.bounds)."""
from fractions import Fraction

import numpy as np
import pytest

from fedlab.availability.bounds import (BoundConstants, EpsOptMinimizer, SubsetBounds, best_subset,
                                        bias_bound, bias_bound_tv, biased_importance, bound_constants,
                                        chi2_divergence, correlation_horizon, eps_bias, eps_bias_tv, eps_opt,
                                        eps_opt_quadratic, ergodicity_constants, heterogeneity, max_step_size,
                                        minimize_eps_opt, minimize_eps_opt_cvxpy, minimize_total_error_cvxpy,
                                        opt_quadratic_terms, subset_bounds, total_error_bound,
                                        total_error_objective, tv_distance, unbiased_weights)
from fedlab.availability.data import product_chain, two_state_matrix

SPEC = dict(E=5, L=1.0, D=1.0, G=2.0, H=1.0, gamma=0.5, diam=1.0, M=4, c_p=1.0)


def test_biased_importance_and_unbiased_weights():
    alpha, pi = np.array([0.2, 0.3, 0.5]), np.array([0.9, 0.1, 0.5])
    q = unbiased_weights(alpha, pi)
    np.testing.assert_allclose(biased_importance(pi, q), alpha)
    np.testing.assert_allclose(biased_importance(pi, 7 * q), alpha)  # scale invariance
    assert chi2_divergence(alpha, alpha) == pytest.approx(0) and tv_distance(alpha, alpha) == pytest.approx(0)
    assert eps_bias(alpha, pi, q) == pytest.approx(0, abs=1e-12)
    assert eps_bias_tv(alpha, pi, q) == pytest.approx(0, abs=1e-12)
    batch = biased_importance(pi, np.stack([q, np.ones(3)]))
    assert batch.shape == (2, 3)


def test_divergence_example():
    alpha, pi, q = [0.5, 0.5], [0.9, 0.1], [0.5, 0.5]
    p = biased_importance(pi, q)
    np.testing.assert_allclose(p, [0.9, 0.1])
    assert chi2_divergence(alpha, p) == pytest.approx(16 / 9)
    assert tv_distance(alpha, p) == pytest.approx(0.4)
    assert eps_bias_tv(alpha, pi, q) == pytest.approx(0.16)
    assert 4 * eps_bias_tv(alpha, pi, q) <= eps_bias(alpha, pi, q)
    assert chi2_divergence(alpha, [1.0, 0.0]) == np.inf
    assert bias_bound(alpha, pi, q, kappa2=2, gamma=3) == pytest.approx(6 * 16 / 9)
    assert bias_bound_tv(alpha, pi, q, kappa2=2, gamma_prime=3) == pytest.approx(4 * 6 * 0.16)
    assert total_error_bound(1.0, 2.0, kappa2=3) == pytest.approx(18)


def test_tv_on_included_set():
    rng = np.random.default_rng(0)
    alpha, pi = rng.dirichlet(np.ones(6)), rng.uniform(0.1, 1, 6)
    S = np.array([1, 0, 1, 1, 0, 1], bool)
    q = np.where(S, alpha / pi, 0)
    assert eps_bias_tv(alpha, pi, q) == pytest.approx(alpha[~S].sum() ** 2)
    assert eps_bias(alpha, pi, q) == np.inf


def test_chi2_not_convex_prop_d23_counterexample():
    alpha, pi = [0.9, 0.05, 0.05], [0.1, 0.1, 0.9]
    q1, q2 = np.array([0.1, 0.8, 0.1]), np.array([0.2, 0.1, 0.7])
    f1, f2, fm = (eps_bias(alpha, pi, q) for q in (q1, q2, (q1 + q2) / 2))
    assert f1 == pytest.approx(float(Fraction(4349, 320)), rel=1e-12)
    assert f2 == pytest.approx(float(Fraction(10877, 420)), rel=1e-12)
    assert fm == pytest.approx(float(Fraction(3473, 160)), rel=1e-12)
    assert fm > (f1 + f2) / 2


def test_chi2_convex_for_constant_pi():
    rng = np.random.default_rng(1)
    alpha, pi = rng.dirichlet(np.ones(4)), np.full(4, 0.3)
    for _ in range(200):
        a, b = rng.dirichlet(np.ones(4)), rng.dirichlet(np.ones(4))
        assert eps_bias(alpha, pi, (a + b) / 2) <= (eps_bias(alpha, pi, a) + eps_bias(alpha, pi, b)) / 2 + 1e-12


def test_heterogeneity():
    assert heterogeneity([1.0, 2.0, 1.5], [0.5, 1.0, 1.5]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="f_star"):
        heterogeneity([1.0], [2.0])


def test_ergodicity_constants():
    P = two_state_matrix(0.9, 0.9)
    c_p, t_p = ergodicity_constants(P)
    assert t_p == 0
    rho = np.array([0.1, 0.9])
    for t in range(1, 30):
        assert np.abs(np.linalg.matrix_power(P, t) - rho).max() <= c_p * 0.95 ** t
    prod = product_chain([two_state_matrix(0.9, 0.0), two_state_matrix(0.1, 0.9), two_state_matrix(0.5, -0.3)])
    c_p, _ = ergodicity_constants(prod)
    assert np.isfinite(c_p) and c_p > 0
    with pytest.raises(ValueError, match="diagonalisable"):  # eigenvalue 0 twice, one eigenvector
        ergodicity_constants([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="row-stochastic"):
        ergodicity_constants([[1.0, 1.0], [0.0, 1.0]])


def test_correlation_horizon_spec_values():
    kw = dict(c_p=1.0, h=1.0, mixing=0.95)
    np.testing.assert_array_equal(correlation_horizon(np.arange(1, 12), **kw), np.arange(1, 12))
    assert correlation_horizon(100, **kw) == 100
    assert correlation_horizon(10 ** 4, **kw) == 194
    assert correlation_horizon(1, c_p=0.1, h=1.0, mixing=0.5) == 0  # clamp when ln(2 C_P H t) < 0
    assert correlation_horizon(5, c_p=1.0, h=1.0, mixing=0.5, t_p=3) == 4


def test_bound_constants_spec_values():
    assert max_step_size(1.0, 5, 1.0) == pytest.approx(1 / 22)
    c = bound_constants(Q=1.0, mixing=0.95, **SPEC)
    assert isinstance(c, BoundConstants)
    assert c.sum_eta2 == pytest.approx((1 / 22) ** 2 * np.pi ** 2 / 6, rel=1e-12)
    assert c.sum_eta2 == pytest.approx(0.0033990, rel=2e-4)  # the spec's rounded value
    assert c.v == pytest.approx(2.048333, rel=1e-6)
    assert c.psi == pytest.approx(0.720508, rel=1e-6)
    assert c.phi == pytest.approx(19.38252, rel=1e-6)
    assert c.correlation_term == pytest.approx(377.8762, rel=1e-6)
    c2 = bound_constants(Q=1.0, mixing=0.5, **SPEC)
    assert c2.phi == pytest.approx(0.428263, rel=1e-5)
    assert c2.correlation_term == pytest.approx(0.617853, rel=1e-5)
    assert c.horizon_sum(3) == pytest.approx((1 + 1 / 2 + 1 / 3) / 22)
    # truncation is converged
    c_short = bound_constants(Q=1.0, mixing=0.95, t_max=10 ** 5, **SPEC)
    assert abs(c_short.phi - c.phi) < 1e-5
    # T_P > 0 adds H * sum_{t < T_P} eta_t to psi
    c3 = bound_constants(Q=1.0, mixing=0.95, t_p=3, **{**SPEC})
    assert c3.psi - c.psi == pytest.approx((1 + 1 / 2) / 22)


def test_eps_opt_spec_values_and_guideline_b():
    kw = dict(mixing=0.95, **SPEC)
    assert eps_opt([0.5, 0.5], [0.9, 0.1], [1, 1], **kw) == pytest.approx(382.70361, rel=1e-7)
    assert eps_opt([0.1, 0.9], [0.9, 0.1], [1, 1], **kw) == pytest.approx(389.98657, rel=1e-7)
    both = eps_opt(np.array([[0.5, 0.5], [0.1, 0.9]]), [0.9, 0.1], 1.0, **kw)
    np.testing.assert_allclose(both, [382.70361, 389.98657], rtol=1e-7)
    # Guideline B: a less correlated chain lowers the bound
    assert eps_opt([0.5, 0.5], [0.9, 0.1], 1.0, mixing=0.5, **SPEC) < both[0]
    per_round = eps_opt([0.5, 0.5], [0.9, 0.1], 1.0, T=200, **kw)
    assert per_round == pytest.approx(both[0] / bound_constants(Q=1, mixing=0.95, **SPEC).horizon_sum(200))


def test_opt_quadratic_terms_reproduce_eps_opt():
    pi, q = np.array([0.9, 0.5, 0.1]), np.array([0.5, 0.3, 0.2])
    A, B, C = opt_quadratic_terms(pi, [1.0, 2.0, 0.5], Q=1.0, mixing=0.9, **SPEC)
    assert eps_opt_quadratic(q, pi, A, B, C) == pytest.approx(eps_opt(q, pi, [1.0, 2.0, 0.5], mixing=0.9, **SPEC))
    assert eps_opt_quadratic(np.zeros(3), pi, A, B, C) == np.inf


CASE1 = [  # spec §6.2 case 1: pi = (0.9, 0.9, 0.1, 0.1), A = pi
    (0.0, [0.125, 0.125, 0.375, 0.375], 0.09375, -0.028125),
    (0.0625, [0.25, 0.25, 0.25, 0.25], 0.25, 0.0),
    (0.1, [0.305136, 0.305136, 0.194864, 0.194864], 0.318920, 0.012406),
    (0.2, [0.422429, 0.422429, 0.077571, 0.077571], 0.465536, 0.038797),
    (0.5, [0.5, 0.5, 0, 0], 0.805556, None),
    (1.0, [0.5, 0.5, 0, 0], 1.361111, None),
]
CASE2 = [  # pi = (0.9, 0.9, 0.5, 0.1, 0.1), A = pi
    (0.0, [0.106164, 0.106164, 0.128506, 0.329583, 0.329583], 0.078237),
    (0.05, [0.2] * 5, 0.2),
    (0.2, [0.352964, 0.352964, 0.294071, 0, 0], 0.426581),
    (0.5, [0.430608, 0.430608, 0.138783, 0, 0], 0.795390),
    (1.0, [0.5, 0.5, 0, 0, 0], 1.361111),
]


@pytest.mark.parametrize("B, q, iota, theta", CASE1)
def test_minimizer_case1(B, q, iota, theta):
    pi = np.array([0.9, 0.9, 0.1, 0.1])
    m = minimize_eps_opt(pi, pi, B)
    assert isinstance(m, EpsOptMinimizer)
    np.testing.assert_allclose(m.q, q, atol=1e-6)
    assert m.iota == pytest.approx(iota, abs=1e-6) and m.value == m.iota
    if theta is not None:
        assert m.theta == pytest.approx(theta, abs=1e-6)
    assert eps_opt_quadratic(m.q, pi, pi, B) == pytest.approx(m.iota, rel=1e-9)
    if B >= 9 / 32:
        assert m.support.tolist() == [0, 1]  # Guideline A: exclusion threshold B* = 9/32


@pytest.mark.parametrize("B, q, iota", CASE2)
def test_minimizer_case2(B, q, iota):
    pi = np.array([0.9, 0.9, 0.5, 0.1, 0.1])
    m = minimize_eps_opt(pi, pi, B)
    np.testing.assert_allclose(m.q, q, atol=1e-6)
    assert m.iota == pytest.approx(iota, abs=1e-6)


def test_guideline_a_threshold_b0():
    pi = np.array([0.9, 0.9, 0.1, 0.1])
    b0 = 1.0 * 1.0 * pi.sum() / (2 * 16)  # c sigma^2 Q^2 sum(pi) / (2 N^2) with A = pi
    low, high = minimize_eps_opt(pi, pi, 0.5 * b0), minimize_eps_opt(pi, pi, 2 * b0)
    assert low.theta < 0 and low.q[2] > low.q[0]      # below B0: rare clients get more weight
    assert high.theta > 0 and high.q[2] < high.q[0]   # above B0: frequent clients get more weight


def test_minimizer_matches_cvxpy_on_random_instances():
    rng = np.random.default_rng(0)
    for _ in range(25):
        n = int(rng.integers(2, 8))
        pi = rng.uniform(0.05, 1.0, n)
        A = pi * rng.uniform(0.2, 3.0, n)
        B = float(rng.uniform(0, 2) * rng.choice([0.01, 1.0, 10.0]))
        Q = float(rng.uniform(0.5, 3.0))
        closed, ref = minimize_eps_opt(pi, A, B, Q), minimize_eps_opt_cvxpy(pi, A, B, Q)
        np.testing.assert_allclose(closed.q, ref.q, atol=1e-5 * Q)
        assert closed.q.sum() == pytest.approx(Q)
        assert closed.iota <= ref.iota * (1 + 1e-9) + 1e-12


def test_minimizer_ties_and_validation():
    m = minimize_eps_opt([0.4, 0.4, 0.4], [1.0, 2.0, 4.0], 1.0, Q=2.0)
    np.testing.assert_allclose(m.q * [1.0, 2.0, 4.0], m.q[0])  # constant pi: q_k proportional to 1/A_kk
    with pytest.raises(ValueError, match="A"):
        minimize_eps_opt([0.5, 0.5], [1.0, 0.0], 1.0)
    with pytest.raises(ValueError, match="pi must be positive"):
        minimize_eps_opt([0.5, 0.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="B"):
        minimize_eps_opt([0.5, 0.5], 1.0, -1.0)
    with pytest.raises(ValueError, match="Q"):
        minimize_eps_opt([0.5, 0.5], 1.0, 1.0, Q=0)


def test_total_error_convex_program():
    from scipy.optimize import minimize

    rng = np.random.default_rng(1)
    for _ in range(3):
        n = 4
        alpha, pi = rng.dirichlet(np.ones(n)), rng.uniform(0.1, 1.0, n)
        A, B, k2 = pi * rng.uniform(0.5, 2, n), float(rng.uniform(0, 1)), float(rng.uniform(0.01, 1))
        q = minimize_total_error_cvxpy(alpha, pi, A, B, 0.3, kappa2=k2, gamma=0.5)
        assert q.sum() == pytest.approx(1.0) and np.all(q > 0)  # chi^2 never excludes
        f = lambda z: total_error_objective(np.abs(z) / np.abs(z).sum(), alpha, pi, A, B, 0.3, kappa2=k2, gamma=0.5)
        best = min((minimize(f, rng.dirichlet(np.ones(n)), method="Nelder-Mead",
                             options=dict(xatol=1e-12, fatol=1e-14, maxiter=20000)) for _ in range(4)),
                   key=lambda r: r.fun)
        assert f(q) <= best.fun + 1e-8
    # kappa2 = 0 reduces to the eps_opt minimiser
    pi = np.array([0.9, 0.9, 0.1, 0.1])
    q0 = minimize_total_error_cvxpy(np.full(4, 0.25), pi, pi, 0.5, kappa2=0.0)
    np.testing.assert_allclose(q0, minimize_eps_opt(pi, pi, 0.5).q, atol=1e-5)
    # large kappa2 pushes p towards alpha
    alpha = np.array([0.1, 0.2, 0.3, 0.4])
    q_big = minimize_total_error_cvxpy(alpha, pi, pi, 0.5, kappa2=1e4)
    np.testing.assert_allclose(biased_importance(pi, q_big), alpha, atol=1e-3)


def test_subset_bounds_guidelines():
    alpha = np.full(6, 1 / 6)
    pi = np.array([0.9, 0.9, 0.1, 0.1, 0.1, 0.1])
    lam = np.array([0, 0, 0.9, 0.8, 0, 0])
    sb = subset_bounds(alpha, pi, lam, gamma_prime=0.6, T=200, t_max=10 ** 5)
    assert isinstance(sb, SubsetBounds) and sb.masks.shape == (63, 6)
    assert np.all(sb.tv2[sb.masks.all(1)] == 0)
    small, large = best_subset(sb, 1e-2), best_subset(sb, 1e6)
    assert set(small["excluded"]) >= {2, 3, 4, 5}         # Guideline A at small kappa2
    assert large["excluded"] == [] and large["mixing"] == pytest.approx(0.95)
    middle = best_subset(sb, 1e4)
    assert 2 in middle["excluded"] and middle["total"] == pytest.approx(middle["eps_opt"] + middle["bias"])
    with pytest.raises(TypeError, match="SubsetBounds"):
        best_subset({}, 1.0)
    with pytest.raises(ValueError, match="N must be"):
        subset_bounds(np.full(13, 1 / 13), np.full(13, 0.5), np.zeros(13))


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match=r"pi must lie in \[0, 1\]"):
        biased_importance([0.5, 1.5], [1, 1])
    with pytest.raises(ValueError, match="alpha must sum to 1"):
        unbiased_weights([0.5, 0.6], [0.5, 0.5])
    with pytest.raises(ValueError, match="alpha must be non-negative"):
        chi2_divergence([1.5, -0.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="kappa2"):
        bias_bound([0.5, 0.5], [0.5, 0.5], [1, 1], kappa2=-1, gamma=1)
    with pytest.raises(ValueError, match="kappa2"):
        total_error_objective([0.5, 0.5], [0.5, 0.5], [0.5, 0.5], 1.0, 1.0, kappa2=-0.1)
    with pytest.raises(ValueError, match="kappa2"):
        minimize_total_error_cvxpy([0.5, 0.5], [0.5, 0.5], 1.0, 1.0, kappa2=-1)
    with pytest.raises(ValueError, match="q must be non-negative"):
        biased_importance([0.5, 0.5], [-1, 2])
    with pytest.raises(ValueError, match="pi\\^T q > 0"):
        biased_importance([0.5, 0.5], [0, 0])
    with pytest.raises(ValueError, match="mixing"):
        bound_constants(Q=1.0, mixing=1.0)
    with pytest.raises(ValueError, match="q must have shape"):
        eps_opt([0.5, 0.5, 0.0], [0.5, 0.5], 1.0, mixing=0.9)
