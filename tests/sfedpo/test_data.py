"""Temporal shifts: state spaces, Markov chains, limited buffers, prediction oracles (fedlab.sfedpo.data)."""
import dataclasses

import numpy as np
import pytest

from fedlab.sfedpo.data import (BUFFER_RULES, DISCREPANCIES, ORACLES, SCENARIOS, BufferBank, PredictionOracle,
                                StateSpace, TemporalShiftDataset, availability_probabilities, bayes_oracle,
                                lazy_transition, make_state_distributions, make_state_space,
                                make_temporal_shift, oracle_error, perturb_oracle, round_state_distribution,
                                shift_persistence, simulate_states, state_discrepancy,
                                stationary_distribution)


def small(**kw):
    args = dict(n_clients=5, n_states=4, n_classes=3, dim=4, n_rounds=4, n_steps=3, capacity=12,
                concentrations=(0.1, 100.0), test_per_client=10, test_per_state=10, seed=0)
    args.update(kw)
    return make_temporal_shift(**args)


# ------------------------------------------------------------------------------------ states

@pytest.mark.parametrize("kind", sorted(DISCREPANCIES))
def test_every_discrepancy_is_zero_for_uniform_and_largest_for_one_hot(kind):
    p = np.array([[1 / 3, 1 / 3, 1 / 3], [0.5, 0.3, 0.2], [1.0, 0.0, 0.0]])
    d = state_discrepancy(p, kind, normalize=False)
    assert d[0] == pytest.approx(0, abs=1e-12)
    assert d[0] < d[1] < d[2]
    assert state_discrepancy(p, kind).max() == pytest.approx(1.0)


def test_kl_discrepancy_value_and_errors():
    assert state_discrepancy([[1.0, 0.0]], "kl", normalize=False)[0] == pytest.approx(np.log(2))
    with pytest.raises(ValueError, match="kind"):
        state_discrepancy([[0.5, 0.5]], "hellinger")
    with pytest.raises(ValueError, match="sum to 1"):
        state_discrepancy([[0.5, 0.6]])


def test_state_space_clusters_and_samples():
    space = make_state_space(6, 4, 3, concentrations=(0.05, 100.0), feature_shift=0.5, rng=0)
    assert space.n_states == 6 and space.n_classes == 4 and space.dim == 3
    assert space.cluster.tolist() == [0, 0, 0, 1, 1, 1]
    assert np.allclose(space.class_dist.sum(1), 1)
    d = space.discrepancy()
    assert d[:3].min() > d[3:].max()  # concentration 0.05 is far more skewed than 100
    x, y = space.sample(2, 50, np.random.default_rng(1))
    assert x.shape == (50, 3) and x.dtype == np.float32 and y.dtype == np.int64
    x2, y2 = space.sample(2, 20, np.random.default_rng(1))
    assert np.array_equal(x[:20], x2) and np.array_equal(y[:20], y2)  # prefix-consistent
    xm, ym, sm = space.sample_mixture(np.full(6, 1 / 6), 30, rng=0)
    assert xm.shape == (30, 3) and set(sm) <= set(range(6))


