r"""Experiments of the kNN-Per notebook (thesis §3.6–3.7) on scikit-learn's digits.

Setting (personalization spec §10.3): the digits of :mod:`fedlab.knnper.data` (Dirichlet(α) label proportions,
each client cut 60 % train / 20 % validation / 20 % test); global model MLP 64 → 32 → 16 → 10 whose 16-d last hidden
layer is the kNN representation. Protocol (thesis §3.6.3): hyper-parameters are selected on the validation sets,
then the final models are trained on train ∪ validation and evaluated on the test sets; "average" is the accuracy
weighted by local test size (= pooled test accuracy) and "bottom decile" the 10th percentile of client accuracies.

Every function returns a JSON-serialisable dict so that :func:`fedlab.experiments.sweep` can run it.

>>> scores([1.0, 0.5], [3, 1])["average"]
0.875
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from fedlab._rng import Stream
from fedlab._validation import check_array, check_choice, check_int, check_real, check_type
from fedlab.algorithms.fedavg import FedAvg
from fedlab.algorithms.personalized import FineTuneState
from fedlab.engine import (REDUCTIONS, FederatedDataset, LocalSGD, broadcast, evaluate, lockstep, run,
                           solver_from_recipe)
from fedlab.knnper.algorithms import (LAMBDA_GRID, PRESETS, UPDATE_STRATEGIES, ClientFeatures, Datastore,
                                      accuracy_grid, check_grid, client_features, param_count, personalize)
from fedlab.knnper.data import SplitFederation, digits_split, old_and_new_clients, shifted_splits, shrink_clients
from fedlab.models import MLP, Model, Params

__all__ = [
    "DIGITS_HIDDEN",
    "digits_model",
    "scores",
    "CHAPTER_METHODS",
    "train_global",
    "LR_GRID",
    "compare_methods",
    "lambda_selection_diagnosis",
    "NEW_CLIENT_METHODS",
    "unseen_clients",
    "new_client_capacity",
    "capacity_retrained",
    "hyperparameter_sensitivity",
    "NewClientFeatures",
    "new_client_features",
    "surface_from_features",
    "sensitivity_from_features",
    "capacity_curve",
    "capacity_lambda_surface",
    "knn_vs_global_quality",
    "distribution_shift",
    "system_heterogeneity",
]

# ----------------------------------------------------------------------------------------------
# The chapter's model and scores

DIGITS_HIDDEN = (32, 16)


def digits_model(hidden: Sequence[int] = DIGITS_HIDDEN) -> MLP:
    """The chapter's global model: MLP 64 → 32 → 16 → 10; the representation is the 16-d last hidden layer."""
    if isinstance(hidden, (str, bytes)) or not isinstance(hidden, (tuple, list)) or len(hidden) == 0:
        raise TypeError(f"hidden must be a non-empty sequence of layer widths (kNN-Per needs a representation), "
                        f"got {hidden!r}.")
    return MLP(64, tuple(hidden), 10)


def scores(per_client_accuracy, n_test) -> dict[str, float]:
    """``average`` (weighted by local test size) and ``bottom_decile`` (10th percentile) of client accuracies."""
    acc = check_array("per_client_accuracy", per_client_accuracy, ndim=1, finite=False)
    if np.any(np.isinf(acc)) or np.any((acc < 0) | (acc > 1)):
        raise ValueError("per_client_accuracy must hold accuracies in [0, 1] (NaN for a client without test data).")
    w = check_array("n_test", n_test, shape=acc.shape, nonnegative=True)
    return {"average": REDUCTIONS["weighted"](acc, w), "bottom_decile": REDUCTIONS["bottom_decile"](acc, w)}


# ----------------------------------------------------------------------------------------------
# Methods of the chapter


CHAPTER_METHODS = {name: method.label for name, method in PRESETS.items()}
"""Method keys of :func:`compare_methods` and their display names (:data:`fedlab.knnper.algorithms.PRESETS`)."""


def _overrides(finetune_epochs: float, ditto_lam: float, apfl_alpha: float, n_components: int) -> dict[str, dict]:
    """The chapter's hyper-parameters as per-method options of the presets."""
    return {"fedavg+": {"finetune_epochs": finetune_epochs}, "ditto": {"lam": ditto_lam}, "apfl": {"alpha": apfl_alpha},
            "fedem": {"n_components": n_components}}


def _solver(lr: float, local_steps: int, batch_size: int) -> LocalSGD:
    return LocalSGD(lr=lr, local_steps=local_steps, batch_size=batch_size)


def train_global(data: FederatedDataset, *, rounds: int, seed: int, lr: float = 10 ** -0.5, local_steps: int = 5,
                 batch_size: int = 16, hidden: Sequence[int] = DIGITS_HIDDEN, checkpoints: Sequence[int] = (),
                 recipe: dict | None = None):
    """FedAvg's global model on ``data.train`` (with the ``recipe``'s local solver, when given); returns ``(params,
    seconds, {round: params})`` for the checkpoints."""
    model = digits_model(hidden)
    rounds = check_int("rounds", rounds, low=0)
    alg = FedAvg(model, solver_from_recipe(check_type("recipe", recipe, dict, optional=True) or {}, lr=lr,
                                           local_steps=local_steps, batch_size=batch_size, rounds=max(rounds, 1)))
    saved: dict[int, Params] = {}
    marks = set(_rounds("checkpoints", checkpoints, low=0, nonempty=False))

    def keep(state, info):
        if state.round in marks:
            saved[state.round] = {k: v.clone() for k, v in state.params.items()}

    start = time.perf_counter()
    state, _ = run(alg, data, rounds=rounds, seed=seed, eval_every=max(rounds, 1), progress=False, callback=keep)
    if 0 in marks:
        saved[0] = {k: v.clone() for k, v in alg.init(data, seed).params.items()}
    return state.params, time.perf_counter() - start, saved


