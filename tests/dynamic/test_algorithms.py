"""Dynamic FedAvg (fedlab.dynamic.algorithms): exactness against a literal Algorithm 1, and the facts of spec C.8."""
import numpy as np
import pytest
import torch

from fedlab._rng import Stream, numpy_rng
from scipy.signal import lfilter

from fedlab.dynamic.algorithms import (DynamicFedAvg, DynamicFedAvgLogistic, DynamicFedAvgLS, NoisyGradientTracking,
                                       _chunk_draws,
                                       draw_budgets, dynamic_fedavg_fixed_point, msd_curves, msd_db, steady_state)
from fedlab.algorithms.fedavg import FedAvg
from fedlab.dynamic.bounds import dfl_msd_bound, ls_lemma1_constants, ls_msd_prediction, ls_noise_at_opt
from fedlab.dynamic.data import make_drifting_least_squares, make_drifting_logistic
from fedlab.engine import DivergenceError, History, LocalSGD, broadcast, local_sgd, run
from fedlab.dynamic.experiments import dfl_setup
from fedlab.models import LinearModel

LRS = np.array([0.003, 0.01, 0.03, 0.1, 0.3, 1.0])


def simulate(problem, n_iters, *, seed=0, **options):
    """``n_iters`` iterations of DynamicFedAvgLS run by the engine: ``(state, msd (R, n_iters + 1))``."""
    state, history = run(DynamicFedAvgLS(n_iters=n_iters, **options), problem, rounds=n_iters, seed=seed,
                         progress=False)
    return state, msd_curves(history)


def literal_algorithm_1(problem, lr, n_iters, n_active, e_k, b_k, *, drift_var, offset_var, normalize=True,
                        incremental=True, full_gradient=False, seed=0, chunk=256):
    """Algorithm 1 written agent by agent and epoch by epoch, replaying the simulator's random draws."""
    rng = numpy_rng(seed, Stream.SAMPLING)
    d = problem.dim
    offsets = np.sqrt(offset_var / d) * problem.offset_dirs
    mean_off = problem.feature_var @ offsets / problem.feature_var.sum()
    w, w_star = np.zeros(d), problem.w_start.copy()
    msd = [float(np.sum((w_star + mean_off - w) ** 2))]
    done = 0
    while done < n_iters:
        c = min(chunk, n_iters - done)
        agents, h_hat, g_noise, steps = _chunk_draws(rng, c, problem, n_active, e_k, b_k, full_gradient)
        for i in range(c):
            returned = []
            for slot, k in enumerate(agents[i]):
                target = w_star + offsets[k]
                alpha = lr / e_k[k] if normalize else lr
                w_k = w.copy()
                for e in range(e_k[k]):
                    point = w_k if incremental else w
                    grad = h_hat[i, slot, e] @ (point - target) - g_noise[i, slot, e]   # minibatch gradient
                    w_k = w_k - alpha * grad
                returned.append(w_k)
            w = np.mean(returned, axis=0)
            w_star = w_star + np.sqrt(drift_var / d) * steps[i]
            msd.append(float(np.sum((w_star + mean_off - w) ** 2)))
        done += c
    return np.array(msd)


@pytest.mark.parametrize("normalize,incremental,full_gradient", [(True, True, False), (False, True, False),
                                                                 (True, False, False), (True, True, True)])
def test_vectorised_simulation_equals_literal_algorithm(normalize, incremental, full_gradient):
    problem = make_drifting_least_squares(6, 2, offset_var=0.3, rng=0)
    e_k, b_k = draw_budgets(6, local_steps_range=(1, 4), batch_range=(2, 5), rng=1)
    _, msd = simulate(problem, 23, lr=0.2, drift_var=1e-3, offset_var=0.3, n_active=3, local_steps=e_k, batch=b_k,
                      normalize=normalize, incremental=incremental, full_gradient=full_gradient, seed=5, chunk=7)
    ref = literal_algorithm_1(problem, 0.2, 23, 3, e_k, b_k, drift_var=1e-3, offset_var=0.3, normalize=normalize,
                              incremental=incremental, full_gradient=full_gradient, seed=5, chunk=7)
    assert np.allclose(msd[0], ref, rtol=1e-10, atol=1e-14)


