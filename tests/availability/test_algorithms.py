"""CA-Fed (Algorithm 6) and the availability baselines (fedlab.availability.algorithms.cafed / availability_baselines)."""
import json
from dataclasses import replace

import numpy as np
import pytest
import torch

from fedlab.availability.algorithms.baselines import (AdaFed, AvailabilityState, F3AST, LessCorrelated,
                                                      MoreAvailable, Unbiased)
from fedlab.availability.algorithms import PRESETS
from fedlab.availability.algorithms.cafed import (CAFed, CafedDecision, cafed_proxy,
                                                  cafed_tradeoff, cafed_weights, client_losses)
from fedlab.availability.data import make_population
from fedlab.engine import FederatedDataset, LocalSGD, run
from fedlab.models import LinearModel
from helpers import make_clients

# spec §6.2 toy instance
ALPHA = np.full(6, 1 / 6)
PI = np.array([0.9, 0.9, 0.1, 0.1, 0.1, 0.1])
LAM = np.array([0, 0, 0.9, 0.8, 0, 0])
GAP = np.array([0.05, 0.07, 0.60, 0.40, 0.30, 0.20])

TOY = [
    (0.005, {1, 2, 3, 4, 5}, 0.05, 0.008333),
    (0.05, {2, 3, 4, 5}, 0.06, 0.053333),
    (0.12, {2, 3, 4}, 0.106667, 0.072),
    (0.2, {2, 3}, 0.155, 0.053333),
    (0.5, {2}, 0.204, 0.033333),
    (0.98, {2}, 0.204, 0.065333),
    (0.99, set(), 0.27, 0.0),
    (1.0, set(), 0.27, 0.0),
    (50.0, set(), 0.27, 0.0),
]


@pytest.mark.parametrize("kappa2, excluded, opt, bias", TOY)
def test_toy_greedy_table(kappa2, excluded, opt, bias):
    d = cafed_weights(ALPHA, PI, LAM, GAP, kappa2=kappa2)
    assert isinstance(d, CafedDecision)
    assert set(d.excluded) == excluded
    assert d.opt == pytest.approx(opt, abs=1e-6) and d.bias == pytest.approx(bias, abs=1e-6)
    assert d.total == pytest.approx(opt + bias, abs=1e-6)
    np.testing.assert_allclose(d.q[list(set(range(6)) - excluded)], (ALPHA / PI)[list(set(range(6)) - excluded)])


def test_toy_trace_at_kappa2_03():
    d = cafed_weights(ALPHA, PI, LAM, GAP, kappa2=0.3)
    lam_pass = [(r["client"], round(r["eps_plus"], 6), r["excluded"]) for r in d.trace if r["pass"] == "lambda"]
    assert lam_pass == [(2, 0.224, True), (3, 0.235, False), (0, 0.3225, False), (1, 0.3175, False),
                        (4, 0.26, False), (5, 0.285, False)]
    assert d.trace[0]["eps"] == pytest.approx(0.27)
    pi_pass = [r for r in d.trace if r["pass"] == "pi"]
    assert [r["client"] for r in pi_pass] == [3, 4, 5, 0, 1] and not any(r["excluded"] for r in pi_pass)
    assert d.excluded == [2]


def test_toy_variants():
    unnorm = {k: set(cafed_weights(ALPHA, PI, LAM, GAP, kappa2=k, normalized=False).excluded) for k in (1, 3, 10)}
    assert unnorm == {1: {2, 3}, 3: {2}, 10: set()}
    zero = np.zeros(6)
    assert cafed_weights(ALPHA, PI, LAM, zero, kappa2=1).excluded == []
    assert set(cafed_weights(ALPHA, PI, LAM, zero, kappa2=1, strict=False).excluded) == {0, 1, 2, 3, 4}
    # tau: a large threshold forbids every exclusion
    assert cafed_weights(ALPHA, PI, LAM, GAP, kappa2=0.005, tau=1.0).excluded == []


