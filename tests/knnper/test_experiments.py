"""Experiments of the kNN-Per chapter (fedlab.knnper.experiments): the model, protocol, end-to-end facts."""
import json

import numpy as np
import pytest
import torch

from fedlab.engine import LocalSGD
from fedlab.algorithms import METHODS
from fedlab.knnper.algorithms import PRESETS
from fedlab.knnper.data import digits_split
from fedlab.knnper.experiments import (CHAPTER_METHODS, DIGITS_HIDDEN, LR_GRID, NewClientFeatures,
                                       capacity_curve, capacity_lambda_surface, compare_methods, digits_model,
                                       distribution_shift, knn_vs_global_quality, lambda_selection_diagnosis,
                                       new_client_features, scores, sensitivity_from_features,
                                       surface_from_features, system_heterogeneity, train_global,
                                       unseen_clients)

torch.set_num_threads(1)
SMALL = dict(n_clients=6, rounds=4, local_steps=2)


def _strip_times(result):
    """Drop wall-clock entries (not seed-deterministic)."""
    if isinstance(result, dict):
        return {k: _strip_times(v) for k, v in result.items() if "seconds" not in k}
    return result


# ---------------------------------------------------------------- the chapter's model


def test_digits_model_and_lr_grid():
    m = digits_model()
    assert m.hidden == DIGITS_HIDDEN and m.in_features == 64 and m.out_features == 10
    assert LR_GRID[0] == pytest.approx(10 ** -0.5) and len(LR_GRID) == 3


def test_scores():
    out = scores([1.0, 0.5, 0.0], [2, 2, 0])
    assert out["average"] == pytest.approx(0.75)
    assert out["bottom_decile"] == pytest.approx(np.percentile([1.0, 0.5, 0.0], 10))


# ---------------------------------------------------------------- methods


def test_every_preset_of_the_chapter_builds():
    solver = LocalSGD(lr=0.1)
    assert list(CHAPTER_METHODS) == list(PRESETS)
    for name, method in PRESETS.items():
        alg = method(digits_model(), solver, **({"lam": 0.5} if name.startswith("knnper") else {}))
        assert hasattr(alg, "round") and hasattr(alg, "evaluate") and method.name == f"knnper:{name}"
    assert PRESETS["knnper_shared"].options == {"lambda_selection": "shared"}
    with pytest.raises(ValueError, match="name"):
        METHODS.build("knnper:pfedgp", digits_model(), solver)


def test_train_global_checkpoints():
    s = digits_split(4, 1.0, seed=0)
    params, seconds, saved = train_global(s.federated(), rounds=3, seed=0, local_steps=1, checkpoints=(0, 2, 3))
    assert sorted(saved) == [0, 2, 3] and seconds > 0
    assert all(torch.equal(params[k], saved[3][k]) for k in params)
    assert not torch.equal(saved[0]["w0"], saved[2]["w0"])


# ---------------------------------------------------------------- experiment functions


def test_compare_methods_small_and_deterministic():
    methods = ("fedavg", "local", "knnper", "knnper_shared")
    a = compare_methods(methods=methods, seed=3, **SMALL)
    b = compare_methods(methods=methods, seed=3, **SMALL)
    assert _strip_times(a) == _strip_times(b)
    json.dumps(a)
    assert set(a["methods"]) == set(methods)
    for m in methods:
        assert 0 <= a["methods"][m]["bottom_decile"] <= 1 and 0 <= a["methods"][m]["average"] <= 1
        assert len(a["methods"][m]["per_client"]) == 6
    assert set(a["lambdas"]) <= {0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0}
    assert a["diagnosis"]["global"] == pytest.approx(a["methods"]["fedavg"]["average"])
    assert a["diagnosis"]["oracle"] >= max(a["methods"]["knnper"]["average"], a["diagnosis"]["shared"]) - 1e-12
    with pytest.raises(ValueError, match="methods"):
        compare_methods(methods=("pfedgp",), **SMALL)


def test_compare_methods_with_lr_selection():
    out = compare_methods(methods=("fedavg", "knnper"), lr_grid=(0.3, 0.03), seed=0, **SMALL)
    assert out["methods"]["fedavg"]["lr"] in (0.3, 0.03)
    assert len(out["methods"]["fedavg"]["validation_by_lr"]) == 2
    assert out["methods"]["knnper"]["lr"] == out["methods"]["fedavg"]["lr"]