def test_runs_share_random_draws_and_batch_equals_single_calls():
    problem, e_k, b_k = dfl_setup(0)
    algo = DynamicFedAvgLS(lr=[0.01, 0.1, 0.1], drift_var=[0.0, 1e-4, 1e-3], offset_var=[0.1, 0.0, 1.0], n_iters=60,
                           n_active=7, local_steps=e_k, batch=b_k, chunk=25)
    state, history = run(algo, problem, rounds=60, seed=3, progress=False)
    for r, (mu, q, c) in enumerate([(0.01, 0.0, 0.1), (0.1, 1e-4, 0.0), (0.1, 1e-3, 1.0)]):
        _, single = simulate(problem, 60, lr=mu, drift_var=q, offset_var=c, n_active=7, local_steps=e_k, batch=b_k,
                             seed=3, chunk=25)
        assert np.allclose(msd_curves(history)[r], single[0], rtol=1e-10)
    assert history.rounds == list(range(61)) and np.array_equal(history.n_train, np.ones(3))
    assert msd_curves(history).shape == (3, 61) and len(history.log) == 60
    assert np.allclose(state.lr, [0.01, 0.1, 0.1]) and np.allclose(state.offset_var, [0.1, 0.0, 1.0])
    assert np.allclose(np.sum((state.w_opt - state.w) ** 2, -1), msd_curves(history)[:, -1])
    assert np.allclose(steady_state(history, 10), msd_curves(history)[:, -10:].mean(1))
    assert np.allclose(msd_db(history), 10 * np.log10(msd_curves(history)))


def test_the_state_carries_the_draws_across_runs_and_shorter_runs_are_prefixes():
    problem, e_k, b_k = dfl_setup(1)
    algo = DynamicFedAvgLS(lr=[0.02, 0.2], drift_var=1e-3, n_iters=40, n_active=5, local_steps=e_k, batch=b_k, chunk=16)
    _, whole = run(algo, problem, rounds=40, seed=4, progress=False)
    half, first = run(algo, problem, rounds=17, seed=4, progress=False)
    _, second = run(algo, problem, rounds=23, seed=4, state=half, progress=False)
    assert np.array_equal(msd_curves(first), msd_curves(whole)[:, :18])
    assert np.array_equal(msd_curves(second), msd_curves(whole)[:, 17:])
    _, sparse = run(algo, problem, rounds=40, seed=4, eval_every=10, progress=False)
    assert sparse.rounds == [0, 10, 20, 30, 40]
    assert np.array_equal(msd_curves(sparse), msd_curves(whole)[:, ::10])
    assert np.allclose(steady_state(sparse, 2), msd_curves(whole)[:, [30, 40]].mean(1))
    with pytest.raises(ValueError, match="n_iters = 40"):
        run(algo, problem, rounds=41, seed=4, progress=False)


def test_msd_readers_reject_other_histories():
    with pytest.raises(TypeError, match="History"):
        msd_curves({"msd": [1.0]})
    with pytest.raises(ValueError, match="'msd'"):
        steady_state(History(), 1)
    problem, e_k, b_k = dfl_setup(0)
    _, history = run(DynamicFedAvgLS(lr=0.1, n_iters=5, n_active=7, local_steps=e_k, batch=b_k), problem, rounds=5,
                     progress=False)
    with pytest.raises(ValueError, match="tail"):
        steady_state(history, 7)


def test_starting_at_the_optimum_removes_the_transient():
    problem, e_k, b_k = dfl_setup(0)
    _, msd = simulate(problem, 5, lr=0.01, n_active=7, local_steps=e_k, batch=b_k, w_init="optimum")
    assert msd[0, 0] == 0.0
    _, msd0 = simulate(problem, 5, lr=0.01, n_active=7, local_steps=e_k, batch=b_k)
    assert msd0[0, 0] == pytest.approx(np.sum(problem.optimum(problem.w_start) ** 2))
    start = np.array([0.5, -1.0])
    _, msd1 = simulate(problem, 5, lr=0.01, n_active=7, local_steps=e_k, batch=b_k, w_init=start)
    assert msd1[0, 0] == pytest.approx(np.sum((problem.optimum(problem.w_start) - start) ** 2))