def test_excluded_sets_are_nested_in_kappa2():
    grid = np.logspace(-3, 1, 60)
    path = cafed_tradeoff(ALPHA, PI, LAM, GAP, grid)
    assert path["q"].shape == (60, 6) and path["p"].shape == (60, 6)
    np.testing.assert_allclose(path["total"], path["opt"] + path["bias"])
    for a, b in zip(path["excluded"][:-1], path["excluded"][1:]):
        assert set(b) <= set(a)
    assert np.all(np.diff(path["n_excluded"]) <= 0)
    np.testing.assert_allclose(path["p"].sum(1), 1.0)


def test_large_kappa2_gives_unbiased_weights_on_random_instances():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 30))
        alpha, pi = rng.dirichlet(np.ones(n)), rng.uniform(0.05, 1, n)
        d = cafed_weights(alpha, pi, rng.uniform(-0.1, 0.95, n), rng.exponential(0.2, n), kappa2=1e6)
        np.testing.assert_array_equal(d.q, alpha / pi)
        assert d.excluded == [] and d.bias == pytest.approx(0, abs=1e-12)


def test_proxy_values():
    total, opt, bias = cafed_proxy(ALPHA / PI, ALPHA, PI, GAP, kappa2=1.0)
    assert opt == pytest.approx(GAP.mean()) and bias == pytest.approx(0) and total == pytest.approx(opt)
    q = np.where(np.arange(6) == 2, 0, ALPHA / PI)
    total, opt, bias = cafed_proxy(q, ALPHA, PI, GAP, kappa2=0.3)
    assert total == pytest.approx(0.224) and bias == pytest.approx(4 * 0.3 * (1 / 6) ** 2 * 0.6)
    _, _, bias2 = cafed_proxy(q, ALPHA, PI, GAP, kappa2=0.3, gamma_prime=1.2)
    assert bias2 == pytest.approx(2 * bias)


def test_greedy_never_excludes_last_client():
    d = cafed_weights([0.5, 0.5], [0.5, 0.5], [0.9, 0.0], [1.0, 0.0], kappa2=0.0)
    assert d.excluded == [0] and d.q[1] > 0


def test_bad_inputs():
    with pytest.raises(ValueError, match="kappa2"):
        cafed_weights(ALPHA, PI, LAM, GAP, kappa2=-1)
    with pytest.raises(ValueError, match="alpha must sum to 1"):
        cafed_weights(np.full(6, 0.2), PI, LAM, GAP, kappa2=1)
    with pytest.raises(ValueError, match=r"pi must lie in \[0, 1\]"):
        cafed_proxy(ALPHA / PI, ALPHA, PI * 2, GAP, kappa2=1)
    with pytest.raises(ValueError, match="pi must be positive"):
        cafed_weights(ALPHA, np.r_[0.0, PI[1:]], LAM, GAP, kappa2=1)
    with pytest.raises(ValueError, match="tau"):
        cafed_weights(ALPHA, PI, LAM, GAP, kappa2=1, tau=-0.1)
    with pytest.raises(ValueError, match="gap"):
        cafed_weights(ALPHA, PI, LAM, GAP[:3], kappa2=1)


# ------------------------------------------------------------------------------------- on the engine

N_CLIENTS, ROUNDS = 8, 12


@pytest.fixture(scope="module")
def setup():
    xs, ys = make_clients(n_clients=N_CLIENTS, dim=5, n_classes=3, seed=1)
    data = FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.25, n_classes=3, seed=0)
    pop = make_population(N_CLIENTS, layout="thesis4", rng=0)
    trace = pop.simulate(ROUNDS, rng=1)
    trace[3] = False  # one round where nobody is available
    model = LinearModel(5, 3)
    solver = LocalSGD(lr=0.05, local_steps=2, batch_size=4, weight_decay=1e-2)
    kw = dict(participation=trace, pi=pop.client_pi, lam=pop.client_lambda)
    return data, pop, trace, model, solver, kw