def _rounds(name: str, values, *, low: int, nonempty: bool = True) -> list[int]:
    """A sequence of round numbers (integers >= ``low``)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (tuple, list, np.ndarray)) or \
            (nonempty and len(values) == 0):
        raise TypeError(f"{name} must be a {'non-empty ' if nonempty else ''}sequence of rounds, got {values!r}.")
    return [check_int(f"{name}[{i}]", v, low=low) for i, v in enumerate(values)]


def _check_setup(*, n_clients: int, alpha: float, rounds: int, lr: float, local_steps: int, batch_size: int,
                 seed: int, k: int = 10, sigma: float = 1.0, min_clients: int = 1) -> None:
    """The settings every experiment of the chapter shares, checked before any work."""
    check_int("n_clients", n_clients, low=min_clients)
    check_real("alpha", alpha, low=0, low_open=True)
    check_int("rounds", rounds, low=0)
    _solver(lr, local_steps, batch_size)
    check_int("seed", seed, low=0)
    check_int("k", k, low=1)
    check_real("sigma", sigma, low=0, low_open=True)


def _check_methods(methods) -> list[str]:
    names = [check_choice("methods", m, CHAPTER_METHODS) for m in check_type("methods", methods, (tuple, list))]
    if not names:
        raise ValueError("methods must name at least one method.")
    return names


def _check_new_fraction(new_fraction: float, n_clients: int) -> int:
    """The number of new clients: at least one, and at least one old client left."""
    check_real("new_fraction", new_fraction, low=0, high=1, low_open=True, high_open=True)
    n_new = max(1, int(round(new_fraction * n_clients)))
    if n_new >= n_clients:
        raise ValueError(f"new_fraction={new_fraction} leaves no old client among n_clients={n_clients}.")
    return n_new


LR_GRID = (10 ** -0.5, 10 ** -1.0, 10 ** -1.5)
"""Step sizes searched in full mode (the first three values of the thesis grid, §3.6.3)."""


_TRAINS_AS = {"fedavg+": ("fedavg", FineTuneState.from_fedavg)}
"""Methods that train as another, by name: ``(trainer, state of the trainer's run -> the method's state, given the
run's seed)``. FedAvg+ trains as FedAvg and fine-tunes only when it is evaluated, so one FedAvg run serves both."""


def _method(name: str, *, lr: float, rounds: int, local_steps: int, batch_size: int, recipe: dict | None = None,
            **kwargs):
    """Engine method ``name`` with the chapter's options (``kwargs``, see :func:`_overrides`) and the local solver at
    step size ``lr``: the ``recipe``'s (:func:`fedlab.engine.solver_from_recipe`) when given.

    Under a recipe of local epochs, APFL's round is one pass over the local data, as every other method's: APFL runs
    ``solver.local_steps`` local updates a round, each of them a whole pass under the recipe, so it gets one.
    """
    solver = solver_from_recipe(recipe or {}, lr=lr, local_steps=local_steps, batch_size=batch_size,
                                rounds=max(rounds, 1), method=PRESETS[name].cls)
    if name == "apfl" and solver.epochs is not None:
        solver = replace(solver, local_steps=1)
    return PRESETS[name](digits_model(), solver, **_overrides(**kwargs).get(name, {}))


class _Trainings:
    """The engine trainings of one split, each run once: the methods of :data:`_TRAINS_AS` share their trainer's runs,
    and kNN-Per takes FedAvg's (its global models, at FedAvg's step size, on the train parts and on train ∪
    validation), so FedAvg trains once per part and step size for FedAvg, FedAvg+ and kNN-Per.

    ``options`` are :func:`_method`'s (without ``lr`` and ``rounds``).
    """

    def __init__(self, split: SplitFederation, *, rounds: int, seed: int, **options) -> None:
        self.data = {"train": FederatedDataset(split.train, split.val, split.n_classes),
                     "trainval": split.federated(with_validation=True)}
        self.rounds, self.seed, self.options = rounds, seed, options
        self._runs: dict = {}

    def fit(self, name: str, part: str, lr: float):
        """``(algorithm, state, train_seconds)`` of method ``name`` trained at step size ``lr`` on ``part``:
        ``"train"`` (the train parts, whose test data are the validation parts) or ``"trainval"`` (train ∪
        validation, tested on the test parts). ``train_seconds`` is None for a run made by :meth:`prepare`."""
        trainer, as_method = _TRAINS_AS.get(name, (name, None))
        key = (trainer, check_choice("part", part, self.data), lr)
        if key not in self._runs:
            start = time.perf_counter()
            state = self._train(*key)
            self._runs[key] = (state, time.perf_counter() - start)
        state, seconds = self._runs[key]
        state = state if as_method is None else as_method(state, self.seed)
        return _method(name, lr=lr, rounds=self.rounds, **self.options), state, seconds

    def prepare(self, names: Sequence[str], part: str, lrs: Sequence[float]) -> None:
        """Train the methods ``names`` at every step size of ``lrs`` on ``part`` (those not trained yet) together, in
        :func:`~fedlab.engine.lockstep`: the local-training calls they share (e.g. Local's and FedAvg's at one step
        size) are merged, and every run ends as it does alone. Their training times are not
        measured."""
        check_choice("part", part, self.data)
        keys = list(dict.fromkeys((_TRAINS_AS.get(n, (n, None))[0], part, float(lr)) for n in names for lr in lrs))
        keys = [key for key in keys if key not in self._runs]
        states = lockstep([lambda key=key: self._train(*key) for key in keys])
        self._runs.update({key: (state, None) for key, state in zip(keys, states)})

    def _train(self, trainer: str, part: str, lr: float):
        alg = _method(trainer, lr=lr, rounds=self.rounds, **self.options)
        return run(alg, self.data[part], rounds=self.rounds, seed=self.seed, eval_every=max(self.rounds, 1),
                   progress=False)[0]


def _select_lr(name: str, trainings: _Trainings, lr_grid: Sequence[float]) -> tuple[float, list]:
    """The step size of ``lr_grid`` with the best validation accuracy (models trained on the train parts)."""
    fed_val = trainings.data["train"]
    w = fed_val.test.n.numpy().astype(float)
    vals = []
    for lr in lr_grid:
        alg, state, _ = trainings.fit(name, "train", float(lr))
        vals.append(REDUCTIONS["weighted"](np.asarray(alg.evaluate(state, fed_val)["test_accuracy"]), w))
    return float(lr_grid[int(np.nanargmax(vals))]), vals


def compare_methods(*, alpha: float = 0.3, n_clients: int = 20, rounds: int = 100, lr: float = 10 ** -0.5,
                    lr_grid: Sequence[float] | None = None, local_steps: int = 5, batch_size: int = 16,
                    methods: Sequence[str] = tuple(CHAPTER_METHODS), k: int = 10, sigma: float = 1.0,
                    finetune_epochs: float = 1.0, ditto_lam: float = 0.1, apfl_alpha: float = 0.5,
                    n_components: int = 3, seed: int = 0, recipe: dict | None = None) -> dict:
    r"""kNN-Per against the chapter's baselines on one digits split (thesis Table 3.5 protocol).

    Every engine method is trained on train ∪ validation and scored on the test sets. With ``lr_grid``
    the step size of each method is first selected on the validation sets (models trained on the train
    parts), as in the thesis; otherwise every method uses ``lr``. kNN-Per selects :math:`\lambda_t` on
    validation with a global model trained on the train parts (at FedAvg's step size), then uses the
    FedAvg model trained on train ∪ validation with a datastore of train ∪ validation (thesis: "retrain
    on the concatenation"); so kNN-Per with :math:`\lambda = 0` is exactly the FedAvg row. Ditto's
    penalty and APFL's α are fixed (the thesis tunes them too). ``recipe`` (e.g.
    :data:`fedlab.knnper.real_data.AUTHORS_RECIPE`) gives every method the authors' local solver; with its
    local epochs every method's round is that many passes over the local data, APFL's included (:func:`_method`).
    FedAvg+ trains as FedAvg, so FedAvg, FedAvg+ and kNN-Per share FedAvg's runs (:class:`_Trainings`).

    Returns
    -------
    dict
        ``methods[name] = {"average", "bottom_decile", "per_client", "lr", "train_seconds",
        "seconds_per_round"}``, plus ``n_train``, ``n_test``, ``n_params``, ``lambdas`` (per-client
        selection), ``shared_lambda`` and ``diagnosis`` (see :func:`lambda_selection_diagnosis`) when a
        kNN-Per variant is among ``methods``.
    """
    methods = _check_methods(methods)
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=rounds, lr=lr, local_steps=local_steps,
                 batch_size=batch_size, seed=seed, k=k, sigma=sigma)
    if lr_grid is not None:
        lr_grid = [check_real(f"lr_grid[{i}]", v, low=0, low_open=True)
                   for i, v in enumerate(check_type("lr_grid", lr_grid, (tuple, list)))]
        if not lr_grid:
            raise ValueError("lr_grid must hold at least one step size (or be None).")
    check_real("finetune_epochs", finetune_epochs, low=0, low_open=True)
    check_real("ditto_lam", ditto_lam, low=0, low_open=True)
    check_real("apfl_alpha", apfl_alpha, low=0, high=1)
    check_int("n_components", n_components, low=1)
    split = digits_split(n_clients, alpha, seed)
    model = digits_model()
    n_test = split.test.n.numpy()
    recipe = check_type("recipe", recipe, dict, optional=True)
    trainings = _Trainings(split, rounds=rounds, seed=seed, local_steps=local_steps, batch_size=batch_size,
                           recipe=recipe, finetune_epochs=finetune_epochs, ditto_lam=ditto_lam,
                           apfl_alpha=apfl_alpha, n_components=n_components)
    fed = trainings.data["trainval"]
    out: dict = {"methods": {}, "n_train": fed.train.n.tolist(), "n_test": n_test.tolist(),
                 "n_params": param_count(model)}
    knn_methods = [m for m in methods if m.startswith("knnper")]
    engine = [m for m in methods if not m.startswith("knnper")]
    if knn_methods and "fedavg" not in engine:
        engine.append("fedavg")
    fitted: dict = {}
    if lr_grid is not None:
        trainings.prepare(engine, "train", lr_grid)
    for name in engine:
        lr_m, val_scores = (lr, None) if lr_grid is None else _select_lr(name, trainings, lr_grid)
        alg, state, train_s = trainings.fit(name, "trainval", lr_m)
        start = time.perf_counter()
        acc = alg.evaluate(state, fed)["test_accuracy"]
        fitted[name] = (state, train_s, lr_m)
        if name in methods:
            out["methods"][name] = {**scores(acc, n_test), "per_client": np.asarray(acc).tolist(), "lr": lr_m,
                                    "validation_by_lr": val_scores, "train_seconds": train_s,
                                    "seconds_per_round": train_s / max(rounds, 1),
                                    "eval_seconds": time.perf_counter() - start}
    if knn_methods:
        state, train_s, lr_g = fitted["fedavg"]
        sel_params = trainings.fit("fedavg", "train", lr_g)[1].params
        out["diagnosis"] = _diagnose(model, sel_params, state.params, split, k=k, sigma=sigma, seed=seed)
        for name in knn_methods:
            selection = "client" if name == "knnper" else "shared"
            start = time.perf_counter()
            chosen = personalize(model, sel_params, split.train, validation=split.val, k=k, sigma=sigma,
                                 lambda_selection=selection, seed=seed).lambdas
            knn = personalize(model, state.params, split.trainval, lam=chosen, k=k, sigma=sigma, seed=seed)
            acc = knn.evaluate(split.test)["test_accuracy"]
            out["methods"][name] = {**scores(acc, n_test), "per_client": acc.tolist(), "lr": lr_g,
                                    "train_seconds": train_s, "seconds_per_round": train_s / max(rounds, 1),
                                    "eval_seconds": time.perf_counter() - start,
                                    "datastore_bytes": [int(s.nbytes) for s in knn.datastores]}
            if selection == "client":
                out["lambdas"] = chosen.tolist()
            else:
                out["shared_lambda"] = float(chosen[0])
    return out


