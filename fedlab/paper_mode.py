r"""Paper mode's runtime: the real-data settings of a chapter, their sweeps over seeds, timing, stand-in data, and
the stop with the fetch command when a data set is absent.

A notebook with a paper mode names its data sets in its metadata (``{"fedlab": {"paper_data": [...]}}``, read by
the workbook) and calls :func:`start_paper_mode` first: when a data set is absent it shows the chapter's real-data
claims as *not run* with the fetch command and stops with :class:`DataAbsent`. The data sets themselves are read by
:mod:`fedlab.data.federated`.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from fedlab._rng import as_numpy_rng
from fedlab._validation import (check_bool, check_callable, check_choice, check_int, check_real, check_sequence,
                                check_type)
from fedlab.claims import Claim, show_claims
from fedlab.data.federated import load_federated
from fedlab.data.fetch import DATASETS, fetch_command, is_present
from fedlab.engine import FederatedDataset, LocalSGD, resolve_device, run, solver_from_recipe
from fedlab.experiments import sweep
from fedlab.models import MLP, LinearModel, Model, char_lstm, cifar_cnn, femnist_cnn

__all__ = ["DataAbsent", "NOT_RUN", "not_run_why", "absent_claims", "start_paper_mode", "PaperSetting", "MODELS",
           "DATA_SHAPES", "check_settings", "settings_table", "sweep_settings", "sweep_seed_means", "seed_mean_at",
           "setting_from_dict", "mean_over_seeds", "check_seed_means", "stand_in_data", "seconds_per_round"]

NOT_RUN = "needs the real data set (MODE='paper'): "
"""The start of a paper-mode claim's ``why`` when its data set was not run; :func:`not_run_why` adds the command."""


def not_run_why(dataset: str) -> str:
    """Why a paper-mode claim on ``dataset`` was not run: :data:`NOT_RUN` and the fetch command."""
    return NOT_RUN + fetch_command(check_choice("dataset", dataset, DATASETS))


class DataAbsent(FileNotFoundError):
    """A paper-mode run stopped because a real data set is not in ``$FEDLAB_DATA``; the message is the command."""


def absent_claims(claims: list[Claim], names) -> list[Claim]:
    """``claims`` marked *not run*, saying which data sets are absent and the command that fetches them."""
    claims = _check_claims(claims)
    names = [check_choice("names", n, DATASETS) for n in check_sequence("names", names, nonempty=True)]
    why = f"data absent: {fetch_command(*names)}"
    return [dataclasses.replace(c, measured=None, holds=None, seeds=None, why=why) for c in claims]


def _check_claims(claims) -> list[Claim]:
    check_sequence("claims", claims)
    return [check_type("claims", c, Claim) for c in claims]


def start_paper_mode(names, claims: list[Claim]) -> None:
    """Check that the data sets ``names`` are present; if not, show ``claims`` as *not run: data absent* (the
    scoreboard counts them) and raise :class:`DataAbsent` with the exact fetch command."""
    names = [check_choice("names", n, DATASETS) for n in check_sequence("names", names, nonempty=True)]
    claims = _check_claims(claims)
    missing = [n for n in names if not is_present(n)]
    if missing:
        show_claims(absent_claims(claims, missing))
        raise DataAbsent(f"paper mode needs {', '.join(missing)} in {DATASETS[missing[0]].folder.parent}: run  "
                         f"{fetch_command(*missing)}")


#: The papers' models by name: ``MODELS[name](n_classes)``.
MODELS: dict[str, Callable[[int], Model]] = {
    "femnist_cnn": femnist_cnn,
    "cifar_cnn": cifar_cnn,
    "char_lstm": lambda n_classes: char_lstm(n_classes),
    "mnist_logistic": lambda n_classes: LinearModel(28 * 28, n_classes),
    "mnist_mlp": lambda n_classes: MLP(28 * 28, (200,), n_classes),
}

#: Per data set: one sample's shape, the number of classes and a typical client size (for :func:`stand_in_data`).
DATA_SHAPES: dict[str, tuple[tuple[int, ...], int, int]] = {
    "mnist": ((1, 28, 28), 10, 600), "fashion_mnist": ((1, 28, 28), 10, 600), "emnist": ((1, 28, 28), 62, 300),
    "femnist": ((1, 28, 28), 62, 226), "cifar10": ((3, 32, 32), 10, 500), "cifar100": ((3, 32, 32), 100, 500),
    "shakespeare": ((80,), 100, 400),
}