def _run(algo, data, seed=0):
    return run(algo, data, rounds=ROUNDS, seed=seed, progress=False)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_method_runs_and_logs_json(setup, name):
    data, pop, trace, model, solver, kw = setup
    algo = PRESETS[name](model, solver, **kw)
    state, hist = _run(algo, data)
    assert isinstance(state, AvailabilityState) and state.round == ROUNDS
    json.dumps(hist.log)
    for t, entry in enumerate(hist.log):
        active = np.flatnonzero(trace[t])
        assert entry["active"] == active.tolist()
        assert set(entry["trained"]) <= set(entry["active"])
        w = np.array(entry["weights"])
        assert w.shape == (N_CLIENTS,) and np.all(w[~trace[t]] == 0) and np.all(w >= 0)
    assert hist.log[3]["trained"] == [] and np.isnan(hist.log[3]["local_loss"])
    assert np.isfinite(hist.final("test_loss"))


def test_cafed_huge_kappa2_is_bitwise_unbiased(setup):
    data, pop, trace, model, solver, kw = setup
    s_u, h_u = _run(Unbiased(model, solver, **kw), data)
    s_c, h_c = _run(CAFed(model, solver, kappa2=1e6, **kw), data)
    for k in s_u.params:
        assert torch.equal(s_u.params[k], s_c.params[k])
    assert [e["weights"] for e in h_u.log] == [e["weights"] for e in h_c.log]
    assert all(e["excluded"] == [] for e in h_c.log)


def test_cafed_logs_exclusions(setup):
    data, pop, trace, model, solver, kw = setup
    _, hist = _run(CAFed(model, solver, kappa2=1e-3, **kw), data)
    for t, entry in enumerate(hist.log):
        if t == 3:
            continue
        assert {"excluded", "excluded_active", "proxy", "proxy_opt", "proxy_bias", "gamma_prime", "gaps"} <= set(entry)
        assert set(entry["excluded_active"]) == set(entry["excluded"]) & set(entry["active"])
        trained = set(entry["trained"])
        assert trained == set(entry["active"]) - set(entry["excluded"])
        assert entry["proxy"] == pytest.approx(entry["proxy_opt"] + entry["proxy_bias"])
        assert entry["gamma_prime"] == pytest.approx(max(entry["gaps"]))
    assert any(entry["excluded"] for entry in hist.log)  # small kappa2 excludes somebody


def test_more_available_and_less_correlated_masks(setup):
    data, pop, trace, model, solver, kw = setup
    _, h_more = _run(MoreAvailable(model, solver, **kw), data)
    _, h_less = _run(LessCorrelated(model, solver, **kw), data)
    rare = pop.client_pi < 0.5
    corr = np.abs(pop.client_lambda) >= 0.5
    for e_more, e_less in zip(h_more.log, h_less.log):
        assert np.all(np.array(e_more["weights"])[rare] == 0)
        assert np.all(np.array(e_less["weights"])[corr] == 0)


def test_adafed_weights_sum_to_one(setup):
    data, pop, trace, model, solver, kw = setup
    _, hist = _run(AdaFed(model, solver, **kw), data)
    for t, entry in enumerate(hist.log):
        if trace[t].any():
            assert sum(entry["weights"]) == pytest.approx(1.0)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_f3ast_selects_at_most_k(setup, k):
    data, pop, trace, model, solver, kw = setup
    _, hist = _run(F3AST(model, solver, k=k, **kw), data)
    alpha = data.train.n.numpy() / data.train.n.numpy().sum()
    for t, entry in enumerate(hist.log):
        assert len(entry["trained"]) == min(k, int(trace[t].sum()))
        # the chosen ones have the largest alpha^2 / pi^2 among the available
        pi_f = (1 - 1e-3) * pop.client_pi + 1e-3 * trace[t]
        score = alpha ** 2 / pi_f ** 2
        if entry["trained"]:
            others = set(entry["active"]) - set(entry["trained"])
            assert all(score[o] <= min(score[c] for c in entry["trained"]) + 1e-15 for o in others)