def _diagnose(model: Model, sel_params: Params, final_params: Params, split: SplitFederation, *, k: int,
              sigma: float, seed: int) -> dict:
    grid = np.asarray(LAMBDA_GRID)
    store, val = client_features(model, sel_params, split.train), client_features(model, sel_params, split.val)
    val_acc = accuracy_grid(store, val, capacities=[1.0], lambdas=grid, k=k, sigma=sigma, seed=seed)[0]  # (L, K)
    all_tie = int(sum(np.isfinite(a).all() and np.ptp(a) == 0 for a in val_acc.T))
    test_acc = accuracy_grid(client_features(model, final_params, split.trainval),
                             client_features(model, final_params, split.test), capacities=[1.0], lambdas=grid, k=k,
                             sigma=sigma, seed=seed)[0]
    w = split.test.n.numpy().astype(float)

    def score(idx):
        return REDUCTIONS["weighted"](np.array([test_acc[i, t] for t, i in enumerate(idx)]), w)

    def pick(a, largest):
        a = np.nan_to_num(a, nan=0.0)
        best = np.flatnonzero(a >= a.max() - 1e-12)
        return int(best.max() if largest else best.min())

    pooled = np.nansum(val_acc * split.val.n.numpy()[None], axis=1)
    shared = int(np.flatnonzero(pooled >= pooled.max() - 1e-9).min())
    n = split.n_clients
    return {"global": score([0] * n), "per_client_smallest": score([pick(a, False) for a in val_acc.T]),
            "per_client_largest": score([pick(a, True) for a in val_acc.T]), "shared": score([shared] * n),
            "shared_lambda": float(grid[shared]), "oracle": REDUCTIONS["weighted"](np.nanmax(test_acc, axis=0), w),
            "validation_sizes": split.val.n.tolist(), "clients_all_tied": all_tie}