# ------------------------------------------------------------------ facts C4-C7, C9 and the bound

@pytest.fixture(scope="module")
def sweep():
    """Steady-state MSD on the spec's LS model (3 seeds x 6 step sizes x 3 drifts), started at w^o."""
    out = []
    for seed in range(3):
        problem, e_k, b_k = dfl_setup(seed)
        mu, q = np.meshgrid(LRS, [0.0, 1e-4, 1e-3])
        _, msd = simulate(problem, 4000, lr=mu.ravel(), drift_var=q.ravel(), n_active=7, local_steps=e_k, batch=b_k,
                          w_init="optimum", seed=seed)
        c = ls_lemma1_constants(problem.feature_var, problem.offsets, b_k, 7, problem.noise_std, e_k)
        s_opt = ls_noise_at_opt(problem.feature_var, problem.offsets, b_k, 7, problem.noise_std, e_k)
        bound = np.array([dfl_msd_bound(LRS, c["strong_nu"], c["delta"], c["beta_s2"], c["sigma_s2"], c["eps2"], s)
                          for s in (0.0, 1e-4, 1e-3)])
        pred = np.array([ls_msd_prediction(LRS, problem.feature_var, s_opt, s) for s in (0.0, 1e-4, 1e-3)])
        batches = msd[:, -3200:].reshape(18, 8, 400).mean(-1)                # batch means of 400 steps
        se = (batches.std(-1, ddof=1) / np.sqrt(8)).reshape(3, 6)
        out.append((msd[:, -3200:].mean(1).reshape(3, 6), bound, pred, se))
    return tuple(np.array([o[i] for o in out]) for i in range(4))


def test_c4_stationary_msd_increases_with_the_step(sweep):
    sim = sweep[0]
    assert np.all(np.diff(sim[:, 0], axis=-1) > 0)


def test_c5_drift_gives_an_interior_optimal_step(sweep):
    sim = sweep[0]
    for s in sim:
        assert LRS[np.argmin(s[1])] in (0.03, 0.1)          # sigma_q2 = 1e-4
        assert 0 < np.argmin(s[2]) < len(LRS) - 1             # sigma_q2 = 1e-3: U-shape too
    mean = sim.mean(0)
    assert LRS[np.argmin(mean[2])] > LRS[np.argmin(mean[1])]  # the optimum moves right as the drift grows


def test_simulated_steady_state_is_within_the_bound(sweep):
    sim, bound, pred, se = sweep
    finite = np.isfinite(bound)
    assert finite[:, :, :5].all() and not finite[:, :, 5].any()  # mu = 1 is beyond 2 nu/(delta^2 + beta_s^2)
    slack = pred < 0.9 * bound                                    # the bound exceeds the exact MSD by >= 10%
    assert np.all(sim[slack & finite] <= bound[slack & finite])
    # small steps under drift: the tracking term dominates and the bound is nearly exact (pred/bound ~ 0.99), so
    # the simulated mean may exceed it only by its statistical error (3 standard errors from batch means)
    tight = ~slack & finite
    assert tight.any()
    assert np.all(sim[tight] <= bound[tight] + 3 * se[tight])


def test_c6_msd_increases_with_offset_and_drift_variances():
    problem, e_k, b_k = dfl_setup(0)
    kw = dict(n_active=7, local_steps=e_k, batch=b_k, seed=0)
    by_offset = simulate(problem, 1500, lr=0.01, offset_var=[0.0, 0.1, 1.0], **kw)[1][:, -600:].mean(1)
    by_drift = simulate(problem, 1500, lr=0.01, drift_var=[0.0, 1e-4, 1e-3], **kw)[1][:, -600:].mean(1)
    assert np.all(np.diff(by_offset) > 0) and np.all(np.diff(by_drift) > 0)


