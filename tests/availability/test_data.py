"""Two-state availability chains, populations, traces and estimators (fedlab.availability.data)."""
import numpy as np
import pytest

from fedlab.availability.data import (LAYOUTS, AvailabilityEstimator, MarkovAvailability,
                                      estimate_availability, hitting_time, lambda_bounds,
                                      make_clustered_population, make_population, mean_sojourn_times,
                                      mixing_parameter, product_chain, second_eigenvalue_modulus,
                                      simulate_availability, stationary_distribution, trace_participation,
                                      two_state_matrix)
from fedlab.availability.data import check_priors, check_trace

# spec §6.2: (pi, lambda_2) -> P, stationary law, lambda(P)
CHAINS = [
    ((0.9, 0.9), [[0.91, 0.09], [0.01, 0.99]], [0.1, 0.9], 0.95),
    ((0.1, 0.9), [[0.99, 0.01], [0.09, 0.91]], [0.9, 0.1], 0.95),
    ((0.9, 0.0), [[0.1, 0.9], [0.1, 0.9]], [0.1, 0.9], 0.5),
    ((0.1, -0.01), [[0.899, 0.101], [0.909, 0.091]], [0.9, 0.1], 0.505),
    ((0.5, 0.5), [[0.75, 0.25], [0.25, 0.75]], [0.5, 0.5], 0.75),
    ((0.9, -0.1), [[0.01, 0.99], [0.11, 0.89]], [0.1, 0.9], 0.55),
]


@pytest.mark.parametrize("args, P, rho, mix", CHAINS)
def test_two_state_table(args, P, rho, mix):
    M = two_state_matrix(*args)
    np.testing.assert_allclose(M, P, atol=1e-12)
    np.testing.assert_allclose(stationary_distribution(M), rho, atol=1e-12)
    assert mixing_parameter(M) == pytest.approx(mix, abs=1e-12)


def test_thesis_example_and_hitting_time():
    np.testing.assert_allclose(two_state_matrix(0.1, 0.9), [[0.99, 0.01], [0.09, 0.91]], atol=1e-12)
    assert np.max(hitting_time([0.1, 0.9, 0.1], [0.9, 0.0, 0.0])) == pytest.approx(100.0)


def test_against_numpy_eigendecomposition():
    rng = np.random.default_rng(0)
    pi = rng.uniform(0.05, 0.95, 20)
    low, _ = lambda_bounds(pi)
    lam = rng.uniform(low, 0.99)
    P = two_state_matrix(pi, lam)
    assert P.shape == (20, 2, 2)
    for k in range(20):
        vals, vecs = np.linalg.eig(P[k].T)
        i = np.argmin(np.abs(vals - 1))
        rho = np.real(vecs[:, i]) / np.real(vecs[:, i]).sum()
        np.testing.assert_allclose(stationary_distribution(P[k]), rho, atol=1e-10)
        np.testing.assert_allclose(rho, [1 - pi[k], pi[k]], atol=1e-10)
        assert np.sort(np.real(vals))[0] == pytest.approx(lam[k], abs=1e-10)
        assert second_eigenvalue_modulus(P[k]) == pytest.approx(abs(lam[k]), abs=1e-10)
    np.testing.assert_allclose(stationary_distribution(P)[:, 1], pi, atol=1e-10)
    np.testing.assert_allclose(second_eigenvalue_modulus(P), np.abs(lam), atol=1e-10)


def test_powers_converge_geometrically():
    P = two_state_matrix(0.9, 0.9)
    rho = stationary_distribution(P)
    for t in range(1, 21):
        gap = np.abs(np.linalg.matrix_power(P, t) - rho[None]).max()
        assert gap == pytest.approx(0.9 * 0.9 ** t, rel=1e-9)


def test_product_chain_prop_d27():
    mats = [two_state_matrix(0.9, 0.0), two_state_matrix(0.1, 0.9), two_state_matrix(0.5, -0.3)]
    P = product_chain(mats)
    assert P.shape == (8, 8)
    assert second_eigenvalue_modulus(P) == pytest.approx(0.9, abs=1e-10)
    assert mixing_parameter(P) == pytest.approx(0.95, abs=1e-10)
    np.testing.assert_allclose(stationary_distribution(P), np.kron(np.kron([0.1, 0.9], [0.9, 0.1]), [0.5, 0.5]),
                               atol=1e-12)
    assert mixing_parameter(P) == pytest.approx(max(mixing_parameter(m) for m in mats))