def lambda_selection_diagnosis(*, alpha: float = 0.3, n_clients: int = 20, rounds: int = 100,
                               lr: float = 10 ** -0.5, local_steps: int = 5, batch_size: int = 16, k: int = 10,
                               sigma: float = 1.0, seed: int = 0) -> dict:
    r"""Why per-client :math:`\lambda_t` gains less than a shared λ: selection noise on tiny validation sets.

    Same protocol as :func:`compare_methods` (which returns the same dict as its ``diagnosis``): select
    on validation with the train-only global model, evaluate the train ∪ validation model and datastore
    on test. Reports the test accuracy (weighted average) of: the global model; per-client selection
    with ties to the smallest λ (the default) and to the largest; the shared λ; and the per-client
    *oracle* λ (best on each client's own test set, an upper bound no protocol can reach). Also the
    validation sizes and the number of clients whose validation accuracy is the same for every λ.
    """
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=rounds, lr=lr, local_steps=local_steps,
                 batch_size=batch_size, seed=seed, k=k, sigma=sigma)
    split = digits_split(n_clients, alpha, seed)
    model = digits_model()
    common = dict(rounds=rounds, seed=seed, lr=lr, local_steps=local_steps, batch_size=batch_size)
    sel_params, _, _ = train_global(split.federated(with_validation=False), **common)
    final_params, _, _ = train_global(split.federated(), **common)
    return _diagnose(model, sel_params, final_params, split, k=k, sigma=sigma, seed=seed)


# ----------------------------------------------------------------------------------------------
# Clients unseen at training (thesis Table 3.6)


NEW_CLIENT_METHODS = ("fedavg", "fedavg+", "ditto", "fedrep", "fedem", "knnper", "knnper_shared")
"""Methods with a procedure for clients unseen at training (:func:`unseen_clients`, :func:`new_client_capacity`)."""


def _new_client_options(rounds: int, local_steps: int) -> dict[str, dict]:
    """Options of each method's ``adapt`` for new clients; Ditto and FedRep run the personal parts' training budget."""
    steps = max(1, rounds * local_steps)
    return {"fedavg+": {}, "fedem": {},
            "ditto": {"steps": steps, "stream": (0, Stream.KNNPER_NEW_DITTO)},
            "fedrep": {"steps": steps, "stream": (0, Stream.KNNPER_NEW_FEDREP)}}


def _train_old(methods: Sequence[str], fed_old: FederatedDataset, model: Model, solver: LocalSGD, *, rounds: int,
               seed: int, overrides: dict) -> dict:
    """Every engine method of ``methods`` (and FedAvg when kNN-Per is asked) trained on the old clients, together
    (:func:`~fedlab.engine.lockstep`); the methods of :data:`_TRAINS_AS` share their trainer's run."""
    engine = [m for m in methods if not m.startswith("knnper")]
    for name in engine:
        if name not in NEW_CLIENT_METHODS:
            raise ValueError(f"no new-client procedure for {name!r} in this experiment.")
    if len(engine) < len(methods) and "fedavg" not in engine:
        engine.append("fedavg")
    trainers = list(dict.fromkeys(_TRAINS_AS.get(name, (name, None))[0] for name in engine))
    runs = dict(zip(trainers, lockstep([
        lambda t=t: run(PRESETS[t](model, solver, **overrides.get(t, {})), fed_old, rounds=rounds, seed=seed,
                        eval_every=max(rounds, 1), progress=False)[0] for t in trainers])))
    trained = {}
    for name in engine:
        trainer, as_method = _TRAINS_AS.get(name, (name, None))
        state = runs[trainer] if as_method is None else as_method(runs[trainer], seed)
        trained[name] = (PRESETS[name](model, solver, **overrides.get(name, {})), state)
    return trained


def _new_client_metrics(name: str, trained: dict, new: SplitFederation, *, options: dict, k: int, sigma: float,
                        seed: int) -> dict:
    """Per-client train/test metrics of method ``name`` on the new clients (each method's own procedure)."""
    fed_new = new.federated()
    alg, state = trained["fedavg" if name.startswith("knnper") else name]
    if name == "fedavg":
        return alg.evaluate(state, fed_new)
    if not name.startswith("knnper"):
        return alg.adapt(state, fed_new, seed=seed, **options[name])[1]
    model = digits_model()
    lam = personalize(model, state.params, new.train, validation=new.val, k=k, sigma=sigma,
                      lambda_selection="client" if name == "knnper" else "shared", seed=seed).lambdas
    knn = personalize(model, state.params, new.trainval, lam=lam, k=k, sigma=sigma, seed=seed)
    return {**knn.evaluate(fed_new.train, "train_"), **knn.evaluate(fed_new.test, "test_")}


def _trained_on_old_clients(methods, *, alpha, n_clients, new_fraction, rounds, lr, local_steps, batch_size, k,
                            sigma, ditto_lam, finetune_epochs, n_components, seed):
    """Check the shared arguments of the new-client experiments, split the clients into old and new, and train
    ``methods`` on the old ones. Returns ``(new, ids, trained)``."""
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=rounds, lr=lr, local_steps=local_steps,
                 batch_size=batch_size, seed=seed, k=k, sigma=sigma, min_clients=2)
    n_new = _check_new_fraction(new_fraction, n_clients)
    check_real("ditto_lam", ditto_lam, low=0, low_open=True)
    check_real("finetune_epochs", finetune_epochs, low=0, low_open=True)
    check_int("n_components", n_components, low=1)
    old, new, ids = old_and_new_clients(digits_split(n_clients, alpha, seed), n_new, seed)
    trained = _train_old(methods, old.federated(), digits_model(), _solver(lr, local_steps, batch_size),
                         rounds=rounds, seed=seed, overrides=_overrides(finetune_epochs, ditto_lam, 0.5, n_components))
    return new, ids, trained


def unseen_clients(*, alpha: float = 0.3, n_clients: int = 20, new_fraction: float = 0.2, rounds: int = 100,
                   lr: float = 10 ** -0.5, local_steps: int = 5, batch_size: int = 16,
                   methods: Sequence[str] = ("fedavg", "fedavg+", "ditto", "fedrep", "fedem", "knnper"),
                   k: int = 10, sigma: float = 1.0, ditto_lam: float = 0.1, finetune_epochs: float = 1.0,
                   n_components: int = 3, seed: int = 0) -> dict:
    r"""Train on 80 % of the clients; the others join afterwards and personalise (thesis Table 3.6).

    New-client procedures (thesis §3.6.3): FedAvg uses the global model; FedAvg+ fine-tunes it
    (``finetune_epochs`` epochs); Ditto trains a personal model with the proximal penalty to the global
    one; FedRep trains a head on the frozen body; FedEM fits its mixture weights with frozen
    components; kNN-Per builds its datastore with the downloaded global model (λ chosen on the new
    client's validation set with the train part as datastore, then datastore = train ∪ validation).
    Ditto and FedRep new clients run ``rounds × local_steps`` SGD steps (the budget their personal
    parts get during training). All adapt on train ∪ validation and are scored on their test sets.

    Returns
    -------
    dict with ``methods[name] = {"average", "bottom_decile", "train_accuracy", "per_client"}``,
    ``old_clients``, ``new_clients``, ``n_test`` (the new clients' test sizes).
    """
    methods = _check_methods(methods)
    new, ids, trained = _trained_on_old_clients(methods, alpha=alpha, n_clients=n_clients, new_fraction=new_fraction,
                                                rounds=rounds, lr=lr, local_steps=local_steps, batch_size=batch_size,
                                                k=k, sigma=sigma, ditto_lam=ditto_lam, finetune_epochs=finetune_epochs,
                                                n_components=n_components, seed=seed)
    options = _new_client_options(rounds, local_steps)
    n_test, n_train = new.test.n.numpy(), new.trainval.n.numpy().astype(float)
    out: dict = {"methods": {}, **{key: v.tolist() for key, v in ids.items()}, "n_test": n_test.tolist()}
    for name in methods:
        metrics = _new_client_metrics(name, trained, new, options=options, k=k, sigma=sigma, seed=seed)
        out["methods"][name] = {**scores(metrics["test_accuracy"], n_test),
                                "train_accuracy": REDUCTIONS["weighted"](np.asarray(metrics["train_accuracy"]),
                                                                         n_train),
                                "per_client": np.asarray(metrics["test_accuracy"]).tolist()}
    return out


