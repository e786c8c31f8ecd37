"""Arrival processes, memories and stream data sets (fedlab.streams.data)."""
import numpy as np
import pytest
import torch

from fedlab.streams.data import (ARRIVALS, MEMORY_RULES, ConstantArrivals, IntermittentArrivals, Memory,
                                 MemorySchedule, PoissonArrivals, StaticArrivals, StreamDataset,
                                 StreamSynthetic, arrival_counts, case_study_sizes, make_arrivals,
                                 make_case_study, make_stream_dataset, make_stream_synthetic, simulate_memory,
                                 synthetic_case_study)
from fedlab.engine import ClientData, FederatedDataset

ARRIVAL_KWARGS = {"constant": {"rate": 3}, "static": {"size": 7}, "poisson": {"rate": 2.5},
                  "intermittent": {"rate": 4, "p_online": 0.3}}


@pytest.mark.parametrize("kind", list(ARRIVALS))
def test_every_arrival_process(kind):
    proc = make_arrivals(kind, **ARRIVAL_KWARGS[kind])
    counts = proc.counts(40, rng=0)
    assert counts.shape == (40,) and counts.dtype == np.int64 and counts.min() >= 0
    assert np.array_equal(counts, proc.counts(40, rng=0))  # reproducible from the seed


def test_arrival_values():
    assert np.array_equal(ConstantArrivals(2).counts(4), [2, 2, 2, 2])
    assert np.array_equal(StaticArrivals(5).counts(3), [5, 0, 0])
    c = PoissonArrivals(3.0).counts(4000, rng=1)
    assert abs(c.mean() - 3.0) < 0.1
    on = IntermittentArrivals(2, rounds=(1, 2)).counts(5)
    assert np.array_equal(on, [0, 2, 2, 0, 0])
    frac = (IntermittentArrivals(1, p_online=0.25).counts(4000, rng=2) > 0).mean()
    assert abs(frac - 0.25) < 0.03
    assert np.array_equal(arrival_counts([1, 0, 2], 3), [1, 0, 2])


def test_arrival_errors():
    with pytest.raises(ValueError, match="rate"):
        ConstantArrivals(-1)
    with pytest.raises(TypeError, match="rate"):
        ConstantArrivals(1.5)
    with pytest.raises(ValueError, match="rate"):
        PoissonArrivals(0.0)
    with pytest.raises(ValueError, match="p_online"):
        IntermittentArrivals(1, p_online=0.0)
    with pytest.raises(ValueError, match="horizon"):
        IntermittentArrivals(1, rounds=(5,)).counts(3)
    with pytest.raises(ValueError, match="kind"):
        make_arrivals("bursty", rate=1)
    with pytest.raises(ValueError, match="horizon"):
        ConstantArrivals(1).counts(0)
    with pytest.raises(ValueError, match="counts"):
        arrival_counts([1, 2], 3)


@pytest.mark.parametrize("rule", list(MEMORY_RULES))
def test_memories_never_exceed_capacity(rule):
    rng = np.random.default_rng(3)
    for capacity in (0, 1, 3, 7):
        counts = rng.poisson(2.5, size=30)
        s = simulate_memory(counts, capacity, rule, rng=4)
        assert s.sizes.max() <= capacity
        assert s.in_memory.shape == (30, counts.sum())
        # a sample is never in memory before it arrives
        t_idx, i_idx = np.nonzero(s.in_memory)
        assert np.all(s.arrival[i_idx] <= t_idx)


def test_fifo_evicts_the_oldest():
    mem = Memory(4, "fifo")
    mem.update([0, 1, 2])
    evicted = mem.update([3, 4])
    assert evicted.tolist() == [0] and mem.contents.tolist() == [1, 2, 3, 4]
    assert mem.update([5, 6, 7]).tolist() == [1, 2, 3]
    assert mem.contents.tolist() == [4, 5, 6, 7] and len(mem) == 4
    # batch larger than the capacity keeps its newest samples
    assert Memory(2, "fifo").update([0, 1, 2]).tolist() == [0]