def test_c7_normalised_steps_remove_the_epoch_bias():
    problem, e_k, _ = dfl_setup(0)
    w_opt = problem.optimum(problem.w_start)
    bias = {norm: [np.linalg.norm(dynamic_fedavg_fixed_point(problem, mu, e_k, normalize=norm) - w_opt)
                   for mu in (0.01, 0.1)] for norm in (True, False)}
    assert bias[True][1] / bias[True][0] == pytest.approx(10, rel=0.1)       # O(mu)
    assert bias[False][0] > 10 * bias[True][0]                               # O(1) without normalisation
    # the closed form is the limit of the simulated algorithm (full gradients, L = K)
    _, sim = simulate(problem.with_(drift_var=0.0), 3000, lr=[0.01, 0.1], n_active=20, local_steps=e_k, batch=1,
                      full_gradient=True)
    assert np.allclose(np.sqrt(sim[:, -1]), bias[True], rtol=1e-6)


def test_c9_single_epoch_simulation_within_factor_2_of_the_exact_noise_prediction():
    problem = make_drifting_least_squares(rng=0)
    b_k = draw_budgets(20, rng=1)[1]
    s = ls_noise_at_opt(problem.feature_var, problem.offsets, b_k, 7, problem.noise_std)
    mu, q = np.meshgrid([0.01, 0.03, 0.1], [0.0, 1e-4])
    _, msd = simulate(problem, 4000, lr=mu.ravel(), drift_var=q.ravel(), n_active=7, local_steps=1, batch=b_k,
                      w_init="optimum", seed=1)
    pred = np.array([ls_msd_prediction(m, problem.feature_var, s, qq) for m, qq in zip(mu.ravel(), q.ravel())])
    ratio = msd[:, -3000:].mean(1) / pred
    assert np.all((ratio > 0.5) & (ratio < 2.0)), ratio


def test_noisy_gradient_tracking_shapes_and_zero_noise():
    _, history = run(NoisyGradientTracking(0.1, 1.0, 0.0, 0.0, n_iters=10, n_runs=3), None, rounds=10, progress=False)
    out = msd_curves(history)
    assert out.shape == (3, 11) and np.all(out == 0)
    with pytest.raises(ValueError, match="sigma_q2"):
        NoisyGradientTracking(0.1, 1.0, 1.0, -1.0, n_iters=10)
    with pytest.raises(ValueError, match="n_iters = 10"):
        run(NoisyGradientTracking(0.1, 1.0, 1.0, 0.0, n_iters=10), None, rounds=11, progress=False)


def test_noisy_gradient_tracking_is_the_linear_filter_of_its_noises():
    mu, nu, s2, q2, t, d, r = 0.2, 1.5, 1.0, 1e-2, 50, 3, 4
    _, history = run(NoisyGradientTracking(mu, nu, s2, q2, n_iters=t, dim=d, n_runs=r), None, rounds=t, seed=7,
                     progress=False)
    rng = np.random.default_rng(7)                                   # every s_i, then every q_i
    u = mu * np.sqrt(s2 / d) * rng.standard_normal((r, t, d)) + np.sqrt(q2 / d) * rng.standard_normal((r, t, d))
    e = lfilter([1.0], [1.0, -(1.0 - mu * nu)], u, axis=1)
    assert np.allclose(msd_curves(history)[:, 1:], np.sum(e ** 2, -1), rtol=1e-12, atol=0)


# ------------------------------------------------------------------ inputs