def test_unbiased_update_rule(setup):
    data, pop, trace, model, solver, kw = setup
    algo = Unbiased(model, solver, server_lr=0.5, **kw)
    state = algo.init(data, 0)
    new, info = algo.round(state, data, 0)
    active = np.flatnonzero(trace[0])
    alpha = data.train.n.numpy() / data.train.n.numpy().sum()
    np.testing.assert_allclose(np.array(info["weights"])[active], alpha[active] / pop.client_pi[active])
    # linearity: doubling server_lr doubles the step
    new2, _ = Unbiased(model, solver, server_lr=1.0, **kw).round(state, data, 0)
    for k in state.params:
        torch.testing.assert_close(new2.params[k] - state.params[k], 2 * (new.params[k] - state.params[k]))


def test_bayes_estimator_and_prior_trace(setup):
    data, pop, trace, model, solver, kw = setup
    prior = pop.simulate(50, rng=7)
    algo = CAFed(model, solver, participation=trace, estimator="bayes", prior_trace=prior, kappa2=1.0)
    state = algo.init(data, 0)
    assert state.estimator.t == 50
    state, _ = algo.round(state, data, 0)
    assert state.estimator.t == 51
    pi_hat, lam_hat = algo.availability(state.estimator)
    assert pi_hat.shape == (N_CLIENTS,) and np.all((pi_hat > 0) & (pi_hat < 1)) and lam_hat.shape == (N_CLIENTS,)


def test_cafed_loss_estimates(setup):
    data, pop, trace, model, solver, kw = setup
    algo = CAFed(model, solver, beta=0.5, **kw)
    state = algo.init(data, 0)
    s1, _ = algo.round(state, data, 0)
    active = np.flatnonzero(trace[0])
    reported = client_losses(model, state.params, data.train, active, weight_decay=solver.weight_decay)
    np.testing.assert_allclose(s1.f_hat[active], reported)
    inactive = np.setdiff1d(np.arange(N_CLIENTS), active)
    np.testing.assert_allclose(s1.f_hat[inactive], reported.mean())
    np.testing.assert_allclose(s1.f_star, s1.f_hat)
    s2, _ = algo.round(s1, data, 0)
    act2 = np.flatnonzero(trace[1])
    rep2 = client_losses(model, s1.params, data.train, act2, weight_decay=solver.weight_decay)
    np.testing.assert_allclose(s2.f_hat[act2], 0.5 * s1.f_hat[act2] + 0.5 * rep2)
    assert np.all(s2.f_star <= s2.f_hat) and np.all(s2.f_star <= s1.f_star)
    oracle = CAFed(model, solver, fstar="oracle", f_star=np.zeros(N_CLIENTS), **kw)
    s_or, _ = oracle.round(oracle.init(data, 0), data, 0)
    np.testing.assert_array_equal(s_or.f_star, 0)


def test_client_losses_match_evaluation(setup):
    data, pop, trace, model, solver, kw = setup
    algo = Unbiased(model, solver, **kw)
    state = algo.init(data, 0)
    losses = client_losses(model, state.params, data.train, np.arange(N_CLIENTS))
    np.testing.assert_allclose(losses, algo.evaluate(state, data)["train_loss"], rtol=1e-6)


