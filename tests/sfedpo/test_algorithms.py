"""DDS, SAW and SFedPO on the engine (fedlab.sfedpo.algorithms); facts B1, B2, B5, B8, B12."""
import dataclasses

import numpy as np
import pytest
import torch

from fedlab.sfedpo.strategies import (AGGREGATION_RULES, SAMPLING_RULES, SCORE_VARIANTS, aggregation_weights,
                                      dds_alpha, dds_alpha_exact, dds_scores, sampling_ratios, saw_exact,
                                      saw_weights, uniform_alpha)
from fedlab.algorithms import METHODS
from fedlab.sfedpo.algorithms import PRESETS, SERVER_RULES, SFedPO, SFedPOState, fedexp_step
from fedlab.sfedpo.bounds import dds_objective
from fedlab.sfedpo.data import PredictionOracle, make_temporal_shift
from fedlab.engine import LocalSGD, run
from fedlab.models import LinearModel

MODEL = LinearModel(4, 3, zero_init=True)
SOLVER = LocalSGD(lr=0.1, batch_size=8)


def tiny(**kw):
    args = dict(n_clients=6, n_states=4, n_classes=3, dim=4, n_rounds=3, n_steps=3, capacity=16,
                concentrations=(0.1, 100.0), q_mean=0.6, q_std=0.0, test_per_client=8, test_per_state=8, seed=0)
    args.update(kw)
    return make_temporal_shift(**args)


def random_pi(n=20, m=6, seed=0, zeros=True):
    rng = np.random.default_rng(seed)
    pi = rng.dirichlet(np.full(m, 0.5), size=n)
    if zeros:
        pi[rng.random((n, m)) < 0.3] = 0
        pi[np.arange(n), rng.integers(m, size=n)] += 0.1
        pi /= pi.sum(1, keepdims=True)
    return pi


# ------------------------------------------------------------------------------------ DDS

def test_dds_scores_variants_fact_B5():
    w, d, pi = np.full(4, 0.25), np.array([0, 0.5, 1.0, 0.2]), np.array([0.1, 0.2, 0.3, 0.4])
    eq10 = dds_scores(w, d, pi, 0.5, 0.1, 0.2, "eq10")
    assert np.allclose(eq10, (0.25 - 0.1 * d + 0.2) / (1 + pi))
    assert np.allclose(eq10, dds_scores(w, d, pi, 0.5, 0.1, 0.2, "oracle"))  # coincide at alpha_n = 0.5
    assert np.allclose(dds_scores(w, d, pi, 0.2, variant="eq10"), (w - 0.1 * d + 0.2) / (1 + 4 * pi))
    assert np.allclose(dds_scores(w, d, pi, 0.2, variant="oracle"), (w - 0.1 * d + 0.2) / (1 + 0.25 * pi))
    assert set(SCORE_VARIANTS) == {"eq10", "oracle"}
    with pytest.raises(ValueError, match="variant"):
        dds_scores(w, d, pi, 0.5, variant="kkt")
    with pytest.raises(ValueError, match="alpha_n must be < 1"):
        dds_scores(w, d, pi, 1.0, variant="oracle")
    with pytest.raises(ValueError, match="pi_hat"):
        dds_scores(w, d, pi * 2, 0.5)


def test_dds_test_vector_and_clip_example_fact_B2():
    pi = np.array([0.1, 0.2, 0.3, 0.4])
    a = dds_alpha(dds_scores(np.full(4, 0.25), [0, 0.5, 1.0, 0.2], pi, 0.5, 0.1, 0.2), pi, 0.5)
    assert a == pytest.approx([0.657275, 0.535558, 0.432566, 0.493478], abs=1e-6)
    pi = np.array([0.05, 0.05, 0.9])
    a = dds_alpha(dds_scores([0.45, 0.45, 0.1], np.zeros(3), pi, 0.5, 0.0, 0.0), pi, 0.5)
    assert a == pytest.approx([1.0, 1.0, 0.444444], abs=1e-6)


@pytest.mark.parametrize("budget", [0.1, 0.5, 0.9, 1.0])
def test_dds_ratios_respect_budget_and_box_fact_B1(budget):
    pi = random_pi()
    a = dds_alpha(dds_scores(np.full(6, 1 / 6), np.linspace(0, 1, 6), pi, budget, 0.1, 0.2), pi, budget)
    assert (a >= 0).all() and (a <= 1).all()
    assert np.allclose((pi * a).sum(1), budget)                 # the sampling budget is met exactly
    assert (a[pi == 0] == 0).all()                               # states never visited are not sampled
    comp = pi * a / budget                                       # long-run buffer composition: a distribution
    assert np.allclose(comp.sum(1), 1) and (comp >= 0).all()