def _capacities(capacities) -> list[float]:
    if isinstance(capacities, (str, bytes)) or not isinstance(capacities, (tuple, list, np.ndarray)) or \
            len(capacities) == 0:
        raise TypeError(f"capacities must be a non-empty sequence of fractions in (0, 1], got {capacities!r}.")
    return [check_real(f"capacities[{i}]", c, low=0, high=1, low_open=True) for i, c in enumerate(capacities)]


def new_client_capacity(*, alpha: float = 0.3, n_clients: int = 20, new_fraction: float = 0.5, rounds: int = 100,
                        lr: float = 10 ** -0.5, local_steps: int = 5, batch_size: int = 16,
                        methods: Sequence[str] = ("fedavg", "fedavg+", "ditto", "fedrep", "fedem", "knnper"),
                        capacities: Sequence[float] = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0), k: int = 10,
                        sigma: float = 1.0, ditto_lam: float = 0.1, finetune_epochs: float = 1.0,
                        n_components: int = 3, seed: int = 0) -> dict:
    r"""New clients' test accuracy against the fraction of their local data they keep, for every method (Fig. 3.11).

    The methods are trained once on the old clients (as in :func:`unseen_clients`); each new client then
    keeps a random fraction ``capacity`` of its train and validation parts (:func:`shrink_clients`) and
    personalises with its method's own procedure: FedAvg+/Ditto/FedRep train on it, FedEM fits its
    mixture weights on it, kNN-Per stores it (λ on the kept validation part). FedAvg does not use local data.

    Returns
    -------
    dict with ``capacities``, ``average[name]`` and ``bottom_decile[name]`` (one value per capacity),
    ``store_median`` (median kept train ∪ validation size per capacity).
    """
    methods = _check_methods(methods)
    capacities = _capacities(capacities)
    new, _, trained = _trained_on_old_clients(methods, alpha=alpha, n_clients=n_clients, new_fraction=new_fraction,
                                              rounds=rounds, lr=lr, local_steps=local_steps, batch_size=batch_size,
                                              k=k, sigma=sigma, ditto_lam=ditto_lam, finetune_epochs=finetune_epochs,
                                              n_components=n_components, seed=seed)
    options = _new_client_options(rounds, local_steps)
    n_test = new.test.n.numpy()
    out: dict = {"capacities": capacities, "average": {m: [] for m in methods},
                 "bottom_decile": {m: [] for m in methods}, "store_median": []}
    for c in capacities:
        part = shrink_clients(new, c, seed)
        out["store_median"].append(float(np.median(part.trainval.n.numpy())))
        for name in methods:
            acc = _new_client_metrics(name, trained, part, options=options, k=k, sigma=sigma, seed=seed)
            for kind, value in scores(acc["test_accuracy"], n_test).items():
                out[kind][name].append(value)
    return out


def capacity_retrained(*, alpha: float = 0.3, n_clients: int = 20,
                       capacities: Sequence[float] = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0), rounds: int = 100,
                       lr: float = 10 ** -0.5, local_steps: int = 5, batch_size: int = 16, k: int = 10,
                       sigma: float = 1.0, seed: int = 0) -> dict:
    r"""Accuracy against capacity when every client's data shrink and the global model is retrained (Fig. 3.7).

    At each capacity every client keeps a random fraction of its train and validation parts
    (:func:`shrink_clients`), FedAvg is retrained on the kept train parts, each client selects
    :math:`\lambda_t` on its kept validation part (datastore = kept train part) and is scored on its whole
    test part with the datastore kept train ∪ validation. Unlike Fig. 3.2 (:func:`new_client_features`),
    the representation changes with the capacity. The capacities' FedAvg runs train together
    (:func:`~fedlab.engine.lockstep`).

    Returns
    -------
    dict with ``capacities``, ``global`` (the global model's test accuracy), ``knnper`` (kNN-Per, λ_t on
    validation) and ``store_median`` per capacity; ``n_test`` (the clients' test sizes).
    """
    capacities = _capacities(capacities)
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=rounds, lr=lr, local_steps=local_steps,
                 batch_size=batch_size, seed=seed, k=k, sigma=sigma)
    split, model = digits_split(n_clients, alpha, seed), digits_model()
    w = split.test.n.numpy().astype(float)
    out: dict = {"capacities": capacities, "global": [], "knnper": [], "store_median": [],
                 "n_test": split.test.n.tolist()}
    parts = [shrink_clients(split, c, seed) for c in capacities]
    trained = lockstep([lambda part=part: train_global(part.federated(with_validation=False), rounds=rounds, seed=seed,
                                                        lr=lr, local_steps=local_steps, batch_size=batch_size)[0]
                         for part in parts])
    for part, params in zip(parts, trained):
        lam = personalize(model, params, part.train, validation=part.val, k=k, sigma=sigma, seed=seed).lambdas
        for name, store, lam_t in (("global", part.train, 0.0), ("knnper", part.trainval, lam)):
            acc = personalize(model, params, store, lam=lam_t, k=k, sigma=sigma, seed=seed).evaluate(part.test)
            out[name].append(REDUCTIONS["weighted"](acc["test_accuracy"], w))
        out["store_median"].append(float(np.median(part.trainval.n.numpy())))
    return out