@dataclass(frozen=True)
class PaperSetting:
    """One real-data experiment of a paper mode: our setting, and the paper's in words where it differs.

    ``clients=None`` keeps every natural client; ``loader`` holds :func:`load_federated`'s options; ``recipe`` the
    authors' local solver beyond step size, batch and local steps, as :class:`~fedlab.engine.LocalSGD` options
    (``momentum``, ``weight_decay``, ``optimizer``, ``epochs``, ``keep_state``) and a ``schedule`` named as in the
    authors' code: ``"multi_step"`` (÷10 at half and three quarters of the rounds), ``"sqrt"`` (1/√round) or
    ``"cosine"``: :data:`fedlab.engine.SCHEDULES`). :meth:`solver` builds it.
    """

    dataset: str
    model: str
    clients: int | None
    rounds: int
    local_steps: int
    batch_size: int
    lr: float
    seeds: int
    paper: str
    loader: dict = field(default_factory=dict)
    recipe: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_choice("dataset", self.dataset, DATASETS)
        check_choice("model", self.model, MODELS)
        for name in ("rounds", "local_steps", "batch_size", "seeds"):
            check_int(name, getattr(self, name), low=1)
        if self.clients is not None:
            check_int("clients", self.clients, low=1)
        check_real("lr", self.lr, low=0, low_open=True)
        self.solver()

    def solver(self, lr: float | None = None, *, method: type | None = None) -> LocalSGD:
        """The local solver: step size ``lr`` (default the setting's), batch, local steps and the ``recipe``
        (:func:`fedlab.engine.solver_from_recipe`, which leaves out what ``method`` cannot keep)."""
        return solver_from_recipe(self.recipe, lr=self.lr if lr is None else lr, local_steps=self.local_steps,
                                  batch_size=self.batch_size, rounds=self.rounds, method=method)

    def solver_text(self) -> str:
        """The local solver in words, for the settings table."""
        r = self.recipe
        parts = [{"sgd": "SGD", "adam": "Adam", "adamw": "AdamW"}[r.get("optimizer", "sgd")]]
        parts += [f"momentum {r['momentum']:g}"] if r.get("momentum") else []
        parts += [f"weight decay {r['weight_decay']:g}"] if r.get("weight_decay") else []
        parts.append(f"{r['epochs']} epoch(s) a round" if r.get("epochs") else f"{self.local_steps} step(s) a round")
        parts.append({"multi_step": "÷10 at 1/2 and 3/4 of the rounds", "sqrt": "step ∝ 1/√round",
                      "cosine": "cosine decay"}.get(r.get("schedule"), "constant step"))
        parts += ["optimizer kept across rounds"] if r.get("keep_state") else []
        return ", ".join(parts)

    def build_model(self) -> Model:
        return MODELS[self.model](DATA_SHAPES[self.dataset][1])

    def load(self, seed: int = 0) -> FederatedDataset:
        """The real data set (stops with the fetch command when absent)."""
        extra = {} if self.clients is None else {"n_clients": self.clients}
        return load_federated(self.dataset, seed=seed, **extra, **self.loader)


def check_settings(settings, default: Mapping[str, "PaperSetting"],
                   check: Callable[["PaperSetting"], Any] | None = None) -> dict[str, "PaperSetting"]:
    """A chapter's paper-mode settings: ``default`` when ``settings`` is None, else a mapping of
    :class:`PaperSetting` (each passed to ``check``, a chapter's own requirement, when given)."""
    check_type("default", default, Mapping)
    if check is not None:
        check_callable("check", check)
    settings = default if settings is None else check_type("settings", settings, Mapping)
    out = {}
    for key, value in settings.items():
        value = check_type(f"settings[{key!r}]", value, PaperSetting)
        if check is not None:
            check(value)
        out[key] = value
    return out


def settings_table(settings: Mapping[str, PaperSetting]) -> tuple[list[str], list[list]]:
    """``(header, rows)`` of a chapter's paper-mode settings, ours next to the paper's (for
    :func:`fedlab.tables.show_table`)."""
    check_type("settings", settings, Mapping)
    header = ["experiment", "data set", "model", "clients", "rounds", "batch", "lr", "local solver", "seeds",
              "the paper's setting"]
    rows = [[name, s.dataset, s.model, "all" if s.clients is None else s.clients, s.rounds, s.batch_size,
             f"{s.lr:g}", s.solver_text(), s.seeds, s.paper]
            for name, s in ((n, check_type("settings", v, PaperSetting)) for n, v in settings.items())]
    return header, rows


