r"""``History``: per-round, per-client metrics of a federated run, with reductions, plots and JSON."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fedlab._validation import check_array, check_choice, check_int, check_type

__all__ = ["History", "REDUCTIONS"]


def _weighted(values: np.ndarray, weights: np.ndarray) -> float:
    ok = np.isfinite(values) & (weights > 0)
    return float(np.sum(values[ok] * weights[ok]) / np.sum(weights[ok])) if ok.any() else float("nan")


REDUCTIONS = {
    "weighted": _weighted,                                                   # by local sample count
    "mean": lambda v, w: float(np.nanmean(v)),                               # every client counts once
    "bottom_decile": lambda v, w: float(np.nanpercentile(v, 10)),            # 10th percentile of clients
    "min": lambda v, w: float(np.nanmin(v)),
    "max": lambda v, w: float(np.nanmax(v)),
}


@dataclass
class History:
    """Metrics recorded every ``eval_every`` rounds.

    Attributes
    ----------
    rounds : list of int
        Rounds at which metrics were recorded (0 = before training).
    clients : dict of str -> list of arrays (K,)
        Per-client metric values, e.g. ``test_accuracy``.
    n_train, n_test : arrays (K,) or None
        Local sample counts, the weights of the ``weighted`` reduction (train_* and test_* metrics). ``None``
        (runs on data without client sizes, e.g. the numpy simulators that advance K independent copies at
        once) gives every entry weight 1, sized by the first record.
    log : list of dict
        Per-round information from the algorithm (participants, excluded clients, ...).
    """

    n_train: np.ndarray | None = None
    n_test: np.ndarray | None = None
    rounds: list[int] = field(default_factory=list)
    clients: dict[str, list[np.ndarray]] = field(default_factory=dict)
    log: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in ("n_train", "n_test"):
            if getattr(self, name) is not None:
                setattr(self, name, check_array(name, getattr(self, name), ndim=1, nonnegative=True))
        for i, r in enumerate(check_type("rounds", self.rounds, list)):
            check_int(f"rounds[{i}]", r)
        for name, values in check_type("clients", self.clients, dict).items():
            check_type(f"clients[{name!r}]", values, list)
        check_type("log", self.log, list)

    def record(self, round_: int, metrics: dict[str, np.ndarray]) -> None:
        """Append one evaluation: ``metrics[name]`` is an array with one value per client."""
        if self.n_train is None and metrics:
            size = np.asarray(next(iter(metrics.values()))).size
            self.n_train = np.ones(size)
            self.n_test = np.ones(size) if self.n_test is None else self.n_test
        self.rounds.append(int(round_))
        for name, values in metrics.items():
            self.clients.setdefault(name, []).append(np.asarray(values, dtype=float))

    def weights_for(self, name: str) -> np.ndarray:
        """Client weights of the ``weighted`` reduction: test sizes for ``test*`` metrics, else train sizes."""
        return self.n_test if name.startswith("test") else self.n_train

    def curve(self, name: str, reduce: str = "weighted") -> tuple[np.ndarray, np.ndarray]:
        """``(rounds, values)`` of metric ``name`` reduced over clients (see ``REDUCTIONS``)."""
        self._check_name(name)
        fn = REDUCTIONS[check_choice("reduce", reduce, REDUCTIONS)]
        w = self.weights_for(name)
        return np.array(self.rounds), np.array([fn(v, w) for v in self.clients[name]])

    def final(self, name: str, reduce: str = "weighted") -> float:
        """Last recorded value of ``name`` reduced over clients."""
        return float(self.curve(name, reduce)[1][-1])

    def per_client(self, name: str, index: int = -1) -> np.ndarray:
        """Per-client values of ``name`` at the ``index``-th evaluation (default: the last)."""
        values = self.clients[self._check_name(name)]
        return values[check_int("index", index, low=-len(values), high=len(values) - 1)]

    def _check_name(self, name: str) -> str:
        if not isinstance(name, str) or name not in self.clients:
            raise ValueError(f"name must be a recorded metric {sorted(self.clients)}, got {name!r}.")
        return name

    def summary(self, reduce: str = "weighted") -> dict[str, float]:
        """Final value of every metric, plus the bottom decile of the accuracies."""
        out = {name: self.final(name, reduce) for name in self.clients}
        for name in self.clients:
            if name.endswith("accuracy"):
                out[f"{name}_bottom_decile"] = self.final(name, "bottom_decile")
        return out

    def plot(self, names=("train_loss", "test_accuracy"), reduce: str = "weighted", axes=None, label=None):
        """One panel per metric against rounds; returns ``(fig, data)`` with the plotted curves."""
        import matplotlib.pyplot as plt

        names = [names] if isinstance(names, str) else list(names)
        if axes is None:
            fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.2), squeeze=False)
            axes = axes[0]
        fig = axes[0].figure
        data = {}
        for ax, name in zip(axes, names):
            x, y = self.curve(name, reduce)
            ax.plot(x, y, label=label)
            ax.set_xlabel("round")
            ax.set_ylabel(name.replace("_", " "))
            data[name] = (x, y)
        fig.tight_layout()
        return fig, data

    def to_dict(self) -> dict:
        """A JSON-serialisable dict (inverse of :meth:`from_dict`)."""
        as_list = lambda a: None if a is None else a.tolist()  # noqa: E731
        return {"rounds": self.rounds, "n_train": as_list(self.n_train), "n_test": as_list(self.n_test),
                "clients": {k: [v.tolist() for v in vals] for k, vals in self.clients.items()}, "log": self.log}

    @classmethod
    def from_dict(cls, d: dict) -> "History":
        as_array = lambda a: None if a is None else np.asarray(a, float)  # noqa: E731
        return cls(as_array(d["n_train"]), as_array(d["n_test"]), list(d["rounds"]),
                   {k: [np.asarray(v, float) for v in vals] for k, vals in d["clients"].items()}, list(d["log"]))

    def save(self, path: str | os.PathLike) -> None:
        """Write as JSON atomically (temporary file, then rename)."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(self.to_dict(), f)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "History":
        return cls.from_dict(json.loads(Path(path).read_text()))