def hyperparameter_sensitivity(*, alpha: float = 0.3, n_clients: int = 6, new_fraction: float = 0.5,
                               rounds: int = 100, lr: float = 10 ** -0.5, local_steps: int = 5,
                               batch_size: int = 16, k_values: Sequence[int] = tuple(range(1, 21)),
                               sigma_values: Sequence[float] = (0.1, 1.0, 10.0, 100.0, 1000.0),
                               lambdas: Sequence[float] = tuple(np.round(np.linspace(0, 1, 11), 2)),
                               seed: int = 0) -> dict:
    r"""Best-over-λ accuracy of the new clients for each k (σ = 1) and each σ (k = 10) (thesis Figs. 3.6 and 3.8).

    The setting of :func:`new_client_features` (global model trained on the old clients, datastore = the
    new clients' train ∪ validation, λ shared by the new clients); with few clients each local data set
    is as large as the thesis' CIFAR-10 datastores (≈ 250 entries). The best over λ is read on the
    test sets, as in the thesis' figures.

    Returns
    -------
    dict with ``k_values``, ``best_by_k``, ``sigma_values``, ``best_by_sigma``, ``n_test`` (test digits of
    the new clients), ``store_sizes`` and ``global_accuracy``.
    """
    _check_sensitivity(k_values, sigma_values, lambdas)
    feats = new_client_features(alpha=alpha, n_clients=n_clients, rounds=rounds, lr=lr, local_steps=local_steps,
                                batch_size=batch_size, new_fraction=new_fraction, seed=seed)
    return sensitivity_from_features(feats, k_values=k_values, sigma_values=sigma_values, lambdas=lambdas, seed=seed)


def _check_sensitivity(k_values, sigma_values, lambdas) -> tuple[list[int], list[float]]:
    k_values = [check_int(f"k_values[{i}]", v, low=1) for i, v in enumerate(_nonempty("k_values", k_values))]
    sigma_values = [check_real(f"sigma_values[{i}]", v, low=0, low_open=True)
                    for i, v in enumerate(_nonempty("sigma_values", sigma_values))]
    check_grid("lambdas", lambdas)
    return k_values, sigma_values


def _nonempty(name: str, values) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, (tuple, list, np.ndarray)) or len(values) == 0:
        raise TypeError(f"{name} must be a non-empty sequence, got {values!r}.")
    return list(values)


# ----------------------------------------------------------------------------------------------
# Capacity × λ surface, λ_opt vs n_t, global-model quality


@dataclass(frozen=True, eq=False)
class NewClientFeatures:
    """Global model trained on the old clients and the new clients' features (computed once, for sliders)."""

    params: Params
    store: ClientFeatures
    query: ClientFeatures
    validation: ClientFeatures
    train_store: ClientFeatures
    n_test: np.ndarray
    global_accuracy: float


def new_client_features(*, alpha: float = 0.3, n_clients: int = 20, rounds: int = 100, lr: float = 10 ** -0.5,
                        local_steps: int = 5, batch_size: int = 16, new_fraction: float = 0.5,
                        seed: int = 0) -> NewClientFeatures:
    r"""FedAvg on the old clients' train ∪ validation, then the new clients' representations and global predictions.

    ``store`` = new clients' train ∪ validation (the datastore candidates), ``query`` = their test
    sets, ``validation``/``train_store`` = their validation and train parts (for λ selection).
    """
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=rounds, lr=lr, local_steps=local_steps,
                 batch_size=batch_size, seed=seed, min_clients=2)
    n_new = _check_new_fraction(new_fraction, n_clients)
    old, new, _ = old_and_new_clients(digits_split(n_clients, alpha, seed), n_new, seed)
    params, _, _ = train_global(old.federated(), rounds=rounds, seed=seed, lr=lr, local_steps=local_steps,
                                batch_size=batch_size)
    model = digits_model()
    query = client_features(model, params, new.test)
    w = new.test.n.numpy().astype(float)
    glob = np.array([(g.argmax(1) == y).mean() if len(y) else np.nan for g, y in zip(query.proba, query.labels)])
    return NewClientFeatures(params, client_features(model, params, new.trainval), query,
                             client_features(model, params, new.val), client_features(model, params, new.train),
                             new.test.n.numpy(), REDUCTIONS["weighted"](glob, w))


def surface_from_features(feats: NewClientFeatures, *, capacities: Sequence[float], lambdas: Sequence[float],
                          k: int = 10, sigma: float = 1.0, seed: int = 0) -> dict:
    r"""Accuracy over (capacity, shared λ) of the new clients, and :math:`\lambda_{opt}` per client (on test).

    Returns ``average`` and ``bottom_decile`` (C, L), ``per_client`` (C, L, K), ``store_sizes`` (C, K) and
    ``lambda_opt`` (C, K): the λ maximising each client's test accuracy (thesis Fig. 3.9; ties resolved
    by the mean of the tied λ's; -1 for clients without test data).
    """
    check_type("feats", feats, NewClientFeatures)
    acc = accuracy_grid(feats.store, feats.query, capacities=capacities, lambdas=lambdas, k=k, sigma=sigma,
                        seed=seed)
    w = feats.n_test.astype(float)
    lam_arr = np.asarray(lambdas, dtype=float)
    lam_opt = np.array([[float(lam_arr[np.flatnonzero(a >= np.nanmax(a) - 1e-12)].mean()) if np.isfinite(a).any()
                         else np.nan for a in acc[c].T] for c in range(len(capacities))])
    sizes = np.array([[int(np.floor(c * n + 1e-9)) for n in feats.store.sizes] for c in capacities])
    return {"capacities": list(map(float, capacities)), "lambdas": lam_arr.tolist(),
            "average": [[REDUCTIONS["weighted"](acc[c, j], w) for j in range(len(lam_arr))]
                        for c in range(len(capacities))],
            "bottom_decile": [[REDUCTIONS["bottom_decile"](acc[c, j], w) for j in range(len(lam_arr))]
                              for c in range(len(capacities))],
            "per_client": np.nan_to_num(acc, nan=-1.0).tolist(), "store_sizes": sizes.tolist(),
            "lambda_opt": np.nan_to_num(lam_opt, nan=-1.0).tolist(), "global_accuracy": feats.global_accuracy}


def sensitivity_from_features(feats: NewClientFeatures, *, k_values: Sequence[int] = tuple(range(1, 21)),
                              sigma_values: Sequence[float] = (0.1, 1.0, 10.0, 100.0, 1000.0),
                              lambdas: Sequence[float] = tuple(np.round(np.linspace(0, 1, 11), 2)),
                              seed: int = 0) -> dict:
    r"""Best-over-λ accuracy (λ shared by the new clients, read on the test sets as in the thesis' figures) for each
    k (σ = 1) and each σ (k = 10), datastores of capacity 1 (thesis Figs. 3.6 and 3.8).

    Returns
    -------
    dict with ``k_values``, ``best_by_k``, ``sigma_values``, ``best_by_sigma``, ``n_test`` (test digits of the new
    clients), ``store_sizes`` and ``global_accuracy``.
    """
    check_type("feats", feats, NewClientFeatures)
    k_values, sigma_values = _check_sensitivity(k_values, sigma_values, lambdas)

    def best(**kw):
        return max(surface_from_features(feats, capacities=[1.0], lambdas=lambdas, seed=seed, **kw)["average"][0])

    return {"k_values": k_values, "best_by_k": [best(k=k) for k in k_values], "sigma_values": sigma_values,
            "best_by_sigma": [best(sigma=s) for s in sigma_values], "n_test": int(feats.n_test.sum()),
            "store_sizes": feats.store.sizes.tolist(), "global_accuracy": feats.global_accuracy}


