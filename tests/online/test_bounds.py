"""Regret-bound calculators of thesis §4.4 (fedlab.online.bounds) and the checkable facts A5–A7, A10 of the spec."""
import math

import numpy as np
import pytest

from fedlab.online.algorithms import mixture_weight_gradient
from fedlab.online.data import mixture_kl
from fedlab.online.bounds import (em_accuracy, em_sample_requirement, eta_anytime, fem_omd_regret_bound,
                                  fem_omd_regret_bound_eps, gauss_kl, gauss_tv_sup, gauss_tv_sup_upper,
                                  gradient_error_bound, mixture_tv_sup_upper, neg_entropy,
                                  neg_entropy_diameter, omd_inexact_regret_bound, omd_stepsize,
                                  regret_crossover_horizon, separation_required)


def test_omd_inexact_regret_bound_formula():
    # D_R G sqrt(T) + D_X sum_t err_t (Theorem 4.4.3, eq. (4.39))
    assert omd_inexact_regret_bound(100, 2.0, 3.0, 2.0, 0.5) == pytest.approx(2 * 3 * 10 + 2 * 0.5 * 100)
    err = np.linspace(0, 1, 100)
    assert omd_inexact_regret_bound(100, 1.0, 1.0, 2.0, err) == pytest.approx(10 + 2 * err.sum())
    with pytest.raises(ValueError, match="grad_err"):
        omd_inexact_regret_bound(100, 1.0, 1.0, 2.0, np.ones(5))
    with pytest.raises(ValueError, match="grad_err"):
        omd_inexact_regret_bound(10, 1.0, 1.0, 2.0, -1.0)
    with pytest.raises(ValueError, match="horizon"):
        omd_inexact_regret_bound(0, 1.0, 1.0, 2.0, 0.0)


def test_omd_stepsize_and_anytime_schedule():
    assert omd_stepsize(100, 3, 2.0) == pytest.approx(math.sqrt(math.log(3)) / 20)
    assert omd_stepsize(100, 1) == 0.0
    np.testing.assert_allclose(eta_anytime([1, 4], 3, 2.0), 2 * np.sqrt(math.log(3) / np.array([1, 4])))
    assert isinstance(eta_anytime(1, 3), float)
    with pytest.raises(ValueError, match="grad_bound"):
        omd_stepsize(10, 3, 0.0)
    with pytest.raises(ValueError, match="t must be >= 1"):
        eta_anytime(0, 3)
    with pytest.raises(ValueError, match="eta0"):
        eta_anytime(1, 3, -1.0)


def test_fem_omd_regret_bound_and_crossover():
    t = np.array([1.0, 10.0, 100.0])
    np.testing.assert_allclose(fem_omd_regret_bound(t, 3, 30), np.sqrt(t * math.log(3)) + 2 * t / math.sqrt(30))
    # the two terms are equal at the crossover, T = n log(m) / 4 with the default constants (spec A.4: 8.24)
    cross = regret_crossover_horizon(3, 30)
    assert cross == pytest.approx(30 * math.log(3) / 4) and round(cross, 2) == 8.24
    assert math.sqrt(cross * math.log(3)) == pytest.approx(2 * cross / math.sqrt(30))
    assert regret_crossover_horizon(3, 30, c_omd=2.0) == pytest.approx(4 * cross)
    # Theorem 4.4.2's eps form equals the sqrt(n) form when eps = 1/sqrt(n)
    assert fem_omd_regret_bound_eps(50, 3, 1 / math.sqrt(30)) == pytest.approx(fem_omd_regret_bound(50, 3, 30))
    with pytest.raises(ValueError, match="horizon"):
        fem_omd_regret_bound([0.0, 1.0], 3, 30)
    with pytest.raises(ValueError, match="n_samples"):
        fem_omd_regret_bound(10, 3, 0)
    with pytest.raises(ValueError, match="eps"):
        fem_omd_regret_bound_eps(10, 3, -0.1)


def test_em_sample_requirement_and_accuracy_are_inverse():
    n = em_sample_requirement(2, 0.1, 0.1, 3, 200, 3, 0.05)
    assert n == pytest.approx(2 / (0.1 * 0.01) * math.log(9 * 200 * 3 / 0.05) ** 2)
    assert em_accuracy(1000, 2, 0.1, 3, 200, 3, 0.05) == pytest.approx(
        math.sqrt(2 / (0.1 * 1000)) * math.log(9 * 200 * 3 / 0.05))
    eps = em_accuracy(5000, 2, 0.2, 3, 100, 3, 0.1, c2=3.0)
    assert em_sample_requirement(2, eps, 0.2, 3, 100, 3, 0.1, c2=3.0) == pytest.approx(5000)
    with pytest.raises(ValueError, match="beta"):
        em_sample_requirement(2, 0.1, 0.5, 3, 200, 3, 0.05)   # beta must be <= 1/m
    with pytest.raises(ValueError, match="delta"):
        em_accuracy(10, 2, 0.1, 3, 10, 3, 1.0)


def test_separation_required_values():
    # spec A.4 / fact A10
    assert separation_required(3, 0.1) == pytest.approx(236.06, abs=0.01)
    assert separation_required(4, 0.05) == pytest.approx(267.95, abs=0.01)
    assert separation_required(10, 0.01) == pytest.approx(336.42, abs=0.01)
    with pytest.raises(ValueError, match="pi_min"):
        separation_required(3, 0.5)