def sweep_settings(fn: Callable, settings: Mapping[str, PaperSetting], datasets, points: list[dict], *,
                   seeds: int | None = None, device=None, store=None, named: bool = False) -> dict[str, list[dict]]:
    """Run ``fn(setting=<the setting as a dict>, device=<name>, seed=s, **point)`` (and ``name=<its key>`` when
    ``named``) for every setting whose data set is in ``datasets``, every point and ``seeds`` seeds (default each
    setting's own), through :func:`fedlab.experiments.sweep` (stored, so an interrupted paper run resumes; the
    device is part of the stored configuration). Returns each setting's run records, by its key."""
    check_type("settings", settings, Mapping)
    settings = {k: check_type(f"settings[{k!r}]", v, PaperSetting) for k, v in settings.items()}
    known = {s.dataset for s in settings.values()}
    datasets = [check_choice("datasets", d, known) for d in check_sequence("datasets", datasets, nonempty=True)]
    seeds = None if seeds is None else check_int("seeds", seeds, low=1)
    device, named = str(resolve_device(device)), check_bool("named", named)
    out = {}
    for key, setting in settings.items():
        if setting.dataset not in datasets:
            continue
        base = {"setting": dataclasses.asdict(setting), "device": device, **({"name": key} if named else {})}
        out[key] = sweep(fn, [{**base, **point} for point in points], range(seeds or setting.seeds), store=store,
                         executor="sequential", progress=False)
    return out


def sweep_seed_means(fn: Callable, settings: Mapping[str, PaperSetting], datasets, *, seeds: int | None = None,
                     device=None, store=None, named: bool = False, average: Callable | None = None) -> dict:
    """:func:`sweep_settings` with one run per setting and seed, then each setting's ``{"seeds": [...], "mean":
    average(its seeds' results)}`` (default :func:`mean_over_seeds`): the form :func:`check_seed_means` accepts and
    :func:`seed_mean_at` reads."""
    average = mean_over_seeds if average is None else check_callable("average", average)
    runs = sweep_settings(fn, settings, datasets, [{}], seeds=seeds, device=device, store=store, named=named)
    return {name: {"seeds": [r["seed"] for r in records], "mean": average([r["result"] for r in records])}
            for name, records in runs.items()}


def seed_mean_at(results: Mapping, name: str, *keys):
    """``results[name]["mean"][keys[0]][keys[1]]...`` of :func:`sweep_seed_means`'s output, or ``None`` where a
    level is missing (a setting not run)."""
    value = check_type("results", results, Mapping).get(name, {}).get("mean")
    for key in keys:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def setting_from_dict(setting: Mapping) -> PaperSetting:
    """The :class:`PaperSetting` whose fields a sweep stored (``dataclasses.asdict``), errors naming ``setting``."""
    check_type("setting", setting, Mapping)
    try:
        return PaperSetting(**setting)
    except (TypeError, ValueError) as err:
        raise type(err)(f"setting must hold a PaperSetting's fields: {err}") from None


def check_seed_means(results) -> dict:
    """A paper run's results keyed by setting, each ``{"seeds": [...], "mean": {...}}`` (the seeds'
    :func:`mean_over_seeds`), or ``None`` (nothing run: ``{}``); errors name ``results``."""
    results = {} if results is None else check_type("results", results, dict)
    for key, value in results.items():
        if not isinstance(value, dict) or not isinstance(value.get("mean"), dict):
            raise ValueError(f"results[{key!r}] must be a dict with a 'mean' dict (run_paper's output), got "
                             f"{value!r:.80}.")
    return results


def mean_over_seeds(runs: list):
    """Several seeds' results (nested dicts) averaged leaf by leaf; other leaves (strings, lists) are the first
    run's."""
    check_sequence("runs", runs, nonempty=True)
    first = runs[0]
    if isinstance(first, Mapping):
        return {k: mean_over_seeds([r[k] for r in runs]) for k in first}
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return float(np.mean(runs))
    return first


def stand_in_data(setting: PaperSetting, *, n_clients: int | None = None, seed: int = 0) -> FederatedDataset:
    """Random data with the real set's shapes and client sizes (:data:`DATA_SHAPES`), for timing a setting where
    the files are absent (speed does not depend on the values)."""
    check_type("setting", setting, PaperSetting)
    shape, n_classes, size = DATA_SHAPES[setting.dataset]
    k = check_int("n_clients", n_clients if n_clients is not None else (setting.clients or 100), low=1)
    rng = as_numpy_rng(check_int("seed", seed, low=0))
    scale = n_classes - 1 if setting.dataset == "shakespeare" else 1
    xs = [np.floor(rng.random((size, *shape), dtype=np.float32) * scale) if scale > 1 else
          rng.random((size, *shape), dtype=np.float32) for _ in range(k)]
    return FederatedDataset.from_client_arrays(xs, [rng.integers(0, n_classes, size) for _ in range(k)],
                                               n_classes=n_classes, seed=seed)


def seconds_per_round(algorithm, data: FederatedDataset, *, rounds: int = 2, device=None) -> float:
    """Measured wall-clock seconds per round (training and evaluation) of ``algorithm`` on ``data``, after one
    warm-up round; multiply by a setting's rounds and seeds for its expected run time on this machine."""
    rounds = check_int("rounds", rounds, low=1)
    state, _ = run(algorithm, data, rounds=1, device=device, progress=False)
    start = time.perf_counter()
    run(algorithm, data, rounds=rounds, state=state, device=device, progress=False)
    return (time.perf_counter() - start) / rounds