def test_knnper_beats_fedavg_on_non_iid_digits():  # spec §11.3 fact 24 (soft, ~1 s)
    out = compare_methods(alpha=0.3, n_clients=20, rounds=100, methods=("fedavg", "knnper", "knnper_shared"), seed=0)
    fedavg = out["methods"]["fedavg"]["average"]
    assert out["methods"]["knnper_shared"]["average"] > fedavg
    assert out["methods"]["knnper"]["average"] >= fedavg


def test_unseen_clients_small():
    out = unseen_clients(methods=("fedavg", "fedavg+", "ditto", "fedrep", "knnper", "knnper_shared"), seed=0,
                         **SMALL)
    assert len(out["new_clients"]) == 1 and len(out["old_clients"]) == 5
    for m, v in out["methods"].items():
        assert 0 <= v["average"] <= 1 and 0 <= v["train_accuracy"] <= 1, m
    with pytest.raises(ValueError, match="new_fraction"):
        unseen_clients(new_fraction=1.0, **SMALL)
    with pytest.raises(ValueError, match="new-client procedure"):
        unseen_clients(methods=("apfl",), **SMALL)


def test_unseen_clients_fedem():
    out = unseen_clients(methods=("fedem",), seed=0, **SMALL)
    assert 0 <= out["methods"]["fedem"]["average"] <= 1


def test_capacity_lambda_surface_shape_and_global_row():
    out = capacity_lambda_surface(capacities=(0.0, 0.5, 1.0), lambdas=(0.0, 0.5, 1.0), seed=0, **SMALL)
    avg = np.array(out["average"])
    assert avg.shape == (3, 3)
    assert np.allclose(avg[0], avg[0, 0]) and np.allclose(avg[:, 0], avg[0, 0])  # capacity 0 or λ = 0: global
    assert np.array(out["store_sizes"])[0].sum() == 0
    lam_opt = np.array(out["lambda_opt"])
    assert lam_opt.shape == (3, 3) and np.all((lam_opt <= 1))


def test_knn_vs_global_quality():
    out = knn_vs_global_quality(checkpoints=(1, 3), seed=0, **{k: v for k, v in SMALL.items() if k != "rounds"})
    assert out["rounds"] == [1, 3]
    assert len(out["global"]) == len(out["knn_only"]) == len(out["knnper"]) == 2


def test_distribution_shift_strategies():  # spec §11.3 fact 25
    out = distribution_shift(seed=0)
    acc, k0 = out["accuracy"], out["k0"]
    pre_fixed, post_fixed = np.mean(acc["fixed"][:k0]), np.mean(acc["fixed"][k0:])
    assert pre_fixed - post_fixed >= 0.20
    assert abs(acc["fifo"][-1] - np.mean(acc["fifo"][:k0])) <= 0.05
    assert out["store_size"]["fifo"][0] == out["store_size"]["fifo"][-1]
    assert out["store_size"]["concat"][-1] > out["store_size"]["concat"][0]
    assert np.all(np.diff(out["store_size"]["concat"]) >= 0)
    with pytest.raises(ValueError, match="n_steps"):
        distribution_shift(k0=5, n_steps=5)


def test_system_heterogeneity():
    out = system_heterogeneity(delta_cs=(0.0, 0.4), seed=0, lam=0.5, **SMALL)
    assert len(out["all"]) == len(out["weak"]) == len(out["strong"]) == 2
    with pytest.raises(ValueError, match="delta_c"):
        system_heterogeneity(delta_cs=(0.7,), **SMALL)


def test_lambda_selection_diagnosis_matches_compare_methods():
    d = lambda_selection_diagnosis(seed=2, **SMALL)
    c = compare_methods(methods=("fedavg", "knnper", "knnper_shared"), seed=2, **SMALL)
    assert d == c["diagnosis"]
    assert d["per_client_smallest"] == pytest.approx(c["methods"]["knnper"]["average"])
    assert d["shared"] == pytest.approx(c["methods"]["knnper_shared"]["average"])
    assert d["shared_lambda"] == c["shared_lambda"]
    assert 0 <= d["clients_all_tied"] <= 6 and len(d["validation_sizes"]) == 6