def test_gradient_error_bound_value_and_validity():
    mu_star = np.array([[6.0, 0.0], [-3.0, 5.2], [-3.0, -5.2]])
    mu = mu_star + np.array([[0.1, 0.0], [0.0, -0.05], [0.05, 0.05]])
    pi_star, pi_tilde, pi = np.array([0.5, 0.3, 0.2]), np.array([0.45, 0.35, 0.2]), np.array([0.3, 0.3, 0.4])
    bound = gradient_error_bound(mu, mu_star, pi_tilde, pi_star)
    assert bound == pytest.approx(1.5 * 0.1 + 0.1)
    assert gradient_error_bound(mu, mu_star, pi_tilde, pi_star, gamma=0.0) == pytest.approx(0.05 + 0.1)
    # (4.27) vs (4.28) by Monte Carlo: pi_j |grad_j - grad~_j| <= bound (Theorem 4.4.4)
    true = mixture_weight_gradient(pi, mu_star, pi_tilde=pi_star, n_mc=200_000, rng=0)[0]
    est = mixture_weight_gradient(pi, mu, pi_tilde=pi_tilde, n_mc=200_000, rng=1)[0]
    assert np.all(pi * np.abs(true - est) <= bound)
    with pytest.raises(ValueError, match="pi_star"):
        gradient_error_bound(mu, mu_star, pi_tilde, np.array([0.5, 0.5, 0.5]))


def test_neg_entropy_and_diameter_lemma_h4():
    # fact A7: sup R(pi) - R(pi') = log m, between a vertex and the uniform vector
    for m in (2, 3, 7):
        vertex, uniform = np.eye(m)[0], np.full(m, 1 / m)
        assert neg_entropy(vertex) == 0.0
        assert neg_entropy(vertex) - neg_entropy(uniform) == pytest.approx(math.log(m))
        assert neg_entropy_diameter(m) ** 2 == pytest.approx(math.log(m))
        rand = np.random.default_rng(m).dirichlet(np.ones(m), size=50)
        assert np.all(neg_entropy(rand) - neg_entropy(uniform) <= math.log(m) + 1e-12)
    np.testing.assert_allclose(neg_entropy(np.array([[0.5, 0.5], [1.0, 0.0]])), [-math.log(2), 0.0])
    with pytest.raises(ValueError, match="simplex"):
        neg_entropy([0.5, 0.6])


def test_gauss_kl_lemma_h7_against_monte_carlo():
    # fact A5: KL(N(mu, I) || N(mu', I)) = ||mu - mu'||^2 / 2
    a, b = np.array([1.0, -2.0, 0.5]), np.array([0.0, 0.5, 1.0])
    assert gauss_kl(a, b) == pytest.approx(np.sum((a - b) ** 2) / 2)
    assert gauss_kl(a, b, variance=2.0) == pytest.approx(np.sum((a - b) ** 2) / 4)
    mc = mixture_kl([1.0], a[None], [1.0], b[None], n_mc=200_000, rng=0)[0]
    assert mc == pytest.approx(gauss_kl(a, b), rel=0.02)
    with pytest.raises(ValueError, match="variance"):
        gauss_kl(a, b, variance=0.0)
    with pytest.raises(ValueError, match="mu2"):
        gauss_kl(a, b[:2])


def test_gauss_tv_values_and_lemma_h8():
    # fact A6: 2 Phi(Delta/2) - 1 <= Delta/2
    for delta, value in [(0.1, 0.0399), (0.5, 0.1974), (1.0, 0.3829), (2.0, 0.6827), (4.0, 0.9545)]:
        a, b = np.zeros(2), np.array([delta, 0.0])
        assert gauss_tv_sup(a, b) == pytest.approx(value, abs=1e-4)
        assert gauss_tv_sup(a, b) <= gauss_tv_sup_upper(a, b) == pytest.approx(delta / 2)
    assert gauss_tv_sup(np.zeros(1), np.ones(1), variance=4.0) == pytest.approx(gauss_tv_sup(np.zeros(1), [0.5]))
    with pytest.raises(ValueError, match="variance"):
        gauss_tv_sup_upper(np.zeros(1), np.ones(1), variance=-1.0)


def test_mixture_tv_upper_lemma_h9_in_one_dimension():
    grid = np.linspace(-15, 15, 60001)
    dx = grid[1] - grid[0]

    def density(pi, mus):
        return sum(p * np.exp(-(grid - mu) ** 2 / 2) / math.sqrt(2 * math.pi) for p, mu in zip(pi, mus))

    rng = np.random.default_rng(0)
    for _ in range(5):
        pi, pi2 = rng.dirichlet(np.ones(3), size=2)
        mus = rng.normal(0, 3, size=(3, 1))
        mus2 = mus + rng.normal(0, 0.5, size=(3, 1))
        tv = 0.5 * np.sum(np.abs(density(pi, mus[:, 0]) - density(pi2, mus2[:, 0]))) * dx
        assert tv <= mixture_tv_sup_upper(pi, mus, pi2, mus2) + 1e-9
    assert mixture_tv_sup_upper([0.5, 0.5], np.zeros((2, 1)), [0.5, 0.5], np.ones((2, 1))) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="pi2"):
        mixture_tv_sup_upper([0.5, 0.5], np.zeros((2, 1)), [0.5, 0.6], np.ones((2, 1)))


def test_pinsker_lemma_h6_for_gaussians_and_discrete_laws():
    rng = np.random.default_rng(1)
    for _ in range(20):
        a, b = rng.normal(size=(2, 3))
        assert gauss_tv_sup(a, b) ** 2 <= gauss_kl(a, b) / 2 + 1e-12
    for _ in range(100):
        p, q = rng.dirichlet(np.ones(4), size=2)
        assert (0.5 * np.abs(p - q).sum()) ** 2 <= np.sum(p * np.log(p / q)) / 2 + 1e-12