def test_bad_inputs_raise_clear_errors():
    problem, e_k, b_k = dfl_setup(0)
    kw = dict(n_iters=5, local_steps=e_k, batch=b_k)
    for n_active in (0, 21):
        with pytest.raises(ValueError, match=r"n_active.*\[1, "):  # 0 at construction, 21 > K at init
            simulate(problem, lr=0.1, n_active=n_active, **kw)
    with pytest.raises(TypeError, match="n_active"):
        DynamicFedAvgLS(lr=0.1, n_active=7.0, **kw)
    with pytest.raises(ValueError, match="step sizes must be > 0"):
        DynamicFedAvgLS(lr=[0.1, 0.0], n_active=7, **kw)
    with pytest.raises(ValueError, match="variances must be >= 0"):
        DynamicFedAvgLS(lr=0.1, drift_var=-1e-4, n_active=7, **kw)
    with pytest.raises(ValueError, match="local_steps"):
        simulate(problem, 5, lr=0.1, n_active=7, local_steps=np.zeros(20, int), batch=b_k)
    with pytest.raises(ValueError, match="same length"):
        DynamicFedAvgLS(lr=[0.1, 0.2], drift_var=[0.0, 0.1, 0.2], n_active=7, **kw)
    with pytest.raises(ValueError, match="w_init"):
        DynamicFedAvgLS(lr=0.1, n_active=7, w_init="random", **kw)
    with pytest.raises(ValueError, match="w_init"):
        simulate(problem, lr=0.1, n_active=7, w_init=np.zeros(3), **kw)
    with pytest.raises(ValueError, match="chunk"):
        DynamicFedAvgLS(lr=0.1, n_active=7, chunk=0, **kw)
    with pytest.raises(TypeError, match="DriftingLeastSquares"):
        simulate("problem", lr=0.1, n_active=7, **kw)
    with pytest.raises(DivergenceError, match="diverged"):
        simulate(problem, 400, lr=30.0, n_active=7, local_steps=1, batch=b_k)
    with pytest.raises(ValueError, match="too large"):
        dynamic_fedavg_fixed_point(problem, 5.0, 1)
    with pytest.raises(ValueError, match="low <= high"):
        draw_budgets(5, local_steps_range=(3, 1))


# ------------------------------------------------------------------ the engine version

def test_engine_version_with_equal_budgets_is_fedavg(small_data):
    model = LinearModel(5, 3)
    dyn = DynamicFedAvg(model, LocalSGD(lr=0.4, local_steps=4, batch_size=8), n_active=3)
    ref = FedAvg(model, LocalSGD(lr=0.1, local_steps=4, batch_size=8), participation=3 / small_data.n_clients,
                 weights="uniform")
    s1, h1 = run(dyn, small_data, rounds=3, seed=2, progress=False)
    s2, _ = run(ref, small_data, rounds=3, seed=2, progress=False)
    for k in s1.params:
        assert torch.allclose(s1.params[k], s2.params[k], atol=1e-6)
    assert all(len(entry["participants"]) == 3 for entry in h1.log)
    by_fraction = DynamicFedAvg(model, LocalSGD(lr=0.4, local_steps=4, batch_size=8), participation=0.5)
    s3, _ = run(by_fraction, small_data, rounds=3, seed=2, progress=False)
    for k in s1.params:
        assert torch.allclose(s1.params[k], s3.params[k])


def test_engine_version_heterogeneous_budgets_and_validation(small_data):
    k = small_data.n_clients
    solver = LocalSGD(lr=0.3, local_steps=1, batch_size=4)
    dyn = DynamicFedAvg(LinearModel(5, 3), solver, n_active=k, local_steps=np.arange(1, k + 1))
    state, hist = run(dyn, small_data, rounds=2, seed=0, progress=False)
    assert state.round == 2 and sorted(hist.log[-1]["participants"]) == list(range(k))
    # the round's model is the plain mean of each client's E_k steps of size mu / E_k, each run on its own
    one = run(dyn, small_data, rounds=1, seed=0, progress=False)[0]
    start = dyn.init(small_data, 0).params
    alone = [local_sgd(dyn.model, broadcast(start, 1), small_data.train,
                       LocalSGD(lr=0.3 / (c + 1), local_steps=c + 1, batch_size=4), key=(0, 0, Stream.LOCAL),
                       rows=[c])[0] for c in range(k)]
    for name in start:
        assert torch.allclose(one.params[name], torch.cat([a[name] for a in alone]).mean(0), atol=1e-6)
    with pytest.raises(ValueError, match=r"\[1, K\]"):
        run(DynamicFedAvg(LinearModel(5, 3), solver, n_active=k + 1), small_data, rounds=1, seed=0, progress=False)
    with pytest.raises(TypeError, match="LocalSGD"):
        DynamicFedAvg(LinearModel(5, 3), 0.3, n_active=2)
    with pytest.raises(ValueError, match="n_active"):
        DynamicFedAvg(LinearModel(5, 3), solver, n_active=0)
    with pytest.raises(ValueError, match="local_steps"):
        run(DynamicFedAvg(LinearModel(5, 3), solver, n_active=2, local_steps=[1, 2]), small_data, rounds=1, seed=0,
            progress=False)


