"""Tracking-bound calculators of Dynamic FL (fedlab.dynamic.bounds) against independent computations."""
import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from fedlab.dynamic.algorithms import NoisyGradientTracking, msd_curves
from fedlab.dynamic.bounds import (dfl_contraction, dfl_msd_approx, dfl_msd_bound, dfl_msd_terms, dfl_opt_msd,
                                   dfl_opt_mu, dfl_transient, lemma1_constants, ls_lemma1_constants,
                                   ls_msd_prediction, ls_noise_at_opt, scalar_quadratic_msd, tau_eps, tau_s)
from fedlab.dynamic.data import make_drifting_least_squares
from fedlab.engine import run

ARGS = (1.0, 2.0, 0.5, 1.0, 0.2)  # nu, delta, beta_s2, sigma_s2, eps2


# ---------------------------------------------------------------- tau factors (C1) by brute force

def _var_of_mean_without_replacement(values, size):
    """Exact variance of the mean of `size` draws without replacement, enumerating all subsets."""
    means = [np.mean(s) for s in itertools.combinations(values, size)]
    return float(np.var(means))


def test_tau_s_is_the_without_replacement_variance_factor():
    rng = np.random.default_rng(0)
    values = rng.normal(size=7)
    pop_var = float(np.var(values))
    for b in (1, 2, 3, 7):
        assert _var_of_mean_without_replacement(values, b) == pytest.approx(tau_s(7, b, 1) * pop_var, rel=1e-12)
    assert tau_s(100, 10, 2) == pytest.approx(0.0454545, abs=1e-7)          # spec test vector
    assert tau_s(50, 50, 3) == 0.0                                           # full batch (C1)
    assert tau_s(np.inf, 10, 2) == pytest.approx(1 / 20)                     # fresh samples
    assert np.allclose(tau_s([10, 20], [5, 5], [1, 2]), [5 / 45, 15 / 190])


def test_tau_eps_matches_the_participation_variance():
    rng = np.random.default_rng(1)
    g = rng.normal(size=6)
    g -= g.mean()                                                            # agents' gradients around their mean
    for n_active in range(1, 7):
        exact = _var_of_mean_without_replacement(g, n_active)
        assert exact == pytest.approx(tau_eps(6, n_active) / n_active * np.mean(g ** 2), abs=1e-12)
    assert tau_eps(20, 7) == pytest.approx(13 / 19)                          # C1
    assert tau_eps(20, 20) == 0.0 and tau_eps(20, 1) == 1.0 and tau_eps(1, 1) == 0.0


@pytest.mark.parametrize("n_active", [0, 21, -1])
def test_agents_per_round_outside_range_raise(n_active):
    with pytest.raises(ValueError, match=r"\[1, K\]"):
        tau_eps(20, n_active)


def test_tau_s_bad_inputs():
    with pytest.raises(ValueError, match="batch must not exceed"):
        tau_s(5, 6, 1)
    with pytest.raises(ValueError, match=">= 1"):
        tau_s(5, 0, 1)


# ---------------------------------------------------------------- Lemma 1 (C2)

def test_lemma1_constants_follow_24_to_26_exactly():
    rng = np.random.default_rng(2)
    k, n_active, delta = 5, 2, 1.5
    ts, dv, gn = rng.random(k), rng.random(k), rng.random(k)
    te = tau_eps(k, n_active)
    b2, s2, e2 = lemma1_constants(delta, ts, te, dv, gn, k, n_active)
    b2_loop = sum((6 * ts[i] + 2 * te) * delta ** 2 for i in range(k)) / (k * n_active)
    s2_loop = 3 * sum(ts[i] * dv[i] for i in range(k)) / (k * n_active)
    e2_loop = 2 * sum(te ** 2 * gn[i] for i in range(k)) / (k * n_active)      # tau_eps squared here only
    assert (b2, s2, e2) == pytest.approx((b2_loop, s2_loop, e2_loop), rel=1e-12)


def test_lemma1_rejects_negative_variances():
    with pytest.raises(ValueError, match="non-negative"):
        lemma1_constants(1.0, [0.1, 0.1], 0.0, [-1.0, 1.0], [1.0, 1.0], 2, 2)


# ---------------------------------------------------------------- the bound (C8), mu*, transient