def test_fifo_schedule_matches_the_sanity_fact():
    # one client, b = 2, C = 4, T = 5: every sample lives 2 rounds except the last batch (1 round)
    s = simulate_memory(ConstantArrivals(2).counts(5), 4, "fifo")
    assert s.stay_times.tolist() == [2] * 8 + [1, 1]
    assert s.sizes.tolist() == [2, 4, 4, 4, 4]
    assert s.indices(2).tolist() == [2, 3, 4, 5]
    assert s.horizon == 5 and s.n_samples == 10


def test_keep_current_random_rules():
    keep = Memory(3, "keep")
    keep.update([0, 1])
    assert keep.update([2, 3]).tolist() == [3] and keep.contents.tolist() == [0, 1, 2]
    cur = Memory(5, "current")
    cur.update([0, 1])
    cur.update([2])
    assert cur.contents.tolist() == [2]
    cur.update([])
    assert len(cur) == 0
    rnd = Memory(3, "random", rng=0)
    rnd.update([0, 1, 2])
    rnd.update([3])
    assert 3 in rnd.contents and len(rnd) == 3


def test_reservoir_is_a_uniform_sample():
    hits = np.zeros(20)
    for seed in range(400):
        s = simulate_memory(np.ones(20, dtype=int), 5, "reservoir", rng=seed)
        hits += s.in_memory[-1]
    freq = hits / 400
    assert np.allclose(freq, 5 / 20, atol=0.08)


def test_memory_errors():
    with pytest.raises(ValueError, match="rule"):
        Memory(3, "lru")
    with pytest.raises(ValueError, match="capacity"):
        Memory(-1)
    mem = Memory(3)
    mem.update([0, 1])
    with pytest.raises(ValueError, match="new"):
        mem.update([1])
    with pytest.raises(ValueError, match="distinct"):
        Memory(3).update([0, 0])
    with pytest.raises(ValueError, match="counts"):
        simulate_memory([1.5, 2], 3)


def _streams():
    syn = make_stream_synthetic(4, dim=3, eps=0.1, rng=0)
    xs, ys = syn.sample([6, 6, 8, 8], rng=1)
    return syn, xs, ys


def test_case_study_dataset():
    syn, xs, ys = _streams()
    data = make_case_study(xs[:2], ys[:2], xs[2:], ys[2:], horizon=4, test_xs=xs, test_ys=ys, n_classes=2)
    assert isinstance(data, FederatedDataset) and isinstance(data, StreamDataset)
    assert data.horizon == 4 and data.m_hist == 2
    assert data.historical.tolist() == [True, True, False, False]
    assert data.n_samples.tolist() == [6, 6, 8, 8]
    assert np.isclose(data.fractions.sum(), 1) and np.isclose(data.fractions[:2].sum(), 12 / 28)
    assert data.memory_count.tolist() == [[6, 6, 2, 2]] * 4
    mem = data.memory(2)
    assert isinstance(mem, ClientData) and mem.n.tolist() == [6, 6, 2, 2]
    # fresh client 2 holds samples 4, 5 at round 2 (b = 2, FIFO C = 2)
    assert torch.equal(mem.x[2, :2], torch.as_tensor(xs[2][4:6]))
    assert torch.equal(mem.x[0, :6], torch.as_tensor(xs[0]))
    sched = data.schedules()
    assert isinstance(sched[0], MemorySchedule) and sched[0].stay_times.tolist() == [4] * 6
    assert sched[3].stay_times.tolist() == [1] * 8
    w = torch.ones(4, data.memory_index.shape[2])
    assert data.memory(0, weight=w).weight is w
    assert data.in_memory(2).shape == (4, 8)