def test_mixture_accuracy_is_largest_for_the_test_mixture():
    space = make_state_space(4, 3, 2, concentrations=(0.05, 100.0), sep=1.5, rng=3)
    w = np.full(4, 0.25)
    skewed = np.array([0.85, 0.05, 0.05, 0.05])
    bayes = space.mixture_accuracy(w, n_samples=20000, rng=0)
    assert 1 / 3 < bayes <= 1
    assert space.mixture_accuracy(skewed, w, n_samples=20000, rng=0) < bayes   # training on the wrong mixture
    with pytest.raises(ValueError, match="train_weights"):
        space.mixture_accuracy([0.5, 0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="noise"):
        dataclasses.replace(space, noise=0.0).mixture_accuracy(w)


def test_state_space_errors():
    with pytest.raises(ValueError, match="concentrations"):
        make_state_space(2, 3, 2, concentrations=(0.1, 1.0, 10.0))
    with pytest.raises(ValueError, match="means"):
        StateSpace(np.full((2, 3), 1 / 3), np.zeros((2, 4)), np.zeros((2, 4)))
    space = make_state_space(2, 3, 2, concentrations=(1.0,), rng=0)
    with pytest.raises(ValueError, match="state"):
        space.sample(5, 3)
    with pytest.raises(ValueError, match="sum to 1"):
        space.sample_mixture([0.2, 0.2], 3)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_scenario_gives_state_distributions(scenario):
    cluster = np.array([0, 0, 1, 1, 2, 2])
    pi = make_state_distributions(8, 6, scenario, cluster=cluster, states_per_client=2, rng=0)
    assert pi.shape == (8, 6) and np.allclose(pi.sum(1), 1) and (pi >= 0).all()
    if scenario == "full":
        assert (pi > 0).all()
    else:
        assert ((pi > 0).sum(1) == 2).all()
        assert (pi[:4, 4:] == 0).all()  # the first half draws from the heavy clusters 0, 1 (states 0-3) only


def test_state_distribution_and_availability_errors():
    with pytest.raises(ValueError, match="scenario"):
        make_state_distributions(3, 4, "some")
    with pytest.raises(ValueError, match="heavy_fraction"):
        make_state_distributions(3, 4, heavy_fraction=2.0)
    q = availability_probabilities(200, 0.2, 0.01, rng=0)
    assert q.min() >= 0.01 and abs(q.mean() - 0.2) < 0.01
    assert np.all(availability_probabilities(3, 0.5, 0.0) == 0.5)
    with pytest.raises(ValueError, match="mean"):
        availability_probabilities(3, 0.0)


# ------------------------------------------------------------------------------------ chains

def test_lazy_chain_is_stochastic_with_stationary_pi():
    pi = np.array([0.5, 0.3, 0.2])
    for speed in (0.0, 0.3, 1.0):
        P = lazy_transition(pi, speed)
        assert np.allclose(P.sum(1), 1) and np.allclose(pi @ P, pi)
    assert np.allclose(lazy_transition(pi, 0.0), np.eye(3))
    assert np.allclose(stationary_distribution(lazy_transition(pi, 0.4)), pi)
    assert lazy_transition(np.tile(pi, (2, 1)), 0.5).shape == (2, 3, 3)
    with pytest.raises(ValueError, match="speed"):
        lazy_transition(pi, 1.5)
    with pytest.raises(ValueError, match="square"):
        stationary_distribution(np.full((2, 3), 1 / 3))


def test_shift_persistence_and_round_distribution():
    assert shift_persistence(1.0, 5) == 0.0 and shift_persistence(0.0, 5) == 1.0
    assert shift_persistence(0.5, 5) == pytest.approx(0.19375)  # the form of gamma_n
    pi = np.array([[0.5, 0.5], [0.2, 0.8]])
    out = round_state_distribution(pi, 0.5, [0, 1], 5)
    assert np.allclose(out.sum(1), 1)
    # equals the average of the chain's marginals over the T steps of the round
    P = lazy_transition(pi[0], 0.5)
    marg = np.mean([np.linalg.matrix_power(P, t)[0] for t in range(1, 6)], axis=0)
    assert np.allclose(out[0], marg)
    assert np.allclose(round_state_distribution(pi, 1.0, [0, 1], 5), pi)
    with pytest.raises(ValueError, match="start"):
        round_state_distribution(pi, 0.5, [0, 3], 5)


def test_simulate_states_speeds_and_transitions():
    pi = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    frozen = simulate_states(pi, 50, speed=0.0, rng=0)
    assert frozen.shape == (2, 51) and (frozen == frozen[:, :1]).all()
    iid = simulate_states(pi, 20000, speed=1.0, rng=1)
    freq = np.stack([np.bincount(r, minlength=3) / r.size for r in iid])
    assert np.abs(freq - pi).max() < 0.02
    slow = simulate_states(pi, 20000, speed=0.1, rng=2)
    # a redraw (probability 0.1) changes the state with probability 1 - sum_m pi_m^2
    expected = 0.1 * np.mean(1 - (pi ** 2).sum(1))
    assert (np.diff(slow, axis=1) != 0).mean() == pytest.approx(expected, rel=0.1)
    P = lazy_transition(pi, 0.5)
    explicit = simulate_states(pi, 20000, transitions=P, rng=3)
    freq = np.stack([np.bincount(r, minlength=3) / r.size for r in explicit])
    assert np.abs(freq - pi).max() < 0.03
    with pytest.raises(ValueError, match="transitions"):
        simulate_states(pi, 3, transitions=np.ones((2, 3, 3)))


def _former_states(pi, s, speed, transitions, rng):
    """The chapter's sampler before the shared one (fedlab.markov.sample_chains), step by step."""
    rng = np.random.default_rng(rng)
    n, m = pi.shape
    cdf = np.cumsum(pi, axis=1)
    cdf[:, -1] = 1.0
    draw = lambda u: np.minimum((u[:, None] >= cdf).sum(-1), m - 1)  # noqa: E731
    out = np.empty((n, s + 1), dtype=np.int64)
    out[:, 0] = draw(rng.random((n, 1))[:, 0])
    if transitions is None:
        redraw = rng.random((n, s)) < speed
        cand = rng.random((n, s))
        for i in range(s):
            out[:, i + 1] = np.where(redraw[:, i], draw(cand[:, i]), out[:, i])
        return out
    u = rng.random((n, s))
    cum = np.cumsum(transitions, axis=-1)
    cum[..., -1] = 1.0
    for i in range(s):
        out[:, i + 1] = np.minimum((u[:, i:i + 1] >= cum[np.arange(n), out[:, i]]).sum(1), m - 1)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_draws_equal_the_former_sampler(seed):
    gen = np.random.default_rng(100 + seed)
    pi = gen.dirichlet(np.ones(6), size=5)
    for speed in (0.0, 0.3, 1.0):
        assert np.array_equal(simulate_states(pi, 100, speed=speed, rng=seed), _former_states(pi, 100, speed, None, seed))
    P = gen.random((5, 6, 6))
    P /= P.sum(-1, keepdims=True)
    assert np.array_equal(simulate_states(pi, 80, transitions=P, rng=seed), _former_states(pi, 80, None, P, seed))
    assert simulate_states(pi, 0, rng=seed).shape == (5, 1)


# ------------------------------------------------------------------------------------ buffers

@pytest.mark.parametrize("rule", BUFFER_RULES)
def test_every_buffer_rule_keeps_buffers_full(rule):
    x = np.zeros((2, 10, 3), dtype=np.float32)
    bank = BufferBank(x, np.zeros((2, 10)), np.zeros((2, 10)), rule)
    rng = np.random.default_rng(0)
    for step in range(5):
        stored = bank.replace(0, np.ones((4, 3)), np.ones(4), state=1, rng=rng)
        assert 0 <= stored <= 4
        assert bank.capacity == 10 and bank.client_data().n.tolist() == [10, 10]
    comp = bank.composition(2)
    assert np.allclose(comp.sum(1), 1)
    assert comp[1, 0] == 1.0  # client 1 untouched
    assert bank.seen.tolist() == [30, 10]
    if rule == "keep":
        assert comp[0, 1] == 0
    if rule == "fifo":
        assert comp[0, 1] == 1.0  # 20 fresh samples pushed every initial one out


def test_random_rule_realises_the_mixture_update():
    # D_t = (1 - a) D_{t-1} + a D_m: after t steps a fraction (1 - a)^t of the initial samples remains
    x = np.zeros((1, 200, 1), dtype=np.float32)
    bank = BufferBank(x, np.zeros((1, 200)), np.zeros((1, 200)), "random")
    rng = np.random.default_rng(0)
    for _ in range(3):
        bank.replace(0, np.ones((50, 1)), np.ones(50), 1, rng)
    assert bank.composition(2)[0, 0] == pytest.approx(0.75 ** 3, abs=0.08)


def test_buffer_copy_is_independent_and_errors():
    bank = BufferBank(np.zeros((1, 4, 2)), np.zeros((1, 4)), np.zeros((1, 4)))
    other = bank.copy()
    other.replace(0, np.ones((4, 2)), np.ones(4), 1, 0)
    assert bank.states.sum() == 0 and other.states.sum() == 4
    with pytest.raises(ValueError, match="x_new"):
        bank.replace(0, np.ones((2, 3)), np.ones(2), 1)
    with pytest.raises(ValueError, match="client"):
        bank.replace(3, np.ones((2, 2)), np.ones(2), 1)
    with pytest.raises(ValueError, match="rule"):
        BufferBank(np.zeros((1, 4, 2)), np.zeros((1, 4)), np.zeros((1, 4)), "current")
    with pytest.raises(ValueError, match="shape"):
        BufferBank(np.zeros((4, 2)), np.zeros((1, 4)), np.zeros((1, 4)))


# ------------------------------------------------------------------------------------ oracles

def test_perturb_oracle():
    pi = np.array([[0.5, 0.3, 0.2, 0.0], [0.25, 0.25, 0.25, 0.25]])
    assert np.allclose(perturb_oracle(pi, 0.0, 0), pi)
    out = perturb_oracle(pi, 0.1, 1)
    assert np.allclose(out.sum(1), 1) and (out >= 0).all()
    # noise in [-eps, eps] before renormalisation: the error grows with eps
    errs = [oracle_error(pi, perturb_oracle(pi, e, 2)).sum() for e in (0.01, 0.1)]
    assert errs[0] < errs[1]
    fixed = perturb_oracle(pi, 0.05, noise=np.ones_like(pi))
    assert np.allclose(fixed, (pi + 0.05) / (pi + 0.05).sum(1, keepdims=True))
    assert np.allclose(perturb_oracle(pi[0], 5.0, noise=-np.ones(4)), pi[0])  # all clipped: falls back to pi
    with pytest.raises(ValueError, match="noise"):
        perturb_oracle(pi, 0.1, noise=2 * np.ones_like(pi))
    with pytest.raises(ValueError, match="eps"):
        perturb_oracle(pi, -0.1)


def test_bayes_oracle_formulas_and_variance_bound():
    counts = np.array([3.0, 1.0, 0.0])
    mean, var = bayes_oracle(counts, 1.0)
    s = 3 + 4
    assert np.allclose(mean, (1 + counts) / s)
    assert np.allclose(var, (1 + counts) * (s - 1 - counts) / (s ** 2 * (s + 1)))
    assert (var <= 1 / (4 * (s + 1)) + 1e-15).all()  # fact B10
    _, var_late = bayes_oracle(counts * 100, 1.0)
    assert var_late.max() < var.max() / 50  # O(1/t)
    assert bayes_oracle(np.ones((2, 3)), np.array([1.0, 2.0, 3.0]))[0].shape == (2, 3)
    with pytest.raises(ValueError, match="alpha0"):
        bayes_oracle(counts, -1.0)
    with pytest.raises(ValueError, match="counts"):
        bayes_oracle([-1.0, 2.0])


def test_oracle_error():
    assert oracle_error([0.5, 0.5], [1.0, 0.0]) == pytest.approx(1.0)
    assert oracle_error(np.eye(2), np.eye(2)).tolist() == [0, 0]
    with pytest.raises(ValueError, match="pi_hat"):
        oracle_error([0.5, 0.5], [1.0, 0.0, 0.0])


@pytest.mark.parametrize("kind", sorted(ORACLES))
def test_every_oracle_kind_predicts_distributions(kind):
    data = small(speed=0.5)
    out = PredictionOracle(kind).predict(data, 2)
    assert out.shape == (5, 4) and np.allclose(out.sum(1), 1)


def test_oracle_semantics():
    data = small(speed=1.0)
    assert np.allclose(PredictionOracle("exact").predict(data, 1), data.pi)
    slow = small(speed=0.0)
    exact = PredictionOracle("exact").predict(slow, 1)
    assert np.allclose(exact, np.eye(4)[slow.start_states(1)])  # no shift: one-hot at the current state
    noisy = PredictionOracle("exact", eps=0.1)
    assert np.allclose(noisy.predict(data, 1, seed=3), noisy.predict(data, 2, seed=3))  # fixed noise pattern
    redraw = PredictionOracle("exact", eps=0.1, redraw=True)
    assert not np.allclose(redraw.predict(data, 1, seed=3), redraw.predict(data, 2, seed=3))
    with pytest.raises(ValueError, match="kind"):
        PredictionOracle("psychic")
    with pytest.raises(TypeError, match="TemporalShiftDataset"):
        PredictionOracle().predict(object(), 0)
    with pytest.raises(ValueError, match="round_"):
        PredictionOracle().predict(data, 9)


# ------------------------------------------------------------------------------------ the data set

def test_make_temporal_shift_shapes_and_determinism():
    data = small()
    assert isinstance(data, TemporalShiftDataset)
    assert data.n_clients == 5 and data.n_states == 4 and data.n_rounds == 4 and data.capacity == 12
    assert data.states.shape == (5, 13) and data.state_test.n_clients == 4
    assert np.allclose(data.w, 0.25) and data.d.max() == pytest.approx(1.0)
    assert data.step_states(1).shape == (5, 3)
    assert np.array_equal(data.start_states(1), data.states[:, 3])
    assert data.state_counts(1).sum(1).tolist() == [4] * 5
    again = small()
    assert np.array_equal(again.states, data.states) and np.array_equal(again.train.x, data.train.x)
    # initial buffers hold samples of the initial state
    bank = data.initial_bank()
    assert (bank.states == data.states[:, :1]).all()


def test_fresh_samples_are_prefix_consistent_and_follow_the_state():
    data = small(concentrations=(0.01,))
    a = data.fresh(1, 2, np.array([3, 0, 5, 1, 2]))
    b = data.fresh(1, 2, np.array([5, 0, 2, 1, 2]))
    assert a[1] is None
    assert np.array_equal(a[0][0], b[0][0][:3]) and np.array_equal(a[2][0][:2], b[2][0])
    x, y, m = a[2]
    assert m == data.step_states(1)[2, 1] and x.shape == (5, 4)
    with pytest.raises(ValueError, match="step"):
        data.fresh(1, 0, np.ones(5, dtype=int))
    with pytest.raises(ValueError, match="sizes"):
        data.fresh(1, 1, np.ones(3, dtype=int))


def test_fresh_features_come_from_the_overridable_hook():
    @dataclasses.dataclass(frozen=True, eq=False)
    class LabelsAsFeatures(type(small())):
        def features(self, y, state, rng):
            return np.repeat(y[:, None].astype(np.float32), self.space.dim, axis=1)

    data = small()
    custom = LabelsAsFeatures(**{f.name: getattr(data, f.name) for f in dataclasses.fields(data) if f.init})
    for (x, y, m), (_, y0, m0) in zip(custom.fresh(1, 2, np.full(5, 3)), data.fresh(1, 2, np.full(5, 3))):
        assert np.array_equal(x[:, 0], y) and np.array_equal(y, y0) and m == m0   # same labels and states


def test_temporal_shift_dataset_validation():
    data = small()
    with pytest.raises(ValueError, match="q"):
        dataclasses.replace(data, q=np.zeros(5))
    with pytest.raises(ValueError, match="w"):
        dataclasses.replace(data, w=np.full(4, 0.5))
    with pytest.raises(ValueError, match="states"):
        dataclasses.replace(data, states=data.states[:, :5])
    with pytest.raises(ValueError, match="pi"):
        dataclasses.replace(data, pi=np.full((5, 4), 0.5))
    with pytest.raises(ValueError, match="seed"):
        small(seed=-1)
    with pytest.raises(ValueError, match="discrepancy"):
        small(discrepancy="cosine")
