r"""Paper mode's data: the real data sets as :class:`~fedlab.engine.FederatedDataset`\ s, from ``$FEDLAB_DATA``.

* FEMNIST and Shakespeare keep their **natural** split: one client per writer, one per speaking role, with
  the train/test split TensorFlow Federated publishes (files from ``python -m fedlab data fetch femnist``).
* MNIST, Fashion-MNIST, EMNIST, CIFAR-10 and CIFAR-100 are centralised: the experiment partitions the training
  images over ``n_clients`` clients with one of :data:`fedlab.data.PARTITIONERS` (thesis §3.5.6: Dirichlet for
  CIFAR-10, Pachinko over the superclasses for CIFAR-100, §1.6.2 for the pathological split), then splits each
  client's samples into train and test (``test_fraction``, as the FedEM code does).

Shakespeare is LEAF's next-character task: every window of ``seq_len`` characters (a ``stride`` apart) of a
role's lines predicts the character that follows; characters are indices into :data:`VOCABULARY`
(``string.printable``, as in the FedEM code), stored as floats in ``x`` (the engine stores features as float32;
:func:`fedlab.models.char_lstm` casts them back).

A notebook with a paper mode names its data sets in its metadata (``{"fedlab": {"paper_data": [...]}}``, read by
the workbook) and calls :func:`start_paper_mode` first: when a data set is absent it shows the chapter's real-data
claims as *not run* with the fetch command and stops with :class:`DataAbsent`.
"""
from __future__ import annotations

import dataclasses
import string
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import h5py
import numpy as np
import torch

from fedlab._rng import as_numpy_rng
from fedlab._validation import (check_bool, check_callable, check_choice, check_int, check_path, check_real,
                                check_sequence, check_type)
from fedlab.claims import Claim, show_claims
from fedlab.data.fetch import DATASETS, fetch_command, is_present, require
from fedlab.data.partition import partition, train_test_split_clients
from fedlab.data.vision import load_cifar10, load_cifar100, load_emnist, load_fashion_mnist, load_mnist
from fedlab.engine import ClientData, FederatedDataset, resolve_device, run
from fedlab.experiments import sweep
from fedlab.models import MLP, LinearModel, Model, char_lstm, cifar_cnn, femnist_cnn

__all__ = ["DataAbsent", "absent_claims", "start_paper_mode", "PaperSetting", "MODELS", "DATA_SHAPES", "settings_table",
           "sweep_settings", "sweep_seed_means", "seed_mean_at", "setting_from_dict", "mean_over_seeds",
           "check_seed_means", "stand_in_data",
           "seconds_per_round", "VOCABULARY", "encode_text", "next_character_samples", "read_tff_clients",
           "load_femnist",
           "load_shakespeare", "group_clients", "load_partitioned", "FEDERATED_LOADERS", "load_federated"]

VOCABULARY = string.printable
_INDEX = {c: i for i, c in enumerate(VOCABULARY)}
_SPACE = _INDEX[" "]
_TFF_FILES = {"femnist": ("fed_emnist_train.h5", "fed_emnist_test.h5"),
              "shakespeare": ("shakespeare_train.h5", "shakespeare_test.h5")}


class DataAbsent(FileNotFoundError):
    """A paper-mode run stopped because a real data set is not in ``$FEDLAB_DATA``; the message is the command."""


def absent_claims(claims: list[Claim], names) -> list[Claim]:
    """``claims`` marked *not run*, saying which data sets are absent and the command that fetches them."""
    claims = _check_claims(claims)
    names = [check_choice("names", n, DATASETS) for n in check_sequence("names", names, nonempty=True)]
    why = f"data absent: {fetch_command(*names)}"
    return [dataclasses.replace(c, measured=None, holds=None, why=why) for c in claims]


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

    ``clients=None`` keeps every natural client; ``loader`` holds :func:`load_federated`'s options.
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

    def __post_init__(self) -> None:
        check_choice("dataset", self.dataset, DATASETS)
        check_choice("model", self.model, MODELS)
        for name in ("rounds", "local_steps", "batch_size", "seeds"):
            check_int(name, getattr(self, name), low=1)
        if self.clients is not None:
            check_int("clients", self.clients, low=1)
        check_real("lr", self.lr, low=0, low_open=True)

    def build_model(self) -> Model:
        return MODELS[self.model](DATA_SHAPES[self.dataset][1])

    def load(self, seed: int = 0) -> FederatedDataset:
        """The real data set (stops with the fetch command when absent)."""
        extra = {} if self.clients is None else {"n_clients": self.clients}
        return load_federated(self.dataset, seed=seed, **extra, **self.loader)