def test_dds_alpha_with_nonpositive_scores_spreads_the_budget():
    pi = np.array([0.2, 0.3, 0.5, 0.0])
    a = dds_alpha(-np.ones(4), pi, 0.4)
    assert a == pytest.approx([0.4, 0.4, 0.4, 0.0])
    with pytest.raises(ValueError, match="scores"):
        dds_alpha(np.ones(3), pi, 0.4)
    with pytest.raises(ValueError, match="alpha_n"):
        dds_alpha(np.ones(4), pi, 0.0)


def test_dds_exact_solves_the_qp_fact_B12():
    pi = random_pi(n=8, m=5, seed=1)
    d, w = np.random.default_rng(2).random(5), np.full(5, 0.2)
    exact = dds_alpha_exact(pi, 0.5, d, w, G=1.0, n_steps=5)
    assert np.allclose((pi * exact).sum(1), 0.5) and (exact >= 0).all() and (exact <= 1).all()
    heuristic = dds_alpha(dds_scores(w, d, pi, 0.5), pi, 0.5)
    q_exact = dds_objective(pi, exact, d, w, G=1.0, n_steps=5, budget=0.5)
    q_heur = dds_objective(pi, heuristic, d, w, G=1.0, n_steps=5, budget=0.5)
    q_unif = dds_objective(pi, uniform_alpha(pi, 0.5), d, w, G=1.0, n_steps=5, budget=0.5)
    assert np.all(q_exact <= q_heur + 1e-12) and np.all(q_exact <= q_unif + 1e-12)
    cv = dds_alpha_exact(pi[:2], 0.5, d, w, G=1.0, n_steps=5, method="cvxpy")
    assert np.allclose(cv, exact[:2], atol=1e-4)


def test_dds_exact_interior_closed_form_and_full_budget():
    pi, d, w = np.array([0.3, 0.3, 0.4]), np.array([0.2, 0.1, 0.0]), np.full(3, 1 / 3)
    a = dds_alpha_exact(pi, 0.5, d, w, G=2.0, n_steps=5)
    assert (a > 0).all() and (a < 1).all()
    gamma = (0.5 * (1 - 0.5 ** 5)) / (5 * 0.5)
    coef = (1 - gamma) / (4 * 2.0 * gamma)
    c = (2 - pi) / 1.5 + pi / 0.5
    lam = a * c - (w - coef * d)                      # the same multiplier for every state at the optimum
    assert np.allclose(lam, lam[0])
    assert np.allclose(dds_alpha_exact(pi, 1.0, d, w), 1.0)
    with pytest.raises(ValueError, match="G"):
        dds_alpha_exact(pi, 0.5, d, w, G=0.0)
    with pytest.raises(ValueError, match="method"):
        dds_alpha_exact(pi, 0.5, d, w, method="newton")


@pytest.mark.parametrize("rule", sorted(SAMPLING_RULES))
def test_every_sampling_rule(rule):
    pi = random_pi(n=5, m=4, seed=3)
    a = sampling_ratios(rule, pi, alpha_budget=0.4, d=np.linspace(0, 1, 4))
    assert a.shape == pi.shape and (a >= 0).all() and (a <= 1).all()
    if rule == "latest":
        assert (a == 1).all()
    else:
        assert np.allclose((pi * a).sum(1), 0.4)
    with pytest.raises(ValueError, match="rule"):
        sampling_ratios("greedy", pi)


# ------------------------------------------------------------------------------------ SAW

def test_saw_weights_fact_B8():
    q, s = np.array([0.2, 0.3, 0.25, 0.2]), np.array([0.8, 0.9, 0.7, 1.2])
    p = saw_weights(q, s, 1.0, 0.0)
    assert p.sum() == pytest.approx(1) and (p >= 0).all()
    assert saw_weights([0.2, 0.3], [0.853525, 0.958458], 1.0, 0.0) == pytest.approx([0.635831, 0.364169], abs=1e-6)
    same_q = np.full(4, 0.25)
    assert np.allclose(saw_weights(same_q, s, 0.0, 0.0), 0.25)        # a2 = 0 and equal q: uniform
    p_eq = saw_weights(same_q, s, 1.0, 0.0)
    assert np.all(np.argsort(p_eq) == np.argsort(-s))                  # larger s, smaller weight
    masked = saw_weights(q, s, 1.0, 0.0, mask=[0, 2])
    assert masked[[1, 3]].tolist() == [0, 0] and masked.sum() == pytest.approx(1)
    assert np.allclose(saw_weights(q, s, 100.0, 0.0, mask=[1, 2]), [0, 0.5, 0.5, 0])  # all ReLU zero: uniform
    with pytest.raises(ValueError, match="q"):
        saw_weights([0.0, 0.5], [1.0, 1.0])
    with pytest.raises(ValueError, match="mask"):
        saw_weights(q, s, mask=np.zeros(4, dtype=bool))
    with pytest.raises(ValueError, match="mask"):
        saw_weights(q, s, mask=[7])


