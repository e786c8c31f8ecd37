r"""Paper mode of notebook 06: FEM-OMD against FedOMD on MNIST and CIFAR-10 (thesis §4.4.5.2, Fig. 4.10).

The environment of §4.4.5.2 on the real images (:class:`fedlab.online.data.MixtureStream`,
``mode="label_groups"``): the 10 classes cut into m = 4 groups, one base distribution each; at every step t client c
draws :math:`\pi^*_{t,c}\sim\mathrm{Dir}(0.1)`, then :math:`\mathbf n_t\sim\mathcal M(n, \pi^*_{t,c})` training
samples from the training images and :math:`\mathbf n'_t\sim\mathcal M(n', \pi^*_{t,c})` test samples from the test
images of each group (with replacement). C = 10 clients, n' = 1, n = 6 (MNIST) or 5 (CIFAR-10), T = 1,000 steps.

Models: MNIST a 2-layer fully connected network (``"mnist_mlp"`` of :data:`fedlab.paper_mode.MODELS`, 784-200-10; our
width: the thesis does not give it), CIFAR-10 the shallow CNN :func:`fedlab.models.cifar_cnn` (2 conv + 2 FC). FEM-OMD
(:class:`~fedlab.online.algorithms.FEMOMD`, m = 4 components of that model) and the baseline FedOMD
(:class:`~fedlab.online.algorithms.FedOMD`, Euclidean mirror map) run online on the engine
(:func:`fedlab.online.experiments.mixture_stream_regret`).

Metric (4.47): the accuracy regret :math:`R'_{T,c} = \sum_t\mathrm{Acc}(h^*, \mathcal S'_{t,c}) -
\mathrm{Acc}(h_{t,c}, \mathcal S'_{t,c})`, averaged over clients (and then over seeds). :math:`h^*` is our reading of
"the optimal model trained on all samples": the same architecture trained centrally (:func:`train_central`:
:class:`fedlab.algorithms.Centralized` run by the engine on the pooled training samples of every step and client)
for the epochs of the setting's ``loader["comparator"]``.

Fig. 4.10's claims are :func:`fedlab.online.claims.paper_claims` (decided by
:func:`fedlab.online.experiments.sublinear_from`).
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Mapping

import numpy as np
import torch

from fedlab._validation import check_array, check_choice, check_int, check_sequence, check_type
from fedlab.algorithms import Centralized
from fedlab.data.fetch import require
from fedlab.data.vision import load_cifar10, load_mnist
from fedlab.engine import ClientData, FederatedDataset, LocalSGD, resolve_device, run
from fedlab.models import Model
from fedlab.online.algorithms import FEMOMD, FedOMD
from fedlab.online.data import MixtureStream
from fedlab.online.experiments import mixture_stream_regret
from fedlab.paper_mode import (DATA_SHAPES, PaperSetting, check_settings, seconds_per_round, setting_from_dict,
                               sweep_seed_means)

__all__ = ["CHAPTER", "DATASETS", "TABLE_METHODS", "PAPER_NAMES", "SETTINGS", "paper_stream", "train_central",
           "online_paper_run", "run_paper", "expected_seconds"]

CHAPTER = "06_online_mixtures"
DATASETS: tuple[str, ...] = ("mnist", "cifar10")
TABLE_METHODS: tuple[str, ...] = ("fem_omd", "fedomd")
"""Fig. 4.10's methods: FEM-OMD and the baseline FedOMD (``PRESETS`` names of :mod:`fedlab.online.algorithms`)."""
PAPER_NAMES = {"mnist": "MNIST", "cifar10": "CIFAR-10"}

_LOADERS: dict[str, Callable] = {"mnist": load_mnist, "cifar10": load_cifar10}
_COMMON = ("§4.4.5.2: the 10 classes split into m = 4 subsets, C = 10 clients, π*_{t,c} ~ Dir(0.1) drawn at every "
           "step, n' = 1 test sample per step, T = 1,000, baseline FedOMD, accuracy regret (4.47) against h* trained "
           "on all samples; the thesis gives no step sizes, seeds or training of h*. Ours: FEM-OMD with K = 1 EM "
           "step, one SGD step of the step's samples per EM step (local steps 1, batch n, step lr), the last EM "
           "output kept (average='last'), OMD step sqrt(log m / t); FedOMD with η_t = lr/√t; h* the same "
           "architecture trained by SGD (momentum 0.9) on the pooled training draws of every step and client "
           "(loader['comparator']); samples drawn with replacement from the train (pools) and test files. ")

