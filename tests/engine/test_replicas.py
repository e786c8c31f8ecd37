"""Replicas as a batch dimension (fedlab.engine.replicas): each replica's History is, bit for bit, its run alone."""
import numpy as np
import pytest

from fedlab.algorithms import FedAvg
from fedlab.algorithms.fedem import FedEM
from fedlab.availability.algorithms.cafed import CAFed
from fedlab.availability.data import make_population
from fedlab.engine import FederatedDataset, LocalSGD, lockstep, run, run_replicas
from fedlab.markovian.algorithms import StreamingMinibatchSGD
from fedlab.markovian.data import make_markov_regression, markov_streams, two_state_streams
from fedlab.models import MLP, LinearModel
from helpers import make_clients

SEEDS = [0, 1, 2]
SGD = LocalSGD(lr=0.1, local_steps=3, batch_size=8)
ADAM = LocalSGD(lr=0.01, local_steps=2, batch_size=8, optimizer="adam", keep_state=True)


def _data(seed=0, n_clients=6):
    xs, ys = make_clients(n_clients=n_clients, seed=seed)
    return FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.25, n_classes=3, seed=seed)


def assert_same_history(a, b):
    assert a.rounds == b.rounds and a.log == b.log
    assert a.clients.keys() == b.clients.keys()
    for name in a.clients:
        for x, y in zip(a.clients[name], b.clients[name]):
            np.testing.assert_array_equal(x, y, err_msg=name)


def assert_replicas_alone(algorithm, data, rounds, seeds=SEEDS, **options):
    together = run_replicas(algorithm, data, seeds=seeds, rounds=rounds, **options)
    datas = data if isinstance(data, list) else [data] * len(seeds)
    for (_, history), seed, d in zip(together, seeds, datas):
        assert_same_history(history, run(algorithm, d, rounds=rounds, seed=seed, progress=False, **options)[1])


@pytest.mark.parametrize("backend", ["batched", "loop"])
@pytest.mark.parametrize("solver", [SGD, ADAM], ids=["sgd", "adam-kept"])
def test_fedavg_replicas_equal_their_runs_alone(backend, solver):
    assert_replicas_alone(FedAvg(MLP(5, (8,), 3), solver, participation=0.5, backend=backend), _data(), rounds=4)


def test_replicas_with_their_own_data_sets_are_stacked_and_equal_their_runs_alone():
    datas = [_data(seed, n_clients=5 + seed) for seed in SEEDS]   # different sizes and client counts
    assert_replicas_alone(FedAvg(LinearModel(5, 3), SGD, backend="batched"), datas, rounds=3)


def test_a_personalised_method_replicas_equal_their_runs_alone():
    assert_replicas_alone(FedEM(LinearModel(5, 3), SGD, n_components=3, participation=0.5, backend="batched"),
                          _data(), rounds=3)


def test_cafed_replicas_equal_their_runs_alone():
    pop = make_population(6, layout="thesis4", rng=0)
    trace = pop.simulate(5, rng=1)
    algorithm = CAFed(LinearModel(5, 3), LocalSGD(lr=0.05, local_steps=2, batch_size=4), participation=trace,
                      pi=pop.client_pi, lam=pop.client_lambda)
    assert_replicas_alone(algorithm, _data(), rounds=5)


def test_a_numpy_path_algorithm_runs_in_lockstep_unchanged():
    data = markov_streams(make_markov_regression(3, dim=2, rng=0),
                          two_state_streams(0.1, n_clients=3, n_rounds=4, n_local=3, rng=0))
    assert_replicas_alone(StreamingMinibatchSGD(0.05), data, rounds=4)


def test_different_algorithms_in_one_lockstep_each_get_their_own_result():
    data = _data()
    tasks = [lambda: run(FedAvg(LinearModel(5, 3), SGD, backend="batched"), data, rounds=3, seed=0, progress=False),
             lambda: run(FedAvg(MLP(5, (4,), 3), SGD, backend="batched"), data, rounds=2, seed=1, progress=False),
             lambda: 42]
    first, second, third = lockstep(tasks)
    assert third == 42
    assert_same_history(first[1], tasks[0]()[1])
    assert_same_history(second[1], tasks[1]()[1])