def test_new_client_features_and_surface_from_features():
    f = new_client_features(seed=0, new_fraction=0.5, **SMALL)
    assert isinstance(f, NewClientFeatures) and f.query.n_clients == 3 and f.store.n_clients == 3
    assert f.store.sizes.tolist() == (f.train_store.sizes + f.validation.sizes).tolist()
    out = surface_from_features(f, capacities=[0.0, 1.0], lambdas=[0.0, 1.0])
    assert out["average"][0][0] == pytest.approx(f.global_accuracy)
    again = system_heterogeneity(features=f, delta_cs=(0.0,), lam=0.0)
    assert again["all"][0] == pytest.approx(f.global_accuracy)
    with pytest.raises(ValueError, match="new_fraction"):
        new_client_features(new_fraction=0.0, **SMALL)
    with pytest.raises(ValueError, match="at least 2"):
        system_heterogeneity(features=new_client_features(seed=0, new_fraction=0.1, **SMALL))


def test_new_client_capacity_fedavg_flat_and_full_capacity_matches_unseen_clients():
    from fedlab.knnper.experiments import new_client_capacity

    methods = ("fedavg", "ditto", "knnper")
    out = new_client_capacity(methods=methods, capacities=(0.3, 1.0), new_fraction=0.5, seed=0, **SMALL)
    assert out["average"]["fedavg"][0] == out["average"]["fedavg"][1]       # the global model ignores local data
    assert out["store_median"][0] < out["store_median"][1]
    full = unseen_clients(methods=methods, new_fraction=0.5, seed=0, **SMALL)
    for m in methods:
        assert out["average"][m][1] == pytest.approx(full["methods"][m]["average"]), m
    with pytest.raises(TypeError, match="capacities"):
        new_client_capacity(capacities=(), **SMALL)


def test_capacity_retrained_global_and_knnper_per_capacity():
    from fedlab.knnper.experiments import capacity_retrained

    out = capacity_retrained(capacities=(0.5, 1.0), seed=0, **SMALL)
    assert len(out["global"]) == len(out["knnper"]) == 2 and out["store_median"][0] < out["store_median"][1]
    assert all(0 <= v <= 1 for v in out["global"] + out["knnper"])
    with pytest.raises(ValueError, match="capacities"):
        capacity_retrained(capacities=(1.5,), **SMALL)


def test_hyperparameter_sensitivity_k_and_sigma():
    from fedlab.knnper.experiments import hyperparameter_sensitivity

    out = hyperparameter_sensitivity(k_values=(1, 10), sigma_values=(1.0, 10.0), seed=0,
                                     **{**SMALL, "n_clients": 6})
    assert len(out["best_by_k"]) == 2 and len(out["best_by_sigma"]) == 2
    assert out["best_by_k"][1] == pytest.approx(out["best_by_sigma"][0])          # k = 10, σ = 1 in both
    assert out["n_test"] > 0 and len(out["store_sizes"]) == 3
    with pytest.raises(ValueError, match="k_values"):
        hyperparameter_sensitivity(k_values=(0,), **SMALL)


def test_sensitivity_and_capacity_curve_from_features():
    f = new_client_features(seed=0, new_fraction=0.5, **SMALL)
    out = sensitivity_from_features(f, k_values=(1, 10), sigma_values=(1.0, 10.0), lambdas=(0.0, 0.5, 1.0))
    assert out["best_by_k"][1] == pytest.approx(out["best_by_sigma"][0])     # k = 10, σ = 1 in both
    assert all(v >= f.global_accuracy - 1e-12 for v in out["best_by_k"])    # λ = 0 is the global model
    curve = capacity_curve(f, [0.0, 0.5, 1.0])
    assert len(curve) == 3 and curve[0] == pytest.approx(f.global_accuracy)  # capacity 0: the global model
    with pytest.raises(ValueError, match="capacities"):
        capacity_curve(f, [1.5])
    with pytest.raises(TypeError, match="feats"):
        sensitivity_from_features(f.store)


def test_compare_methods_with_the_authors_recipe():
    """Full mode's recipe: every method (and kNN-Per's selection model) trains one epoch a round with weight decay;
    the results differ from the plain solver's and stay deterministic."""
    from fedlab.knnper.real_data import AUTHORS_RECIPE

    methods = ("fedavg", "ditto", "knnper")
    recipe = {**AUTHORS_RECIPE, "schedule": "multi_step"}
    a = compare_methods(methods=methods, seed=3, recipe=recipe, **SMALL)
    assert _strip_times(a) == _strip_times(compare_methods(methods=methods, seed=3, recipe=recipe, **SMALL))
    plain = compare_methods(methods=methods, seed=3, **SMALL)
    assert a["methods"]["fedavg"]["per_client"] != plain["methods"]["fedavg"]["per_client"]
    with pytest.raises(ValueError, match="recipe takes"):
        compare_methods(methods=methods, seed=3, recipe={"nesterov": True}, **SMALL)