def capacity_curve(feats: NewClientFeatures, capacities: Sequence[float], *, k: int = 10, sigma: float = 1.0,
                   seed: int = 0) -> list[float]:
    r"""The new clients' test accuracy against their datastore capacity, :math:`\lambda_t` chosen per client on its
    validation set at every capacity (thesis Fig. 3.2; capacity 0 is the global model).

    At capacity c each client's datastore is a random fraction c of its train part for the selection (ties: the
    smallest λ of :data:`~fedlab.knnper.algorithms.LAMBDA_GRID`) and of its train ∪ validation for the test.
    Returns the weighted average accuracy per capacity.
    """
    check_type("feats", feats, NewClientFeatures)
    capacities = check_grid("capacities", capacities)
    w = feats.n_test.astype(float)
    out = []
    for c in capacities:
        val = accuracy_grid(feats.train_store, feats.validation, capacities=[c], lambdas=LAMBDA_GRID, k=k,
                            sigma=sigma, seed=seed)[0]
        test = accuracy_grid(feats.store, feats.query, capacities=[c], lambdas=LAMBDA_GRID, k=k, sigma=sigma,
                             seed=seed)[0]
        pick = [int(np.flatnonzero(np.nan_to_num(v) >= np.nanmax(np.nan_to_num(v)) - 1e-12).min()) for v in val.T]
        out.append(float(np.nansum([test[j, t] * w[t] for t, j in enumerate(pick)]) / w.sum()))
    return out


def capacity_lambda_surface(*, alpha: float = 0.3, n_clients: int = 20, rounds: int = 100, lr: float = 10 ** -0.5,
                            local_steps: int = 5, batch_size: int = 16,
                            capacities: Sequence[float] = tuple(np.round(np.linspace(0, 1, 11), 2)),
                            lambdas: Sequence[float] = tuple(np.round(np.linspace(0, 1, 11), 2)), k: int = 10,
                            sigma: float = 1.0, new_fraction: float = 0.5, seed: int = 0) -> dict:
    r"""Accuracy over (capacity, shared λ) for clients unseen at training (thesis Fig. 3.2/3.3 setting).

    The global model is trained (FedAvg) on the old clients' train ∪ validation and held fixed; each new
    client's datastore is a random fraction ``capacity`` of its train ∪ validation data (so the global
    model, hence the representation, does not change with the capacity). See
    :func:`surface_from_features` for the returned dict.
    """
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=rounds, lr=lr, local_steps=local_steps,
                 batch_size=batch_size, seed=seed, k=k, sigma=sigma, min_clients=2)
    check_grid("capacities", capacities), check_grid("lambdas", lambdas)
    feats = new_client_features(alpha=alpha, n_clients=n_clients, rounds=rounds, lr=lr, local_steps=local_steps,
                                batch_size=batch_size, new_fraction=new_fraction, seed=seed)
    return surface_from_features(feats, capacities=capacities, lambdas=lambdas, k=k, sigma=sigma, seed=seed)


def knn_vs_global_quality(*, alpha: float = 0.3, n_clients: int = 20, checkpoints: Sequence[int] = (5, 10, 20, 50, 100),
                          lr: float = 10 ** -0.5, local_steps: int = 5, batch_size: int = 16, k: int = 10,
                          sigma: float = 1.0, seed: int = 0) -> dict:
    r"""kNN accuracy against the global model's accuracy along FedAvg training (thesis Fig. 3.4/3.5 analogue).

    For global checkpoints saved during one FedAvg run (on train ∪ validation), reports the global
    model's test accuracy, the kNN-only predictor's (:math:`\lambda = 1`, Fig. 3.4) and kNN-Per with
    :math:`\lambda_t` selected on validation (datastore = train, Fig. 3.5). The thesis checkpoints a
    centrally trained model; here the checkpoints come from the federated run itself.
    """
    checkpoints = _rounds("checkpoints", checkpoints, low=1)
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=0, lr=lr, local_steps=local_steps, batch_size=batch_size,
                 seed=seed, k=k, sigma=sigma)
    split = digits_split(n_clients, alpha, seed)
    fed = split.federated()
    rounds = int(max(checkpoints))
    _, _, saved = train_global(fed, rounds=rounds, seed=seed, lr=lr, local_steps=local_steps,
                               batch_size=batch_size, checkpoints=checkpoints)
    model = digits_model()
    w = split.test.n.numpy().astype(float)
    out = {"rounds": [], "global": [], "knn_only": [], "knnper": []}
    for r in sorted(saved):
        params = saved[r]
        glob = evaluate(model, broadcast(params, split.n_clients), fed.train, fed.test)["test_accuracy"]
        only = personalize(model, params, split.trainval, lam=1.0, k=k, sigma=sigma).evaluate(split.test)
        lam = personalize(model, params, split.train, validation=split.val, k=k, sigma=sigma).lambdas
        tuned = personalize(model, params, split.trainval, lam=lam, k=k, sigma=sigma).evaluate(split.test)
        out["rounds"].append(r)
        out["global"].append(REDUCTIONS["weighted"](np.asarray(glob), w))
        out["knn_only"].append(REDUCTIONS["weighted"](only["test_accuracy"], w))
        out["knnper"].append(REDUCTIONS["weighted"](tuned["test_accuracy"], w))
    return out


# ----------------------------------------------------------------------------------------------
# Distribution shift (thesis Fig. 3.13) and system heterogeneity (Fig. 3.10)