def test_saw_exact_is_the_kkt_point_of_the_surrogate():
    q, s = np.array([0.2, 0.3, 0.25, 0.4]), np.array([0.8, 0.9, 0.7, 1.2])
    c, lam2 = 0.3, 2.0
    p = saw_exact(q, s, L=1.0, eta=0.3, sigma2=1.0, lam2=lam2)
    assert p.sum() == pytest.approx(1) and (p >= 0).all()

    def objective(x):
        return c * (x ** 2 @ q) + (x * q) @ (5 / 3 * s) - lam2 * (x @ q)

    rng = np.random.default_rng(0)
    for _ in range(200):  # no feasible point does better
        other = rng.dirichlet(np.ones(4))
        assert objective(p) <= objective(other) + 1e-12
    masked = saw_exact(q, s, eta=0.3, lam2=lam2, mask=[0, 3])
    assert masked[[1, 2]].tolist() == [0, 0]
    with pytest.raises(ValueError, match="L \\* eta \\* sigma2"):
        saw_exact(q, s, eta=0.0)


@pytest.mark.parametrize("rule", sorted(AGGREGATION_RULES))
def test_every_aggregation_rule_sums_to_one(rule):
    q, s = np.array([0.2, 0.3, 0.25]), np.array([0.8, 0.9, 0.7])
    p = aggregation_weights(rule, q, s, mask=[True, False, True], eta=0.1)
    assert p.sum() == pytest.approx(1) and p[1] == 0 and (p >= 0).all()
    with pytest.raises(ValueError, match="rule"):
        aggregation_weights("median", q, s)


def test_fedexp_step():
    deltas = {"w": torch.tensor([[1.0, 0.0], [-1.0, 0.0]])}
    assert fedexp_step(deltas, [0.5, 0.5]) == pytest.approx(1 / (2 * 1e-3))  # opposite updates: large step
    same = {"w": torch.tensor([[1.0, 0.0], [1.0, 0.0]])}
    assert fedexp_step(same, [0.5, 0.5]) == 1.0                             # never below 1
    with pytest.raises(ValueError, match="p"):
        fedexp_step(same, [1.0])


# ------------------------------------------------------------------------------------ SFedPO

def test_perfect_oracle_without_shift_reduces_to_fedavg_on_the_buffer():
    data = dataclasses.replace(tiny(speed=0.0), d=np.zeros(4))  # no shift; homogeneous states (equal s_n)
    s1, h1 = run(PRESETS["sfedpo"](MODEL, SOLVER), data, rounds=3, seed=1, eval_every=3)
    s2, h2 = run(PRESETS["fedavg_buffer"](MODEL, SOLVER), data, rounds=3, seed=1, eval_every=3)
    for k in s1.params:
        assert torch.allclose(s1.params[k], s2.params[k], atol=1e-7)
    assert np.array_equal(s1.buffers.x, s2.buffers.x)
    for e1, e2 in zip(h1.log, h2.log):
        assert e1["participants"] == e2["participants"] and e1["p_round"] == pytest.approx(e2["p_round"])
    assert h1.final("global_accuracy") == pytest.approx(h2.final("global_accuracy"))


def test_without_shift_sfedpo_is_fedavg_with_fixed_saw_weights():
    data = tiny(speed=0.0)  # heterogeneous d: SAW weights differ across clients but stay fixed over rounds
    method = PRESETS["sfedpo"](MODEL, SOLVER)
    s1, h1 = run(method, data, rounds=3, seed=2, eval_every=3)
    s2, _ = run(PRESETS["fedavg_buffer"](MODEL, SOLVER), data, rounds=3, seed=2, eval_every=3)
    assert np.array_equal(s1.buffers.x, s2.buffers.x)             # DDS sampled exactly like uniform sampling
    onehot = np.eye(4)[data.start_states(0)]
    _, _, p_static = method.strategy(onehot, data)
    for entry in h1.log:
        part = entry["participants"]
        if part:
            assert entry["p_round"] == pytest.approx(p_static[part] / p_static[part].sum())