# ---------------------------------------------------------------- the trainings of one split, each made once


def _states_equal(a, b) -> bool:
    fields = [f for f in ("params", "personal") if getattr(a, f, None) is not None]
    return all(torch.equal(getattr(a, f)[k], getattr(b, f)[k]) for f in fields for k in getattr(a, f))


def test_fedavg_plus_shares_fedavgs_run_bit_for_bit():
    """FedAvg+ trains as FedAvg: its state from FedAvg's run is the one its own run reaches, and so is its evaluation;
    kNN-Per's selection model is FedAvg's run on the train parts."""
    from fedlab.engine import run
    from fedlab.knnper.experiments import _Trainings, _method

    split = digits_split(6, 0.3, seed=1)
    options = dict(rounds=3, seed=1, local_steps=2, batch_size=16, recipe=None, finetune_epochs=1.0, ditto_lam=0.1,
                   apfl_alpha=0.5, n_components=3)
    trainings = _Trainings(split, **options)
    alg, state, _ = trainings.fit("fedavg+", "trainval", 0.1)
    alone, _ = run(_method("fedavg+", lr=0.1, **{k: v for k, v in options.items() if k != "seed"}),
                   trainings.data["trainval"], rounds=3, seed=1, progress=False)
    assert _states_equal(state, alone) and (state.round, state.seed) == (alone.round, alone.seed) == (3, 1)
    fed = trainings.data["trainval"]
    assert np.array_equal(alg.evaluate(state, fed)["test_accuracy"], alg.evaluate(alone, fed)["test_accuracy"])
    assert trainings.fit("fedavg", "trainval", 0.1)[1] is trainings._runs[("fedavg", "trainval", 0.1)][0]
    params, _, _ = train_global(split.federated(with_validation=False), rounds=3, seed=1, lr=0.1, local_steps=2)
    assert _states_equal(trainings.fit("fedavg", "train", 0.1)[1], type(alone)(params))
    with pytest.raises(ValueError, match="part"):
        trainings.fit("fedavg", "test", 0.1)


def test_prepared_trainings_equal_separate_runs():
    """prepare trains in lockstep (Local's and FedAvg's calls merged): every state is the one a separate run reaches."""
    from fedlab.knnper.experiments import _Trainings

    split = digits_split(6, 1.0, seed=2)
    options = dict(rounds=3, seed=2, local_steps=2, batch_size=16, recipe={"weight_decay": 5e-4, "epochs": 1},
                   finetune_epochs=1.0, ditto_lam=0.1, apfl_alpha=0.5, n_components=2)
    names, lrs = ["local", "fedavg", "fedavg+", "clustered", "ditto", "apfl", "fedem"], [0.3, 0.1]
    together, apart = _Trainings(split, **options), _Trainings(split, **options)
    together.prepare(names, "train", lrs)
    assert len(together._runs) == 12 and all(seconds is None for _, seconds in together._runs.values())
    for name in names:
        for lr in lrs:
            assert _states_equal(together.fit(name, "train", lr)[1], apart.fit(name, "train", lr)[1]), (name, lr)


def test_apfl_takes_one_pass_a_round_under_a_recipe_of_epochs():
    from fedlab.knnper.experiments import _method

    options = dict(rounds=10, local_steps=5, batch_size=16, finetune_epochs=1.0, ditto_lam=0.1, apfl_alpha=0.5,
                   n_components=3)
    assert _method("apfl", lr=0.1, recipe={"epochs": 1}, **options).solver.local_steps == 1
    assert _method("apfl", lr=0.1, recipe=None, **options).solver.local_steps == 5
    assert _method("ditto", lr=0.1, recipe={"epochs": 1}, **options).solver.local_steps == 5


def test_trainings_together_inside_a_lockstep_give_the_same_results():
    """Inside a lockstep (sweep's replicas), compare_methods and capacity_retrained train their runs one after the
    other, with the same results."""
    from fedlab.engine import lockstep
    from fedlab.knnper.experiments import capacity_retrained

    kw = dict(methods=("fedavg", "local", "knnper"), lr_grid=(0.3, 0.03), seed=0, **SMALL)
    inside, retrained = lockstep([lambda: compare_methods(**kw),
                                  lambda: capacity_retrained(n_clients=6, capacities=[0.5, 1.0], rounds=3, seed=1)])
    assert _strip_times(inside) == _strip_times(compare_methods(**kw))
    assert retrained == capacity_retrained(n_clients=6, capacities=[0.5, 1.0], rounds=3, seed=1)