SETTINGS: dict[str, PaperSetting] = {
    "mnist": PaperSetting(
        "mnist", "mnist_mlp", 10, rounds=1000, local_steps=1, batch_size=6, lr=0.1, seeds=3,
        paper=_COMMON + "MNIST: n = 6, a 2-layer fully connected network (ours: 784-200-10, ReLU; the "
              "thesis does not give the width).",
        loader={"stream": {"n_components": 4, "n_samples": 6, "n_test": 1, "alpha": 0.1}, "omd_lr": 1.0,
                "comparator": {"epochs": 5, "batch_size": 64, "lr": 0.05, "momentum": 0.9}}),
    "cifar10": PaperSetting(
        "cifar10", "cifar_cnn", 10, rounds=1000, local_steps=1, batch_size=5, lr=0.05, seeds=3,
        paper=_COMMON + "CIFAR-10: n = 5, a shallow CNN with 2 conv and 2 FC layers (ours: the McMahan CIFAR CNN, "
              "conv 32/64, dense 512).",
        loader={"stream": {"n_components": 4, "n_samples": 5, "n_test": 1, "alpha": 0.1}, "omd_lr": 1.0,
                "comparator": {"epochs": 10, "batch_size": 64, "lr": 0.01, "momentum": 0.9}}),
}
"""One :class:`~fedlab.paper_mode.PaperSetting` per data set: ``clients`` is C, ``rounds`` T, ``lr`` the SGD step of
FEM-OMD's M-step and FedOMD's :math:`\\eta_0`, ``batch_size`` n; ``loader`` holds the stream's options, FEM-OMD's
OMD step and :math:`h^*`'s training (this chapter builds its own stream, not :func:`fedlab.data.federated.load_federated`'s
split)."""

def _check_setting(setting) -> PaperSetting:
    setting = check_type("setting", setting, PaperSetting)
    check_choice("setting.dataset", setting.dataset, DATASETS)
    check_int("setting.clients", setting.clients, low=1)
    for key in ("stream", "omd_lr", "comparator"):
        if key not in setting.loader:
            raise ValueError(f"setting.loader must hold 'stream', 'omd_lr' and 'comparator', lacks {key!r}.")
    return setting


def paper_stream(setting: PaperSetting, seed: int = 0, *, pools=None) -> MixtureStream:
    """The setting's stream on the real images: training pool from the train file, test pool from the test file
    (``pools = (train, test)`` replaces them, e.g. stand-in arrays); stops with the fetch command when absent."""
    setting = _check_setting(setting)
    seed = check_int("seed", seed, low=0)
    if pools is not None:
        check_sequence("pools", pools, size=2)
    else:
        require(setting.dataset)
        load = _LOADERS[setting.dataset]
        pools = (load("train", as_float=True), load("test", as_float=True))
    return MixtureStream(pools[0], pools[1], n_classes=DATA_SHAPES[setting.dataset][1], n_clients=setting.clients,
                         seed=seed, **setting.loader["stream"])


def train_central(model: Model, x: Any, y: Any, *, epochs: int, batch_size: int, lr: float, momentum: float = 0.0,
                  seed: int = 0, device=None) -> Callable[[np.ndarray], np.ndarray]:
    r""":math:`h^*` of (4.47): ``model`` trained centrally on ``(x, y)``, :class:`fedlab.algorithms.Centralized` run by
    the engine for ``epochs`` rounds of ⌈N / batch_size⌉ minibatch SGD steps (batches drawn with replacement, the
    momentum buffer restarting every epoch), from the initialisation of ``seed``. Returns ``predict``: inputs ->
    labels."""
    check_type("model", model, Model)
    x = check_array("x", x, dtype=None, finite=False)
    if x.dtype.kind not in "fiu" or x.ndim < 2 or len(x) == 0:
        raise ValueError(f"x must hold N >= 1 numeric inputs, shape (N, ...), got {x.dtype} of shape {x.shape}.")
    x = check_array("x", x, dtype=None)
    y = check_array("y", y, shape=(len(x),), nonnegative=True, dtype=np.int64)
    epochs, seed = check_int("epochs", epochs, low=1), check_int("seed", seed, low=0)
    solver = LocalSGD(lr=lr, local_steps=math.ceil(len(x) / check_int("batch_size", batch_size, low=1)),
                      batch_size=batch_size, momentum=momentum)
    pooled = ClientData.from_arrays([x], [y])
    data = FederatedDataset(pooled, pooled)
    state, _ = run(Centralized(model, solver), data, rounds=epochs, seed=seed, eval_every=epochs, progress=False,
                   device=resolve_device(device))
    params = state.params

    @torch.no_grad()
    def predict(inputs: np.ndarray) -> np.ndarray:
        inputs = torch.as_tensor(np.asarray(inputs, dtype=np.float32))
        device = next(iter(params.values())).device
        return np.concatenate([model.forward(params, part.to(device)).argmax(-1).cpu().numpy()
                               for part in torch.split(inputs, 1024)]) if len(inputs) else np.zeros(0, np.int64)

    return predict