def test_constructor_validation(setup):
    data, pop, trace, model, solver, kw = setup
    with pytest.raises(ValueError, match="needs the true availabilities"):
        Unbiased(model, solver, participation=trace)
    with pytest.raises(ValueError, match="second eigenvalues"):
        CAFed(model, solver, participation=trace, pi=pop.client_pi)
    with pytest.raises(ValueError, match="second eigenvalues"):
        LessCorrelated(model, solver, participation=trace, pi=pop.client_pi)
    with pytest.raises(ValueError, match="kappa2"):
        CAFed(model, solver, kappa2=-1.0, **kw)
    with pytest.raises(ValueError, match="beta"):
        CAFed(model, solver, beta=0.0, **kw)
    with pytest.raises(ValueError, match="f_star"):
        CAFed(model, solver, fstar="oracle", **kw)
    with pytest.raises(ValueError, match="estimator"):
        Unbiased(model, solver, estimator="magic", **kw)
    with pytest.raises(TypeError, match="participation"):
        Unbiased(model, solver, participation=0.5, pi=pop.client_pi)
    with pytest.raises(TypeError, match="solver"):
        Unbiased(model, "sgd", **kw)
    with pytest.raises(ValueError, match=r"pi must lie in \(0, 1\]"):
        Unbiased(model, solver, participation=trace, pi=np.r_[pop.client_pi[:-1], 1.5])
    with pytest.raises(ValueError, match="clients"):
        Unbiased(model, solver, participation=trace, pi=pop.client_pi[:4]).init(data, 0)
    with pytest.raises(ValueError, match="k must"):
        F3AST(model, solver, k=0, **kw)


def test_toy_breakpoints():
    """Breakpoints of the excluded set along kappa2 (spec §6.2: 0.01667, 0.1, 0.1452, 0.2455, 0.99)."""
    def n_excluded(k):
        return len(cafed_weights(ALPHA, PI, LAM, GAP, kappa2=k).excluded)

    grid = np.logspace(-3, 1, 400)
    counts = np.array([n_excluded(k) for k in grid])
    jumps = np.flatnonzero(np.diff(counts))
    found = []
    for j in jumps:
        lo, hi = grid[j], grid[j + 1]
        for _ in range(60):
            mid = np.sqrt(lo * hi)
            lo, hi = (mid, hi) if n_excluded(mid) == counts[j] else (lo, mid)
        found.append(hi)
    # exact values (e.g. {2} -> {2, 3}: opt gain 0.204 - 0.155 = 0.049 = bias increase 0.2 kappa2 at 0.245)
    np.testing.assert_allclose(found, [1 / 60, 0.1, 0.145, 0.245, 0.99], rtol=1e-9)
    # the spec's values come from a 0.1%-resolution grid
    np.testing.assert_allclose(found, [0.01667, 0.1, 0.1452, 0.2455, 0.99], rtol=3e-3)


def test_trace_plugs_into_fedavg(setup):
    from fedlab.algorithms.fedavg import FedAvg
    from fedlab.availability.data import trace_participation

    data, pop, trace, model, solver, kw = setup
    _, hist = run(FedAvg(model, solver, participation=trace_participation(trace)), data, rounds=ROUNDS, seed=0,
                  progress=False)
    assert [e["participants"] for e in hist.log] == [np.flatnonzero(m).tolist() for m in trace]