def settings_table(settings: Mapping[str, PaperSetting]) -> tuple[list[str], list[list]]:
    """``(header, rows)`` of a chapter's paper-mode settings, ours next to the paper's (for
    :func:`fedlab.tables.show_table`)."""
    check_type("settings", settings, Mapping)
    header = ["experiment", "data set", "model", "clients", "rounds", "local steps", "batch", "lr", "seeds",
              "the paper's setting"]
    rows = [[name, s.dataset, s.model, "all" if s.clients is None else s.clients, s.rounds, s.local_steps,
             s.batch_size, f"{s.lr:g}", s.seeds, s.paper]
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


def encode_text(text: str) -> np.ndarray:
    """Character indices into :data:`VOCABULARY` (a character outside it becomes a space)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}.")
    return np.fromiter((_INDEX.get(c, _SPACE) for c in text), dtype=np.int64, count=len(text))


def next_character_samples(codes: np.ndarray, seq_len: int = 80, stride: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Windows ``codes[i : i + seq_len]`` (``i`` a multiple of ``stride``) and the character after each.

    Returns ``x`` of shape ``(n, seq_len)`` and ``y`` of shape ``(n,)`` (``n = 0`` when the text is too short).
    """
    codes = np.asarray(codes)
    if codes.ndim != 1 or codes.dtype.kind not in "iu":
        raise ValueError(f"codes must be a 1-D integer array, got dtype {codes.dtype} and shape {codes.shape}.")
    seq_len, stride = check_int("seq_len", seq_len, low=1), check_int("stride", stride, low=1)
    starts = np.arange(0, len(codes) - seq_len, stride)
    x = codes[starts[:, None] + np.arange(seq_len)] if len(starts) else np.zeros((0, seq_len), np.int64)
    return x, codes[starts + seq_len]


def _extracted(name: str) -> tuple[Path, Path]:
    """The train and test HDF5 files of ``name``, extracted from its archive on first use."""
    require(name)
    dataset = DATASETS[name]
    folder = dataset.folder
    targets = [folder / f for f in _TFF_FILES[name]]
    if not all(t.is_file() for t in targets):
        archive = folder / dataset.files[0].name
        try:
            with tarfile.open(archive, "r:*") as tar:
                members = {Path(m.name).name: m for m in tar if m.isfile()}
                for target in targets:
                    if target.name not in members:
                        raise ValueError(f"{archive} lacks {target.name}: not the published archive.")
                    part = target.with_name(target.name + ".part")
                    with tar.extractfile(members[target.name]) as src, part.open("wb") as out:
                        out.write(src.read())
                    part.replace(target)
        except (tarfile.TarError, EOFError, OSError) as err:
            raise ValueError(f"{archive} is not a readable archive ({err}); delete it and fetch it again.") from err
    return targets[0], targets[1]


def read_tff_clients(path: str | Path, fields: tuple[str, ...]) -> dict[str, dict[str, np.ndarray]]:
    """Read a TensorFlow Federated HDF5 file: ``examples/<client id>/<field>`` for each client, in id order."""
    path = check_path("path", path)
    try:
        with h5py.File(path, "r") as f:
            examples = f["examples"]
            return {cid: {fld: examples[cid][fld][()] for fld in fields} for cid in sorted(examples)}
    except (OSError, KeyError) as err:
        raise ValueError(f"{path} is not a TFF client file with fields {fields} ({err}).") from err


def _optional_count(n_clients) -> int | None:
    return None if n_clients is None else check_int("n_clients", n_clients, low=1)


def _optional_fraction(fraction, n_clients) -> float | None:
    if fraction is not None and n_clients is not None:
        raise ValueError("give n_clients or fraction, not both.")
    return None if fraction is None else check_real("fraction", fraction, low=0, high=1, low_open=True)


def _choose_clients(ids: list[str], n_clients: int | None, seed: int, fraction: float | None = None) -> list[str]:
    """``n_clients`` of ``ids``, or a ``fraction`` of them (at least one), drawn at random with ``seed``; all
    when both are None."""
    if fraction is not None:
        n_clients = max(1, int(round(fraction * len(ids))))
    if n_clients is None:
        return ids
    n_clients = check_int("n_clients", n_clients, low=1, high=len(ids))
    pick = np.sort(as_numpy_rng(seed).choice(len(ids), size=n_clients, replace=False))
    return [ids[i] for i in pick]


def _dataset(train: list[tuple[np.ndarray, np.ndarray]], test: list[tuple[np.ndarray, np.ndarray]],
             n_classes: int) -> FederatedDataset:
    return FederatedDataset(ClientData.from_arrays([x for x, _ in train], [y for _, y in train]),
                            ClientData.from_arrays([x for x, _ in test], [y for _, y in test], allow_empty=True),
                            n_classes)


def load_femnist(*, n_clients: int | None = None, fraction: float | None = None, seed: int = 0) -> FederatedDataset:
    """FEMNIST by writer (62 classes, images ``(1, 28, 28)`` in [0, 1]): TFF's train and test samples of each
    writer; ``n_clients`` writers, or a ``fraction`` of them (LEAF's user sampling), drawn at random with
    ``seed`` (all 3,400 by default).

    The padded tensors hold ``n_clients x`` the largest writer's samples: all writers need about 5 GB.
    """
    n_clients, seed = _optional_count(n_clients), check_int("seed", seed, low=0)
    fraction = _optional_fraction(fraction, n_clients)
    train_path, test_path = _extracted("femnist")
    train = read_tff_clients(train_path, ("pixels", "label"))
    test = read_tff_clients(test_path, ("pixels", "label"))
    ids = _choose_clients([c for c in train if c in test], n_clients, seed, fraction)
    pairs = [[_writer_samples(path, c, d[c]) for c in ids] for path, d in ((train_path, train), (test_path, test))]
    return _dataset(pairs[0], pairs[1], 62)


def _writer_samples(path: Path, writer: str, fields: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """One FEMNIST writer's images ``(n, 1, 28, 28)`` and labels in [0, 62), the file and writer named in errors."""
    pixels, labels = fields["pixels"], fields["label"]
    where = f"{path}, writer {writer}"
    if pixels.ndim != 3 or pixels.shape[1:] != (28, 28):
        raise ValueError(f"{where}: pixels must have shape (n, 28, 28), got {pixels.shape}.")
    if labels.shape != (len(pixels),):
        raise ValueError(f"{where}: {len(pixels)} images but labels of shape {labels.shape}; expected one label per "
                         f"image, shape ({len(pixels)},).")
    bad = labels[(labels < 0) | (labels > 61)]
    if bad.size:
        raise ValueError(f"{where}: labels must lie in [0, 61], found {bad[:5].tolist()}.")
    return pixels[:, None].astype(np.float32), labels.astype(np.int64)


def load_shakespeare(*, n_clients: int | None = None, fraction: float | None = None, seq_len: int = 80,
                     stride: int = 80, min_samples: int = 2, seed: int = 0) -> FederatedDataset:
    """Shakespeare by speaking role, LEAF's next-character task (:func:`next_character_samples` on each role's
    concatenated lines, train and test as TFF splits them). Roles with fewer than ``min_samples`` training
    windows or no test window are left out; then ``n_clients`` roles, or a ``fraction`` of them, are drawn at
    random with ``seed`` (only those are cut into windows: ``stride=1``, every position, stays affordable)."""
    seq_len, stride = check_int("seq_len", seq_len, low=1), check_int("stride", stride, low=1)
    min_samples, seed = check_int("min_samples", min_samples, low=1), check_int("seed", seed, low=0)
    n_clients = _optional_count(n_clients)
    fraction = _optional_fraction(fraction, n_clients)
    train_path, test_path = _extracted("shakespeare")
    train, test = (_role_texts(path, read_tff_clients(path, ("snippets",))) for path in (train_path, test_path))

    def n_windows(text: str) -> int:
        return len(range(0, len(text) - seq_len, stride))

    ids = [c for c in train if c in test and n_windows(train[c]) >= min_samples and n_windows(test[c]) >= 1]
    if not ids:
        raise ValueError(f"no speaking role has {min_samples} training windows of {seq_len + 1} characters.")
    ids = _choose_clients(ids, n_clients, seed, fraction)
    samples = [[next_character_samples(encode_text(texts[c]), seq_len, stride) for c in ids] for texts in (train, test)]
    return _dataset(*([(x.astype(np.float32), y) for x, y in part] for part in samples), len(VOCABULARY))


def _role_texts(path: Path, clients: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, str]:
    """Each role's snippets (text lines, bytes or str) concatenated into one text; the file and role named in
    errors."""
    for cid, fields in clients.items():
        snippets = fields["snippets"]
        if snippets.ndim != 1 or not all(isinstance(s, (bytes, str)) for s in snippets):
            raise ValueError(f"{path}, role {cid}: snippets must be lines of text (bytes or str), got dtype "
                             f"{snippets.dtype} and shape {snippets.shape}.")
    return {cid: "".join(s.decode("utf-8", "replace") if isinstance(s, bytes) else s for s in fields["snippets"])
            for cid, fields in clients.items()}


def group_clients(data: FederatedDataset, groups) -> FederatedDataset:
    """A data set whose client ``j`` holds the train and test samples of the clients ``groups[j]`` of ``data``
    (e.g. writers pooled into the silos of a cross-silo network). Each client may appear in one group at most."""
    check_type("data", data, FederatedDataset)
    groups = [[check_int("groups", k, low=0, high=data.n_clients - 1) for k in check_sequence("groups", g, nonempty=True)]
              for g in check_sequence("groups", groups, nonempty=True)]
    members = [k for g in groups for k in g]
    if len(set(members)) != len(members):
        raise ValueError("groups must not share a client; a client appears in more than one group.")

    def pooled(part, group):
        x, y, _ = zip(*(part.client(k) for k in group))
        return torch.cat(x).cpu().numpy(), torch.cat(y).cpu().numpy()

    return _dataset(*([pooled(part, g) for g in groups] for part in (data.train, data.test)), data.n_classes)


_CENTRALISED: dict[str, tuple[Callable, int]] = {
    "mnist": (lambda: load_mnist("train", as_float=True), 10),
    "fashion_mnist": (lambda: load_fashion_mnist("train", as_float=True), 10),
    "emnist": (lambda: load_emnist("train", as_float=True), 62),
    "cifar10": (lambda: load_cifar10("train", as_float=True), 10),
    "cifar100": (lambda: load_cifar100("train", as_float=True), 100),
}


def load_partitioned(name: str, *, n_clients: int, scheme: str = "dirichlet", test_fraction: float = 0.2,
                     data_fraction: float = 1.0, seed: int = 0, **scheme_options: Any) -> FederatedDataset:
    """A centralised data set's training images over ``n_clients`` clients (``scheme``: a key of
    :data:`fedlab.data.PARTITIONERS` with its options, e.g. ``alpha=0.3``), each client's samples split into
    train and test. ``data_fraction < 1`` first keeps that fraction of the images, drawn at random (e.g. the
    10 % of EMNIST of thesis §3.5.6). For CIFAR-100's ``"pachinko"``, the superclasses of the file are passed
    for you."""
    name = check_choice("name", name, _CENTRALISED)
    n_clients = check_int("n_clients", n_clients, low=1)
    test_fraction = check_real("test_fraction", test_fraction, low=0, high=1, high_open=True)
    data_fraction = check_real("data_fraction", data_fraction, low=0, high=1, low_open=True)
    seed = check_int("seed", seed, low=0)
    require(name)
    reader, n_classes = _CENTRALISED[name]
    images, labels, *coarse = reader()
    rng = as_numpy_rng(seed)
    if data_fraction < 1:
        keep = np.sort(rng.choice(len(labels), size=max(n_clients, int(round(data_fraction * len(labels)))),
                                  replace=False))
        images, labels, coarse = images[keep], labels[keep], [c[keep] for c in coarse]
    if scheme == "pachinko" and coarse:
        scheme_options.setdefault("coarse_of_fine", _coarse_of_fine(labels, coarse[0]))
    parts = partition(labels, scheme, n_clients=n_clients, rng=rng, **scheme_options)
    xs_train, xs_test, ys_train, ys_test = train_test_split_clients(
        [images[idx] for idx in parts], [labels[idx] for idx in parts], test_fraction, rng=rng)
    return _dataset(list(zip(xs_train, ys_train)), list(zip(xs_test, ys_test)), n_classes)


def _coarse_of_fine(fine: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    mapping = np.zeros(int(fine.max()) + 1, dtype=np.int64)
    mapping[fine] = coarse
    return mapping


FEDERATED_LOADERS: dict[str, Callable[..., FederatedDataset]] = {
    "femnist": load_femnist,
    "shakespeare": load_shakespeare,
    **{name: (lambda name: lambda **kw: load_partitioned(name, **kw))(name) for name in _CENTRALISED},
}


def load_federated(name: str, **options: Any) -> FederatedDataset:
    """``FEDERATED_LOADERS[name](**options)``: any data set of :data:`fedlab.data.fetch.DATASETS` as the engine's
    FederatedDataset (stops with the fetch command when its files are absent)."""
    check_choice("name", name, FEDERATED_LOADERS)
    return FEDERATED_LOADERS[name](**options)