def test_a_failing_replica_is_named_and_the_others_finish():
    done = []

    def fine():
        done.append(run(FedAvg(LinearModel(5, 3), SGD), _data(), rounds=2, seed=0, progress=False))

    def broken():
        raise KeyError("boom")
    with pytest.raises(KeyError, match="boom") as err:
        lockstep([fine, broken])
    assert "in replica 1 of 2" in "".join(err.value.__notes__) and len(done) == 1


def test_nested_lockstep_runs_its_tasks_in_turn_and_bad_arguments_are_refused():
    algorithm = FedAvg(LinearModel(5, 3), SGD)
    alone = [run(algorithm, _data(), rounds=2, seed=s, progress=False)[1].final("test_accuracy") for s in (0, 1, 2)]
    inner = lambda: [run(algorithm, _data(), rounds=2, seed=s, progress=False)[1].final("test_accuracy")  # noqa: E731
                     for s in (1, 2)]
    nested = lockstep([lambda: run(algorithm, _data(), rounds=2, seed=0, progress=False)[1].final("test_accuracy"),
                       lambda: lockstep([lambda: inner()[0], lambda: inner()[1]])])
    assert [nested[0], *nested[1]] == alone
    with pytest.raises(TypeError, match=r"tasks\[1\]"):
        lockstep([lambda: 1, 2])
    with pytest.raises(ValueError, match="seeds must not be empty"):
        run_replicas(algorithm, _data(), seeds=[], rounds=1)
    with pytest.raises(ValueError, match=r"seeds\[1\]"):
        run_replicas(algorithm, _data(), seeds=[0, -1], rounds=1)
    with pytest.raises(ValueError, match="one per seed"):
        run_replicas(algorithm, [_data()], seeds=[0, 1], rounds=1)


def test_the_replicas_train_in_one_call_per_local_round(monkeypatch):
    from fedlab.engine import replicas
    calls = []
    real = replicas.execute
    monkeypatch.setattr(replicas, "execute", lambda job: calls.append(len(job.rows)) or real(job))
    run_replicas(FedAvg(LinearModel(5, 3), SGD, backend="batched"), _data(), seeds=SEEDS, rounds=4)
    assert calls == [3 * 6] * 4


@pytest.mark.parametrize("backend", ["batched", "loop"])
@pytest.mark.parametrize("solver", [LocalSGD(lr=1.0, local_steps=3, batch_size=8, weight_decay=1e-3),
                                    LocalSGD(lr=1.0, epochs=1, batch_size=4, momentum=0.9, keep_state=True)],
                         ids=["sgd", "momentum-epochs"])
def test_a_step_size_grid_trains_as_one_call_and_each_run_equals_its_run_alone(monkeypatch, backend, solver):
    """SGD runs that differ only in their step size merge: one call a round, each row stepping with its own run's
    step size, and each History bit for bit the run's alone; Adam runs of different step sizes do not merge."""
    from dataclasses import replace

    from fedlab.engine import replicas
    data, grid = _data(), [10 ** -0.5, 0.1, 10 ** -1.5]
    algorithms = [FedAvg(MLP(5, (8,), 3), replace(solver, lr=lr), backend=backend) for lr in grid]
    alone = [run(a, data, rounds=3, seed=0, progress=False)[1] for a in algorithms]
    calls = []
    real = replicas.execute
    monkeypatch.setattr(replicas, "execute", lambda job: calls.append(len(job.rows)) or real(job))
    together = lockstep([lambda a=a: run(a, data, rounds=3, seed=0, progress=False)[1] for a in algorithms])
    assert calls == [3 * data.n_clients] * 3
    for a, b in zip(together, alone):
        assert_same_history(a, b)
    calls.clear()
    lockstep([lambda lr=lr: run(FedAvg(MLP(5, (8,), 3), replace(ADAM, lr=lr), backend=backend), data, rounds=2,
                                seed=0, progress=False) for lr in grid[:2]])
    assert calls == [data.n_clients] * 4