def test_server_momentum_and_weight_decay(setup):
    """The server optimiser: b_t = m b_{t-1} + g_t, w_{t+1} = w_t - lr b_t with g_t = wd w_t - sum_k q_k Delta_k."""
    data, pop, trace, model, solver, kw = setup
    plain = Unbiased(model, solver, server_lr=0.5, **kw)
    heavy = Unbiased(model, solver, server_lr=0.5, server_momentum=0.9, server_weight_decay=0.1, **kw)
    s0 = plain.init(data, 0)
    p1, _ = plain.round(s0, data, 0)
    h1, _ = heavy.round(s0, data, 0)
    assert s0.server_buffer is None and p1.server_buffer is None
    for k in s0.params:  # first round: no momentum yet, the decay adds lr * wd * w
        torch.testing.assert_close(h1.params[k], p1.params[k] - 0.5 * 0.1 * s0.params[k])
        torch.testing.assert_close(h1.server_buffer[k], (s0.params[k] - h1.params[k]) / 0.5)
    h2, _ = heavy.round(h1, data, 0)
    p2, _ = plain.round(replace(h1, server_buffer=None), data, 0)
    for k in s0.params:  # the new step is the plain one, plus decay, plus m times the previous step
        expected = p2.params[k] - 0.5 * (0.1 * h1.params[k] + 0.9 * h1.server_buffer[k])
        torch.testing.assert_close(h2.params[k], expected)
    idle = trace.copy()
    idle[0] = False
    still = Unbiased(model, solver, server_momentum=0.9, **{**kw, "participation": idle})
    s1, _ = still.round(still.init(data, 0), data, 0)
    assert s1.server_buffer is None  # nobody trained: nothing moves
    with pytest.raises(ValueError, match="server_momentum"):
        Unbiased(model, solver, server_momentum=1.0, **kw)
    with pytest.raises(ValueError, match="server_weight_decay"):
        Unbiased(model, solver, server_weight_decay=-1.0, **kw)


def test_clients_keep_their_optimizer_across_the_rounds_they_train_in(setup):
    """With the authors' solver (momentum kept), a client's optimizer counts the steps of every round it trained in."""
    data, pop, trace, model, solver, kw = setup
    keep = replace(solver, momentum=0.9, keep_state=True)
    state, hist = _run(CAFed(model, keep, kappa2=1.0, **kw), data)
    trained = np.zeros(N_CLIENTS, int)
    for entry in hist.log:
        trained[entry["trained"]] += 1
    assert state.optimizer.steps.tolist() == (trained * keep.local_steps).tolist() and trained.sum() > 0
    assert _run(CAFed(model, solver, kappa2=1.0, **kw), data)[0].optimizer is None


def _random_instance(rng, n):
    keep = (rng.random(n) > 0.1) | (np.arange(n) == 0)         # some clients without data: q = 0 from the start
    alpha = rng.dirichlet(np.ones(n)) * keep
    alpha = alpha / alpha.sum()
    gap = rng.exponential(0.2, n) * (rng.random(n) < 0.8)   # some zero gaps: ties
    return alpha, rng.uniform(0.02, 1, n), rng.uniform(-0.3, 0.95, n), gap


@pytest.mark.parametrize("options", [{}, {"strict": False}, {"normalized": False}, {"tau": 1e-3},
                                     {"gamma_prime": 0.5}])
def test_screened_greedy_is_bitwise_the_traced_one(options):
    rng = np.random.default_rng(1)
    for trial in range(60):
        n = int(rng.integers(2, 120))
        instance = _random_instance(rng, n)
        kappa2 = float(10 ** rng.uniform(-3, 2))
        full = cafed_weights(*instance, kappa2=kappa2, **options)
        fast = cafed_weights(*instance, kappa2=kappa2, trace=False, **options)
        assert fast.trace == [] and len(full.trace) > 0
        assert fast.excluded == full.excluded
        np.testing.assert_array_equal(fast.q, full.q)
        assert (fast.total, fast.opt, fast.bias) == (full.total, full.opt, full.bias)


def test_screened_greedy_on_the_toy_table():
    for kappa2, excluded, _, _ in TOY:
        full, fast = (cafed_weights(ALPHA, PI, LAM, GAP, kappa2=kappa2, trace=t) for t in (True, False))
        assert set(fast.excluded) == excluded and fast.excluded == full.excluded
        assert (fast.total, fast.opt, fast.bias) == (full.total, full.opt, full.bias)
    zero = np.zeros(6)
    assert cafed_weights(ALPHA, PI, LAM, zero, kappa2=1, strict=False, trace=False).excluded == \
        cafed_weights(ALPHA, PI, LAM, zero, kappa2=1, strict=False).excluded
    with pytest.raises(TypeError, match="trace"):
        cafed_weights(ALPHA, PI, LAM, GAP, kappa2=1, trace="no")
