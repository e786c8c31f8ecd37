r"""``History``: per-round, per-client metrics of a federated run, with reductions, plots and JSON."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fedlab._validation import check_choice

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
    n_train, n_test : arrays (K,)
        Local sample counts, the weights of the ``weighted`` reduction (train_* and test_* metrics).
    log : list of dict
        Per-round information from the algorithm (participants, excluded clients, ...).
    """

    n_train: np.ndarray
    n_test: np.ndarray
    rounds: list[int] = field(default_factory=list)
    clients: dict[str, list[np.ndarray]] = field(default_factory=dict)
    log: list[dict] = field(default_factory=list)

    def record(self, round_: int, metrics: dict[str, np.ndarray]) -> None:
        """Append one evaluation: ``metrics[name]`` is an array with one value per client."""
        self.rounds.append(int(round_))
        for name, values in metrics.items():
            self.clients.setdefault(name, []).append(np.asarray(values, dtype=float))

    def weights_for(self, name: str) -> np.ndarray:
        """Client weights of the ``weighted`` reduction: test sizes for ``test*`` metrics, else train sizes."""
        return self.n_test if name.startswith("test") else self.n_train

    def curve(self, name: str, reduce: str = "weighted") -> tuple[np.ndarray, np.ndarray]:
        """``(rounds, values)`` of metric ``name`` reduced over clients (see ``REDUCTIONS``)."""
        if name not in self.clients:
            raise KeyError(f"unknown metric {name!r}; recorded: {sorted(self.clients)}.")
        fn = REDUCTIONS[check_choice("reduce", reduce, REDUCTIONS)]
        w = self.weights_for(name)
        return np.array(self.rounds), np.array([fn(v, w) for v in self.clients[name]])

    def final(self, name: str, reduce: str = "weighted") -> float:
        """Last recorded value of ``name`` reduced over clients."""
        return float(self.curve(name, reduce)[1][-1])

    def per_client(self, name: str, index: int = -1) -> np.ndarray:
        """Per-client values of ``name`` at the ``index``-th evaluation (default: the last)."""
        return self.clients[name][index]

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
        return {"rounds": self.rounds, "n_train": self.n_train.tolist(), "n_test": self.n_test.tolist(),
                "clients": {k: [v.tolist() for v in vals] for k, vals in self.clients.items()}, "log": self.log}

    @classmethod
    def from_dict(cls, d: dict) -> "History":
        return cls(np.asarray(d["n_train"], float), np.asarray(d["n_test"], float), list(d["rounds"]),
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