def test_buffers_keep_their_size_and_refresh_the_budget():
    data = tiny(speed=1.0, n_rounds=6, capacity=40)
    state, history = run(PRESETS["sfedpo"](MODEL, SOLVER), data, rounds=6, seed=0, eval_every=6)
    assert state.buffers.client_data().n.tolist() == [40] * 6
    steps = sum(len(e["participants"]) for e in history.log) * data.n_steps
    refreshed = sum(e["refreshed"] for e in history.log)
    assert refreshed <= steps * data.capacity
    assert refreshed / (steps * data.capacity) == pytest.approx(0.5, abs=0.15)  # on average alpha_n of the buffer
    latest, h_latest = run(PRESETS["fedavg_latest"](MODEL, SOLVER), data, rounds=6, seed=0, eval_every=6)
    steps = sum(len(e["participants"]) for e in h_latest.log) * data.n_steps
    assert sum(e["refreshed"] for e in h_latest.log) == steps * data.capacity


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_method_runs(name):
    data = tiny()
    state, history = run(PRESETS[name](MODEL, SOLVER), data, rounds=2, seed=0, eval_every=1)
    assert state.round == 2
    assert 0 <= history.final("global_accuracy") <= 1
    assert {"train_loss", "test_accuracy", "global_loss", "global_accuracy"} <= set(history.clients)
    for entry in history.log:
        if entry["participants"]:
            assert sum(entry["p_round"]) == pytest.approx(1)


def test_states_missed_by_the_forecast_are_not_refreshed():
    data = tiny(speed=0.0, n_rounds=3)

    class Wrong(PredictionOracle):  # forecasts the next state in index order: never the (frozen) current one
        def predict(self, data, round_, seed=0):
            return np.eye(data.n_states)[(data.start_states(round_) + 1) % data.n_states]

    state, history = run(PRESETS["sfedpo_dds"](MODEL, SOLVER, oracle=Wrong()), data, rounds=3, seed=5)
    assert sum(e["refreshed"] for e in history.log) == 0
    assert np.array_equal(state.buffers.x, data.train.x.numpy())


def test_runs_are_deterministic_and_rounds_replayable():
    data = tiny()
    method = PRESETS["sfedpo"](MODEL, SOLVER, oracle=PredictionOracle("exact", eps=0.05))
    a, _ = run(method, data, rounds=3, seed=4)
    b, _ = run(method, data, rounds=3, seed=4)
    assert all(torch.equal(a.params[k], b.params[k]) for k in a.params)
    st = method.init(data, 4)
    n1, _ = method.round(st, data, 4)
    n2, _ = method.round(st, data, 4)   # the state is not mutated by a round
    assert all(torch.equal(n1.params[k], n2.params[k]) for k in n1.params)
    assert np.array_equal(n1.buffers.x, n2.buffers.x)


@pytest.mark.parametrize("server", SERVER_RULES)
def test_every_server_rule(server):
    data = tiny()
    method = SFedPO(MODEL, SOLVER, server=server)
    state = method.init(data, 0)
    assert isinstance(state, SFedPOState) and state.round == 0
    new, info = method.round(state, data, 0)
    assert isinstance(new, SFedPOState) and new.round == 1
    assert info["server_lr"] == 1.0 if server == "avg" else info["server_lr"] >= 1.0


def test_prox_and_overrides():
    m = PRESETS["fedprox_sfedpo"](MODEL, SOLVER, a1=0.2)
    assert m.solver.prox_mu == 0.1 and m.a1 == 0.2 and m.sampling == "dds"
    assert PRESETS["fedexp_buffer"](MODEL, SOLVER).server == "fedexp"
    with pytest.raises(ValueError, match="name"):
        METHODS.build("sfedpo:flash", MODEL, SOLVER)


def test_sfedpo_bad_inputs():
    with pytest.raises(ValueError, match="momentum"):
        SFedPO(MODEL, LocalSGD(lr=0.1, momentum=0.9))
    with pytest.raises(TypeError, match="solver"):
        SFedPO(MODEL, 0.1)
    with pytest.raises(TypeError, match="model"):
        SFedPO("linear", SOLVER)
    with pytest.raises(TypeError, match="oracle"):
        SFedPO(MODEL, SOLVER, oracle="exact")
    with pytest.raises(ValueError, match="sampling"):
        SFedPO(MODEL, SOLVER, sampling="importance")
    with pytest.raises(ValueError, match="alpha_budget"):
        SFedPO(MODEL, SOLVER, alpha_budget=1.5)
    with pytest.raises(ValueError, match="alpha_budget must be < 1"):
        SFedPO(MODEL, SOLVER, alpha_budget=1.0, variant="oracle")
    with pytest.raises(ValueError, match="buffer_rule"):
        SFedPO(MODEL, SOLVER, buffer_rule="current")
    with pytest.raises(ValueError, match="server"):
        SFedPO(MODEL, SOLVER, server="adam")
    m = SFedPO(MODEL, SOLVER)
    with pytest.raises(TypeError, match="TemporalShiftDataset"):
        m.init(object(), 0)
    data = tiny(n_rounds=1)
    state, _ = run(m, data, rounds=1, seed=0)
    with pytest.raises(ValueError, match="horizon"):
        m.round(state, data, 0)