def test_invalid_chains_raise():
    with pytest.raises(ValueError, match="lam"):
        two_state_matrix(0.9, -0.12)
    with pytest.raises(ValueError, match=r"pi must lie in \[0, 1\]"):
        two_state_matrix(1.2, 0.0)
    with pytest.raises(ValueError, match="pi"):
        simulate_availability([-0.1], [0.0], 5)
    with pytest.raises(ValueError, match="row-stochastic"):
        stationary_distribution([[0.5, 0.6], [0.5, 0.5]])
    with pytest.raises(ValueError, match="square"):
        second_eigenvalue_modulus(np.ones((2, 3)) / 3)
    with pytest.raises(ValueError, match="at least one"):
        product_chain([])
    with pytest.raises(ValueError, match="4096"):
        product_chain([two_state_matrix(0.5, 0.0)] * 13)


def test_lambda_bounds_and_sojourn_times():
    low, high = lambda_bounds([0.9, 0.5, 0.1])
    np.testing.assert_allclose(low, [-1 / 9, -1.0, -1 / 9])
    np.testing.assert_allclose(high, 1.0)
    active, inactive = mean_sojourn_times(0.1, 0.9)
    assert active == pytest.approx(1 / 0.09) and inactive == pytest.approx(100.0)


def test_simulation_is_stationary_and_reproducible():
    pi, lam = np.array([0.9, 0.1, 0.5]), np.array([0.0, 0.9, -0.5])
    a = simulate_availability(pi, lam, 50, rng=3)
    b = simulate_availability(pi, lam, 50, rng=3)
    assert a.dtype == bool and a.shape == (50, 3) and np.array_equal(a, b)
    # stationary start: the law of the state at round 0 is pi, at every round
    many = np.array([simulate_availability(pi, lam, 3, rng=s) for s in range(4000)])
    np.testing.assert_allclose(many.mean(0), np.broadcast_to(pi, (3, 3)), atol=0.03)
    assert simulate_availability(pi, lam, 0, rng=0).shape == (0, 3)


def _former_simulation(pi, lam, rounds, rng, initial=None):
    """The chapter's sampler before the shared one (fedlab.markov.sample_chains), round by round."""
    u = np.random.default_rng(rng).random((rounds + 1, len(pi)))
    state = u[0] < pi if initial is None else np.asarray(initial)
    trace = np.empty((rounds, len(pi)), dtype=bool)
    for t in range(rounds):
        trace[t] = state
        state = u[t + 1] < np.where(state, lam + (1 - lam) * pi, (1 - lam) * pi)
    return trace


@pytest.mark.parametrize("seed", range(5))
def test_draws_equal_the_former_sampler(seed):
    pi, lam = np.array([0.1, 0.5, 0.9, 0.3, 1.0]), np.array([0.0, 0.9, -0.05, 0.5, 0.7])
    assert np.array_equal(simulate_availability(pi, lam, 300, rng=seed), _former_simulation(pi, lam, 300, seed))
    initial = [True, False, True, False, True]
    assert np.array_equal(simulate_availability(pi, lam, 40, rng=seed, initial=initial),
                          _former_simulation(pi, lam, 40, seed, initial))


def test_initial_state_and_clusters():
    trace = simulate_availability([0.5, 0.5], [0.99, 0.99], 4, rng=0, initial=[True, False], clusters=[0, 0, 1])
    assert trace.shape == (4, 3)
    assert trace[0].tolist() == [True, True, False]
    assert np.array_equal(trace[:, 0], trace[:, 1])
    with pytest.raises(ValueError, match="clusters"):
        simulate_availability([0.5], [0.0], 3, clusters=[0, 1])


def test_estimators_match_hand_count():
    states = np.array([1, 1, 0, 0, 0, 1, 1, 1, 0, 1], dtype=bool)[:, None]
    est = estimate_availability(states)
    assert est.pi_hat[0] == pytest.approx(7 / 12)
    np.testing.assert_array_equal(est.transitions[0], [[2, 2], [2, 3]])
    P = est.transition_hat[0]
    assert P[0, 1] == pytest.approx(0.5) and P[1, 0] == pytest.approx(3 / 7)
    assert est.lambda_hat[0] == pytest.approx(1 / 14)
    online = AvailabilityEstimator.empty(1)
    for s in states:
        online = online.observe(s)
    np.testing.assert_allclose(online.transitions, est.transitions)
    assert online.t == 10 and online.pi_hat[0] == pytest.approx(7 / 12)
    # observe_trace continues from the last state
    split = estimate_availability(states[:4]).observe_trace(states[4:])
    np.testing.assert_allclose(split.transitions, est.transitions)