def test_make_stream_dataset_general():
    syn, xs, ys = _streams()
    data = make_stream_dataset(xs, ys, [StaticArrivals(6), PoissonArrivals(1.0), ConstantArrivals(2), [0, 4, 0, 4]],
                               [6, 3, 2, 4], ["keep", "reservoir", "fifo", "current"], horizon=4, rng=0)
    assert data.memory_count.shape == (4, 4)
    assert data.memory_count[:, 3].tolist() == [0, 4, 0, 4]
    assert int(data.memory_count.max()) <= 6
    assert data.test.n.tolist() == [0, 0, 0, 0]


def test_stream_dataset_errors():
    syn, xs, ys = _streams()
    with pytest.raises(ValueError, match="multiple of horizon"):
        make_case_study(xs[:2], ys[:2], xs[2:], ys[2:], horizon=3)
    with pytest.raises(ValueError, match="only"):
        make_stream_dataset(xs, ys, [ConstantArrivals(3)] * 4, [3] * 4, horizon=4)
    with pytest.raises(ValueError, match="one entry per client"):
        make_stream_dataset(xs, ys, [ConstantArrivals(1)] * 3, [3] * 4, horizon=4)
    with pytest.raises(ValueError, match="rules"):
        make_stream_dataset(xs, ys, [ConstantArrivals(1)] * 4, [3] * 4, ["fifo"] * 2, horizon=4)
    s = simulate_memory([1, 1], 1)
    with pytest.raises(ValueError, match="schedule receives"):
        StreamDataset.from_schedules([xs[0]], [ys[0]], [s])
    with pytest.raises(ValueError, match="memory_index"):
        StreamDataset(ClientData.from_arrays(xs, ys), ClientData.from_arrays(xs, ys))
    data = make_case_study(xs[:2], ys[:2], xs[2:], ys[2:], horizon=4)
    with pytest.raises(ValueError, match="t must"):
        data.memory(4)


def test_stream_synthetic():
    syn = make_stream_synthetic(3, dim=5, eps=0.0, rng=0)
    assert isinstance(syn, StreamSynthetic) and np.allclose(syn.theta, syn.theta0)
    xs, ys = syn.sample([4, 0, 2], rng=1)
    assert [len(x) for x in xs] == [4, 0, 2] and xs[0].dtype == np.float32 and set(ys[0]) <= {0, 1}
    assert np.all(np.abs(xs[0]) <= 1)
    assert 0.5 < syn.bayes_accuracy(0, n=2000, rng=0) <= 1.0
    lin = make_stream_synthetic(2, dim=4, eps=0.3, task="linear", noise=0.0, rng=0)
    x, y = lin.sample([10, 10], rng=0)
    assert np.allclose(y[1], x[1] @ lin.theta[1], atol=1e-5)
    with pytest.raises(ValueError, match="task"):
        make_stream_synthetic(2, task="poisson")
    with pytest.raises(ValueError, match="eps"):
        make_stream_synthetic(2, eps=-1.0)


def test_case_study_sizes():
    assert case_study_sizes(0.05, 1000, 50, 5, 5) == (10, 4)
    assert case_study_sizes(0.2, 1000, 50, 5, 5) == (40, 3)
    assert case_study_sizes(0.5, 1000, 50, 5, 5) == (100, 2)
    assert case_study_sizes(0.2, 10000, 100, 5, 5) == (400, 16)
    with pytest.raises(ValueError, match="h must"):
        case_study_sizes(1.0, 1000, 50, 5, 5)


def test_synthetic_case_study():
    data, gen = synthetic_case_study(h=0.2, n_total=200, horizon=5, m_hist=2, m_fresh=2, dim=4, test_per_client=10)
    assert data.m_hist == 2 and data.horizon == 5 and data.n_clients == 4
    assert data.test.n.tolist() == [10] * 4 and gen.theta.shape == (4, 4)
    lin, gen = synthetic_case_study(task="linear", h=0.2, n_total=200, horizon=5, m_hist=2, m_fresh=2, dim=4)
    assert lin.train.y.is_floating_point() and lin.test.n.sum() == 0
    with pytest.raises(ValueError, match="task"):
        synthetic_case_study(task="poisson")
