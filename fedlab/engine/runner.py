r"""The round loop shared by every algorithm: ``state = algorithm.round(state, data, seed)``."""
from __future__ import annotations

from typing import Any, Callable, Protocol

import numpy as np
from tqdm.auto import tqdm

from fedlab._validation import check_int
from fedlab.engine.history import History
from fedlab.engine.local import DivergenceError
from fedlab.engine.population import FederatedDataset

__all__ = ["Algorithm", "run"]


class Algorithm(Protocol):
    """What :func:`run` needs: a state with a ``round`` counter and three pure-ish methods."""

    def init(self, data: FederatedDataset, seed: int) -> Any: ...

    def round(self, state: Any, data: FederatedDataset, seed: int) -> tuple[Any, dict]: ...

    def evaluate(self, state: Any, data: FederatedDataset) -> dict[str, np.ndarray]: ...


def _record(history: History, metrics: dict[str, np.ndarray], round_: int) -> None:
    """Record metrics, stopping the run if a client with data has a non-finite loss."""
    for name, values in metrics.items():
        bad = ~np.isfinite(values) & (history.weights_for(name) > 0)
        if name.endswith("loss") and bad.any():
            raise DivergenceError(f"{name} is not finite at round {round_} (clients "
                                  f"{np.flatnonzero(bad)[:10].tolist()}); try a smaller lr.")
    history.record(round_, metrics)


def run(algorithm: Algorithm, data: FederatedDataset, *, rounds: int, seed: int = 0, eval_every: int = 1,
        state: Any = None, progress: bool | None = None,
        callback: Callable[[Any, dict], None] | None = None) -> tuple[Any, History]:
    """Train ``algorithm`` for ``rounds`` rounds and record per-client metrics.

    Parameters
    ----------
    algorithm : Algorithm
    data : FederatedDataset
    rounds : int
        Number of communication rounds (>= 0).
    seed : int
        All randomness derives from ``(seed, round, ...)``: the same seed gives the same History.
    eval_every : int
        Evaluate at round 0, every ``eval_every`` rounds and at the end.
    state : optional
        Resume from this state instead of ``algorithm.init``.
    progress : bool or None
        Progress bar; ``None`` shows it only for runs longer than a few seconds.
    callback : callable, optional
        ``callback(state, info)`` after every round.

    Returns
    -------
    state, History

    Raises
    ------
    DivergenceError
        When a loss becomes non-finite.
    """
    check_int("rounds", rounds, low=0)
    check_int("eval_every", eval_every, low=1)
    check_int("seed", seed, low=0)
    state = algorithm.init(data, seed) if state is None else state
    history = History(data.train.n.numpy().astype(float), data.test.n.numpy().astype(float))
    _record(history, algorithm.evaluate(state, data), state.round)
    # `disable` is passed only to force the bar off, so that TQDM_DISABLE=1 still silences it otherwise
    bar = tqdm(range(rounds), desc=type(algorithm).__name__, delay=0 if progress else 3, leave=False,
               **({"disable": True} if progress is False else {}))
    for _ in bar:
        state, info = algorithm.round(state, data, seed)
        history.log.append({"round": state.round, **info})
        if callback is not None:
            callback(state, info)
        if state.round % eval_every == 0 or _ == rounds - 1:
            _record(history, algorithm.evaluate(state, data), state.round)
    return state, history