def online_paper_run(*, setting: Mapping, seed: int = 0, device=None) -> dict:
    """FEM-OMD and FedOMD on one seed of a real data set (``setting`` as ``dataclasses.asdict``, as the sweep stores
    it): :func:`fedlab.online.experiments.mixture_stream_regret`'s dict (``t``, ``comparator_accuracy``, per method
    ``regret``, ``accuracy``, ``mean_accuracy``; ``final_weights``)."""
    s = _check_setting(setting_from_dict(setting))
    seed = check_int("seed", seed, low=0)
    stream = paper_stream(s, seed)
    options = s.loader["comparator"]
    comparator = lambda x, y: train_central(s.build_model(), x, y, seed=seed, device=device, **options)
    return mixture_stream_regret(stream, model=s.build_model, comparator=comparator, horizon=s.rounds,
                                 methods=TABLE_METHODS, lr=s.loader["omd_lr"], lr_em=s.lr, local_steps=s.local_steps,
                                 batch_size=s.batch_size, seed=seed, device=device)


def _seed_mean(runs: list[dict]) -> dict:
    """Curves and numbers averaged over seeds; each method keeps its per-seed regret curves (``regret_runs``)."""
    mean = {"t": runs[0]["t"], "comparator_accuracy": float(np.mean([r["comparator_accuracy"] for r in runs]))}
    for m in TABLE_METHODS:
        mean[m] = {"regret": np.mean([r[m]["regret"] for r in runs], 0).tolist(),
                   "regret_runs": [r[m]["regret"] for r in runs],
                   "accuracy": np.mean([r[m]["accuracy"] for r in runs], 0).tolist(),
                   "mean_accuracy": float(np.mean([r[m]["mean_accuracy"] for r in runs]))}
    return mean


def run_paper(*, seeds: int | None = None, device=None, datasets=DATASETS, settings: Mapping | None = None,
              store=None) -> dict:
    """Fig. 4.10: FEM-OMD and FedOMD on every setting whose data set is in ``datasets``, ``seeds`` seeds (default the
    setting's), stored with :func:`fedlab.experiments.sweep` as each run finishes (an interrupted run resumes).

    Returns
    -------
    dict
        ``{setting: {"seeds": [...], "mean": {"t", "comparator_accuracy", method: {"regret", "regret_runs",
        "accuracy", "mean_accuracy"}}}}`` (curves averaged over seeds).
    """
    return sweep_seed_means(online_paper_run, check_settings(settings, SETTINGS, _check_setting), datasets,
                            seeds=seeds, device=device, store=store, average=_seed_mean)


def _stand_in_pools(setting: PaperSetting, size: int = 64):
    shape, n_classes, _ = DATA_SHAPES[setting.dataset]
    rng = np.random.default_rng(0)
    return tuple((rng.random((size, *shape), dtype=np.float32), np.arange(size) % n_classes) for _ in range(2))


def expected_seconds(device=None, settings: Mapping | None = None) -> dict[str, float]:
    """Expected total run time (s) of each setting on this machine: the online steps, measured with
    :func:`fedlab.paper_mode.seconds_per_round` of FEM-OMD and FedOMD on a stream of random stand-in images of the real
    shapes (training and evaluation, after a warm-up step), × T; plus :math:`h^*`'s training, measured on four SGD
    steps, × epochs × ⌈C·n·T / batch⌉; all × seeds. Loading the files and predicting with :math:`h^*` are not
    counted."""
    out = {}
    for name, s in check_settings(settings, SETTINGS, _check_setting).items():
        stream = paper_stream(s, pools=_stand_in_pools(s))
        solver = LocalSGD(lr=s.lr, local_steps=s.local_steps, batch_size=s.batch_size)
        algorithms = [FEMOMD(s.build_model(), solver, n_components=stream.n_components, lr=s.loader["omd_lr"],
                             average="last", backend="batched"), FedOMD(s.build_model(), solver, backend="batched")]
        per_step = sum(seconds_per_round(a, stream, rounds=2, device=device) for a in algorithms)
        c = s.loader["comparator"]
        x, y = _stand_in_pools(s, 4 * c["batch_size"])[0]
        train_central(s.build_model(), x[:c["batch_size"]], y[:c["batch_size"]], **c, device=device)  # warm-up
        start = time.perf_counter()
        train_central(s.build_model(), x, y, **{**c, "epochs": 1}, device=device)
        per_sgd = (time.perf_counter() - start) / 4
        pooled = s.clients * s.loader["stream"]["n_samples"] * s.rounds
        out[name] = float(s.seeds * (per_step * s.rounds + per_sgd * c["epochs"] * math.ceil(pooled / c["batch_size"])))
    return out