def test_msd_bound_test_vector_and_infinity():
    assert dfl_msd_bound(0.05, 1, 2, 0.5, 1, 0.2, 1e-4) == pytest.approx(0.0349296, abs=1e-7)
    mu_max = 2 * 1 / (2 ** 2 + 0.5)
    assert dfl_msd_bound(mu_max, 1, 2, 0.5, 1, 0.2, 1e-4) == math.inf
    assert dfl_msd_bound(1.5 * mu_max, 1, 2, 0.5, 1, 0.2, 1e-4) == math.inf
    assert np.isfinite(dfl_msd_bound(0.99 * mu_max, 1, 2, 0.5, 1, 0.2, 1e-4))
    terms = dfl_msd_terms(0.05, *ARGS, 1e-4)
    assert sum(terms.values()) == pytest.approx(dfl_msd_bound(0.05, *ARGS, 1e-4))
    assert dfl_contraction(0.05, 1, 2, 0.5) == pytest.approx(1 - 0.1 + 0.0025 * 4.5)


def test_msd_bound_is_u_shaped_with_drift_and_monotone_without():
    mus = np.geomspace(1e-4, 0.4, 200)
    with_drift = np.asarray(dfl_msd_bound(mus, *ARGS, 1e-4))
    i = int(np.argmin(with_drift))
    assert 0 < i < len(mus) - 1
    assert np.all(np.diff(with_drift[:i]) < 0) and np.all(np.diff(with_drift[i:]) > 0)
    assert np.all(np.diff(np.asarray(dfl_msd_bound(mus, *ARGS, 0.0))) > 0)


@pytest.mark.parametrize("sigma_q2", [1e-6, 1e-4, 1e-2, 0.3])
def test_opt_mu_closed_form_matches_numeric_minimisation(sigma_q2):
    mu_max = 2 * ARGS[0] / (ARGS[1] ** 2 + ARGS[2])
    res = minimize_scalar(lambda m: dfl_msd_bound(m, *ARGS, sigma_q2), bounds=(1e-9, mu_max * (1 - 1e-9)),
                          method="bounded", options={"xatol": 1e-12})
    assert dfl_opt_mu(*ARGS, sigma_q2) == pytest.approx(res.x, rel=1e-5)
    assert dfl_opt_msd(*ARGS, sigma_q2) == pytest.approx(res.fun, rel=1e-8)


def test_opt_mu_small_drift_approximations():
    s = 1e-8
    a = ARGS[3] + ARGS[4]
    assert dfl_opt_mu(*ARGS, s, exact=False) == pytest.approx(math.sqrt(s / a))
    assert dfl_opt_mu(*ARGS, s) == pytest.approx(math.sqrt(s / a), rel=1e-3)
    assert dfl_opt_msd(*ARGS, s) == pytest.approx(math.sqrt(s * a) / ARGS[0], rel=1e-3)
    assert dfl_opt_mu(*ARGS, 0.0) == 0.0
    assert dfl_opt_mu(1.0, 2.0, 0.5, 0.0, 0.0, 1e-3) == pytest.approx(1.0 / 4.5)  # no gradient noise: nu / b


def test_msd_approx_is_the_small_mu_limit():
    mu = 1e-4
    assert dfl_msd_approx(mu, 1.0, 1.0, 0.2, 1e-6) == pytest.approx(dfl_msd_bound(mu, *ARGS, 1e-6), rel=1e-3)


def test_transient_interpolates_between_e0_and_the_floor():
    floor = dfl_msd_bound(0.05, *ARGS, 1e-4)
    vals = np.asarray(dfl_transient(np.arange(0, 400, 5), 1.0, 0.05, *ARGS, 1e-4))
    assert vals[0] == pytest.approx(1.0) and vals[-1] == pytest.approx(floor, rel=1e-3)
    assert np.all(np.diff(vals) <= 0) and vals[1] < vals[0]
    assert np.all(np.isinf(dfl_transient([1, 2], 1.0, 10.0, *ARGS, 1e-4)))


@pytest.mark.parametrize("bad", [0.0, -0.1])
def test_step_sizes_must_be_positive(bad):
    with pytest.raises(ValueError, match="lr"):
        dfl_msd_bound(bad, *ARGS, 1e-4)
    with pytest.raises(ValueError, match="lr"):
        scalar_quadratic_msd(bad, 1.0, 1.0, 0.0)