# ---------------------------------------------------------------- the paper's logistic model (29)

def literal_logistic_rounds(problem, lr, n_rounds, n_active, e_k, b_k, *, drift_var, offset_var, seed=0):
    """Algorithm 1 on the logistic model, agent by agent and sample by sample, with the draws of
    ``DynamicFedAvgLogistic`` (same generator, same order): the iterates after every round."""
    rng = numpy_rng(seed, Stream.SAMPLING)
    w, w_star = np.zeros(2), problem.w_start.copy()
    out = []
    for _ in range(n_rounds):
        agents = np.argsort(rng.random(problem.n_agents))[:n_active]
        e_max, b_max = int(e_k[agents].max()), int(b_k[agents].max())
        h = rng.standard_normal((n_active, e_max, b_max, 2)) * np.sqrt(problem.feature_var[agents])[:, None, None, None]
        step = rng.standard_normal(2)
        finals = []
        for j, k in enumerate(agents):
            target = w_star + np.sqrt(offset_var / 2) * problem.offset_dirs[k]
            wk = w.copy()
            for e in range(e_k[k]):
                g = 2 * problem.reg_rho * wk
                for b in range(b_k[k]):
                    y = np.sign(h[j, e, b] @ target)
                    g = g - y * h[j, e, b] / (1 + np.exp(y * h[j, e, b] @ wk)) / b_k[k]
                wk = wk - lr / e_k[k] * g
            finals.append(wk)
        w = np.mean(finals, axis=0)
        w_star = w_star + np.sqrt(drift_var / 2) * step
        out.append(w)
    return np.array(out)


def test_logistic_simulation_matches_the_literal_algorithm():
    problem = make_drifting_logistic(6, rng=2)
    e_k, b_k = np.array([1, 3, 2, 1, 4, 2]), np.array([3, 5, 4, 2, 3, 5])
    algo = DynamicFedAvgLogistic(lr=[0.3, 1.0], drift_var=[1e-2, 0.0], offset_var=[0.1, 1.0], n_iters=5, n_active=3,
                                 local_steps=e_k, batch=b_k)
    state = algo.init(problem, 0)
    iterates = []
    for _ in range(5):
        state, _ = algo.round(state, problem, 0)
        iterates.append(state.w)
    for r, (lr, q, c) in enumerate(((0.3, 1e-2, 0.1), (1.0, 0.0, 1.0))):
        ref = literal_logistic_rounds(problem, lr, 5, 3, e_k, b_k, drift_var=q, offset_var=c)
        assert np.allclose(np.array(iterates)[:, r], ref, atol=1e-12)
    # the reference is the minimiser at the drifted common model
    assert np.allclose(state.w_opt[0], problem.optimum(state.w_star[0], 0.1), atol=1e-8)


def test_logistic_runs_share_draws_and_start_where_asked():
    problem = make_drifting_logistic(8, rng=0)
    kw = dict(n_iters=30, n_active=3, local_steps=2, batch=5)
    _, h = run(DynamicFedAvgLogistic(lr=[0.1, 0.1, 1.0], **kw), problem, rounds=30, progress=False)
    msd = msd_curves(h)
    assert msd.shape == (3, 31) and np.array_equal(msd[0], msd[1])       # common random numbers
    assert msd[0, -1] < msd[0, 0]                                          # it learns from w_0 = 0
    _, h_opt = run(DynamicFedAvgLogistic(lr=0.1, w_init="optimum", **kw), problem, rounds=30, progress=False)
    assert msd_curves(h_opt)[0, 0] == 0.0 and steady_state(h_opt, 10)[0] < 1e-2
    with pytest.raises(TypeError, match="DriftingLogistic"):
        run(DynamicFedAvgLogistic(lr=0.1, **kw), make_drifting_least_squares(8, 2, rng=0), rounds=2, progress=False)
    with pytest.raises(ValueError, match="n_iters"):
        run(DynamicFedAvgLogistic(lr=0.1, **{**kw, "n_iters": 2}), problem, rounds=3, progress=False)