def test_empty_estimator_is_prior_mean():
    est = AvailabilityEstimator.empty(3, prior=(2, 6))
    np.testing.assert_allclose(est.pi_hat, 0.25)
    np.testing.assert_allclose(est.lambda_hat, 0.0)
    assert est.observe_trace(np.zeros((0, 3), bool)) is est
    with pytest.raises(ValueError, match="mask"):
        est.observe(np.ones(4, bool))
    with pytest.raises(ValueError, match="trace"):
        est.observe_trace(np.ones((3, 4), bool))
    with pytest.raises(ValueError, match="positive sums"):
        AvailabilityEstimator.empty(2, prior=(0, 0))


def test_estimators_converge_on_long_traces():
    pop = make_population(12, layout="thesis4", rng=1)
    short = estimate_availability(pop.simulate(500, rng=2))
    long = estimate_availability(pop.simulate(60000, rng=2))
    err = lambda e: (np.abs(e.pi_hat - pop.client_pi).mean(), np.abs(e.lambda_hat - pop.client_lambda).mean())
    pi_long, lam_long = err(long)
    assert pi_long < 0.01 and lam_long < 0.01
    assert max(err(short)) > max(pi_long, lam_long)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_make_population_layouts(layout):
    pop = make_population(24, layout=layout, rng=0)
    assert isinstance(pop, MarkovAvailability) and pop.n_clients == 24
    spec = LAYOUTS[layout]
    assert pop.group_names == tuple(s[0] for s in spec)
    counts = np.bincount(pop.group, minlength=len(spec))
    np.testing.assert_array_equal(counts, [round(24 * s[1]) for s in spec])
    for g, (_, _, cls, corr) in enumerate(spec):
        members = pop.group == g
        np.testing.assert_allclose(pop.client_pi[members], 0.5 + 0.4 * cls)
        if corr:
            np.testing.assert_allclose(pop.client_lambda[members], 0.9)
        else:
            assert np.all(np.abs(pop.client_lambda[members]) < 0.05)
    assert pop.transition_matrices().shape == (24, 2, 2)
    np.testing.assert_allclose(pop.mixing(), (np.abs(pop.client_lambda) + 1) / 2)
    assert pop.group_mask(pop.group_names[0]).sum() == counts[0]


def test_make_population_validation_and_blocks():
    pop = make_population(10, shuffle=False, rng=0)
    assert np.all(np.diff(pop.group) >= 0)
    with pytest.raises(ValueError, match="layout"):
        make_population(10, layout="five")
    with pytest.raises(ValueError, match="g must"):
        make_population(10, g=0.6)
    with pytest.raises(TypeError, match="n_clients"):
        make_population(2.5)


@pytest.mark.parametrize("layout, groups", [("code3", 3), ("thesis4", 4)])
def test_a_population_has_a_client_in_every_group(layout, groups):
    assert len(np.unique(make_population(groups, layout=layout, rng=0).group)) == groups
    with pytest.raises(ValueError, match=f"n_clients must be at least the {groups} groups"):
        make_population(groups - 1, layout=layout, rng=0)  # was a message about group_names, never passed


def test_clustered_population_shares_chains():
    pop = make_clustered_population(3, [0.9, 0.1], [0.0, 0.9])
    assert pop.n_clients == 6
    trace = pop.simulate(100, rng=0)
    assert np.array_equal(trace[:, 0], trace[:, 2]) and np.array_equal(trace[:, 3], trace[:, 5])
    np.testing.assert_allclose(pop.client_pi, [0.9] * 3 + [0.1] * 3)
    with pytest.raises(ValueError, match="group"):
        MarkovAvailability(np.array([0.5]), np.array([0.0]), np.array([0, 0]), np.array([0]))


def test_trace_participation():
    trace = np.array([[True, False], [False, True]])
    part = trace_participation(trace)
    assert part(1, None).tolist() == [False, True]
    with pytest.raises(IndexError, match="outside"):
        part(2, None)
    with pytest.raises(ValueError, match="boolean"):
        trace_participation(np.ones((2, 2)))


def test_check_priors_and_trace():
    assert check_priors((1, 2)) == ((1.0, 2.0), ((1.0, 1.0), (1.0, 1.0)))
    with pytest.raises(ValueError, match="positive sums"):
        check_priors((0.0, 0.0))
    with pytest.raises(ValueError, match="prior must be non-negative"):
        check_priors((-1.0, 2.0))
    with pytest.raises(ValueError, match=r"row_prior must have shape \(2, 2\)"):
        check_priors((1.0, 1.0), (1.0, 1.0))
    assert check_trace([[1, 0], [0, 0]]).dtype == bool
    assert check_trace(np.zeros((0, 3), bool), nonempty=False).shape == (0, 3)
    for bad in ([[0.5, 1.0]], [[2, 0]], [1, 0], np.zeros((0, 3), bool), np.zeros((2, 0), bool)):
        with pytest.raises(ValueError, match="mask must be a bool array"):
            check_trace(bad, name="mask")