@pytest.mark.parametrize("name,pos", [("beta_s2", 3), ("sigma_s2", 4), ("eps2", 5), ("sigma_q2", 6)])
def test_negative_variances_raise(name, pos):
    args = [0.05, 1.0, 2.0, 0.5, 1.0, 0.2, 1e-4]
    args[pos] = -1e-3
    with pytest.raises(ValueError, match=name):
        dfl_msd_bound(*args)


# ---------------------------------------------------------------- C3: scalar quadratic recursion

@pytest.mark.parametrize("mu,q2", [(0.1, 0.0), (0.1, 1e-3), (0.03, 1e-3)])
def test_scalar_quadratic_steady_state_matches_simulation_within_5_percent(mu, q2):
    _, history = run(NoisyGradientTracking(mu, 1.0, 1.0, q2, n_iters=3000, dim=2, n_runs=400), None, rounds=3000,
                     seed=0, progress=False)
    sim = msd_curves(history)[:, 1000:].mean()
    assert sim == pytest.approx(scalar_quadratic_msd(mu, 1.0, 1.0, q2), rel=0.05)


def test_scalar_quadratic_argmin_is_near_sqrt_ratio():
    mus = np.geomspace(0.005, 0.2, 2000)
    assert mus[np.argmin(scalar_quadratic_msd(mus, 1.0, 1.0, 1e-3))] == pytest.approx(0.03135, rel=0.01)


# ---------------------------------------------------------------- least-squares noise S (independent Monte Carlo)

def test_ls_noise_at_opt_matches_monte_carlo_of_the_aggregate_gradient():
    problem = make_drifting_least_squares(8, 3, offset_var=0.5, noise_std=0.4, rng=3)
    batch = np.array([2, 3, 4, 2, 5, 3, 2, 4])
    n_active = 3
    rng = np.random.default_rng(4)
    w_opt = problem.optimum(problem.w_start)
    targets = problem.agent_optima(problem.w_start)
    n = 40_000
    total = np.zeros((n, problem.dim))
    chosen = np.argsort(rng.random((n, problem.n_agents)), axis=1)[:, :n_active]
    for slot in range(n_active):
        k = chosen[:, slot]
        b = batch[k]
        bmax = batch.max()
        h = rng.standard_normal((n, bmax, problem.dim)) * np.sqrt(problem.feature_var[k])[:, None, None]
        y = np.einsum("nbd,nd->nb", h, targets[k]) + problem.noise_std * rng.standard_normal((n, bmax))
        mask = (np.arange(bmax)[None] < b[:, None]) / b[:, None]
        res = np.einsum("nbd,d->nb", h, w_opt) - y
        total += np.einsum("nb,nbd->nd", res * mask, h)
    grad = total / n_active                                            # s_i at w^o (the aggregate gradient is 0)
    mc = float(np.mean(np.sum(grad ** 2, -1)))
    exact = ls_noise_at_opt(problem.feature_var, problem.offsets, batch, n_active, problem.noise_std)
    assert mc == pytest.approx(exact, rel=0.03)


def test_ls_constants_and_prediction():
    problem = make_drifting_least_squares(rng=0)
    c = ls_lemma1_constants(problem.feature_var, problem.offsets, 10, 7, problem.noise_std, 2)
    assert c["strong_nu"] == pytest.approx(problem.feature_var.mean())
    assert c["delta_q2"] == pytest.approx(np.max(problem.feature_var ** 2 * 4))
    s = ls_noise_at_opt(problem.feature_var, problem.offsets, 10, 7, problem.noise_std, 2)
    assert 0 < s < c["sigma_s2"] + c["eps2"]                                # Lemma 1 over-estimates the noise
    pred = ls_msd_prediction([0.01, 0.1], problem.feature_var, s, 1e-4)
    assert np.all(np.asarray(pred) <= dfl_msd_bound(np.array([0.01, 0.1]), c["strong_nu"], c["delta"], c["beta_s2"],
                                                     c["sigma_s2"], c["eps2"], 1e-4))
    with pytest.raises(ValueError, match="positive variances"):
        ls_noise_at_opt([1.0, -1.0], np.zeros((2, 2)), 1, 1, 0.1)
    with pytest.raises(ValueError, match=r"\[1, K\]"):
        ls_noise_at_opt(problem.feature_var, problem.offsets, 10, 21, 0.5)