def distribution_shift(*, alpha: float = 0.3, n_clients: int = 10, k0: int = 10, n_steps: int = 20,
                       rounds: int = 100, lr: float = 10 ** -0.5, local_steps: int = 5, batch_size: int = 16,
                       lam: float = 0.7, k: int = 5, sigma: float = 1.0,
                       strategies: Sequence[str] = ("fixed", "fifo", "concat"), seed: int = 0) -> dict:
    r"""Datastore strategies under a distribution shift at step :math:`k_0` (thesis Fig. 3.13; spec §10.3).

    The digits are split into two disjoint random pools A and B, each partitioned over the same clients
    with Dirichlet(α) (client t gets :math:`S_t \subset A` and :math:`S'_t \subset B`), 70/30
    train/test inside each. The global model is trained with FedAvg on the A-train parts. The initial
    datastore is the first half of :math:`S_t`'s train part; the other half arrives in ``k0`` batches,
    then :math:`S'_t`'s train part in ``n_steps - k0`` batches. At step j the personalised model is
    evaluated on :math:`S_t`'s test part (j < k0) or :math:`S'_t`'s (j ≥ k0), then ingests the step's
    batch with the strategy (``fixed``, ``fifo``, ``concat``).

    Returns
    -------
    dict with ``steps``, ``accuracy[strategy]`` (pooled test accuracy per step), ``global`` (the global
    model's accuracy per step), ``store_size[strategy]`` (mean datastore size per step), ``n_test`` (test
    samples pooled at each step).
    """
    check_int("k0", k0, low=1)
    check_int("n_steps", n_steps, low=k0 + 1)
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=rounds, lr=lr, local_steps=local_steps,
                 batch_size=batch_size, seed=seed, k=k, sigma=sigma)
    check_real("lam", lam, low=0, high=1)
    strategies = [check_choice("strategies", s, UPDATE_STRATEGIES)
                  for s in check_type("strategies", strategies, (tuple, list))]
    if not strategies:
        raise ValueError("strategies must name at least one datastore strategy.")
    a, b = shifted_splits(n_clients, alpha, seed)
    params, _, _ = train_global(FederatedDataset(a.train, a.test, 10), rounds=rounds, seed=seed, lr=lr,
                                local_steps=local_steps, batch_size=batch_size)
    model = digits_model()
    fa_tr, fa_te = client_features(model, params, a.train), client_features(model, params, a.test)
    fb_tr, fb_te = client_features(model, params, b.train), client_features(model, params, b.test)
    init, batches = [], []
    for t in range(n_clients):
        n = len(fa_tr.labels[t])
        half = n // 2
        init.append(Datastore(fa_tr.keys[t][:half], fa_tr.labels[t][:half], 10))
        pieces = [(kk, vv) for kk, vv in zip(np.array_split(fa_tr.keys[t][half:], k0),
                                             np.array_split(fa_tr.labels[t][half:], k0))]
        pieces += [(kk, vv) for kk, vv in zip(np.array_split(fb_tr.keys[t], n_steps - k0),
                                              np.array_split(fb_tr.labels[t], n_steps - k0))]
        batches.append(pieces)
    out: dict = {"steps": list(range(n_steps)), "k0": k0, "accuracy": {}, "store_size": {}, "global": [],
                 "n_test": []}
    for j in range(n_steps):
        te = fa_te if j < k0 else fb_te
        correct = sum(int((g.argmax(1) == y).sum()) for g, y in zip(te.proba, te.labels))
        out["n_test"].append(sum(len(y) for y in te.labels))
        out["global"].append(correct / out["n_test"][-1])
    for strategy in strategies:
        stores = list(init)
        accs, sizes = [], []
        for j in range(n_steps):
            te = fa_te if j < k0 else fb_te
            correct, total = 0, 0
            for t, store in enumerate(stores):
                q, g, y = te.keys[t], te.proba[t], te.labels[t]
                if len(y) == 0:
                    continue
                p = g if len(store) == 0 else lam * store.proba(q, k=k, sigma=sigma) + (1 - lam) * g
                correct += int((p.argmax(1) == y).sum())
                total += len(y)
            accs.append(correct / total)
            sizes.append(float(np.mean([len(s) for s in stores])))
            stores = [s.update(*batches[t][j], strategy=strategy) for t, s in enumerate(stores)]
        out["accuracy"][strategy] = accs
        out["store_size"][strategy] = sizes
    return out


def system_heterogeneity(*, alpha: float = 0.3, n_clients: int = 20, delta_cs: Sequence[float] = (0.0, 0.1, 0.2, 0.3,
                                                                                                    0.4, 0.45),
                         rounds: int = 100, lr: float = 10 ** -0.5, local_steps: int = 5, batch_size: int = 16,
                         new_fraction: float = 0.5, lam: float | None = None, k: int = 10, sigma: float = 1.0,
                         features: NewClientFeatures | None = None, seed: int = 0) -> dict:
    r"""Weak and strong new clients with capacities :math:`1/2 \mp \Delta C` (thesis Fig. 3.10).

    Half the new clients (alternately) are weak, half strong; the total memory is constant. λ is selected
    per client on its validation set (datastore = train part at the client's capacity) unless ``lam``
    is given. ``features`` (from :func:`new_client_features`) skips training the global model again.
    Returns the average test accuracy of all new clients, the weak and the strong ones.
    """
    if isinstance(delta_cs, (str, bytes)) or not isinstance(delta_cs, (tuple, list, np.ndarray)) or \
            len(delta_cs) == 0:
        raise TypeError(f"delta_cs must be a non-empty sequence of capacity gaps in [0, 0.5], got {delta_cs!r}.")
    delta_cs = [check_real(f"delta_cs[{i}]", dc, low=0, high=0.5) for i, dc in enumerate(delta_cs)]
    if lam is not None:
        check_real("lam", lam, low=0, high=1)
    check_type("features", features, NewClientFeatures, optional=True)
    _check_setup(n_clients=n_clients, alpha=alpha, rounds=rounds, lr=lr, local_steps=local_steps,
                 batch_size=batch_size, seed=seed, k=k, sigma=sigma, min_clients=2)
    if features is None:
        features = new_client_features(alpha=alpha, n_clients=n_clients, rounds=rounds, lr=lr,
                                       local_steps=local_steps, batch_size=batch_size, new_fraction=new_fraction,
                                       seed=seed)
    feats = features
    store_tr, store_all, val, test = feats.train_store, feats.store, feats.validation, feats.query
    n_new = test.n_clients
    if n_new < 2:
        raise ValueError(f"system_heterogeneity needs at least 2 new clients, got {n_new}; raise new_fraction.")
    weak = np.arange(n_new) % 2 == 0
    w = feats.n_test.astype(float)
    out = {"delta_c": list(map(float, delta_cs)), "all": [], "weak": [], "strong": []}
    for dc in delta_cs:
        caps = np.where(weak, 0.5 - dc, 0.5 + dc)
        acc = np.zeros(n_new)
        for t in range(n_new):
            one = lambda f: type(f)([f.keys[t]], [f.proba[t]], [f.labels[t]])  # noqa: E731
            if lam is None:
                grid = accuracy_grid(one(store_tr), one(val), capacities=[caps[t]], lambdas=LAMBDA_GRID, k=k,
                                     sigma=sigma, seed=seed + t)[0, :, 0]
                grid = np.nan_to_num(grid, nan=0.0)
                lam_t = float(np.asarray(LAMBDA_GRID)[np.flatnonzero(grid >= grid.max() - 1e-12)].min())
            else:
                lam_t = lam
            acc[t] = accuracy_grid(one(store_all), one(test), capacities=[caps[t]], lambdas=[lam_t], k=k,
                                   sigma=sigma, seed=seed + t)[0, 0, 0]
        out["all"].append(REDUCTIONS["weighted"](acc, w))
        out["weak"].append(REDUCTIONS["weighted"](acc[weak], w[weak]))
        out["strong"].append(REDUCTIONS["weighted"](acc[~weak], w[~weak]))
    return out
