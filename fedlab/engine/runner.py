r"""The round loop shared by every algorithm: ``state = algorithm.round(state, data, seed)``."""
from __future__ import annotations

import os
from typing import Any, Callable, Protocol

import numpy as np
import torch
from tqdm.auto import tqdm

from fedlab._validation import check_bool, check_callable, check_choice, check_int
from fedlab.engine.device import ENV_VAR as DEVICE_ENV_VAR, resolve_device
from fedlab.engine.history import History
from fedlab.engine.local import DivergenceError
from fedlab.engine.population import ClientData, FederatedDataset

__all__ = ["Algorithm", "ORDERS", "run"]

ORDERS = ("train_first", "evaluate_first")

LOSS_GROWTH_LIMIT = 100.0
"""Divergence criterion of :func:`run`: a client's loss above ``LOSS_GROWTH_LIMIT * max(1, its first recorded
loss)``, or not finite, stops the run with :class:`~fedlab.engine.DivergenceError`."""


class Algorithm(Protocol):
    """What :func:`run` needs: a state with a ``round`` counter and three pure-ish methods.

    Methods that personalise to clients unseen at training (thesis §3.6.3, Tables 3.3 and 3.6) also have
    the optional ``adapt(state, data, *, seed) -> (personal_state, metrics)``: from a trained ``state``,
    the clients of ``data`` (a FederatedDataset of new clients) build what they predict with from their
    training part (``personal_state``: their stacked models, mixture weights, cluster assignment or
    datastores), and ``metrics`` holds per-client arrays ``(K_new,)`` of those predictors on ``data``,
    like :meth:`evaluate`'s. Equal seeds give equal results; method-specific options are keyword-only
    with defaults. :func:`run` never calls it.
    """

    def init(self, data: FederatedDataset, seed: int) -> Any: ...

    def round(self, state: Any, data: FederatedDataset, seed: int) -> tuple[Any, dict]: ...

    def evaluate(self, state: Any, data: FederatedDataset) -> dict[str, np.ndarray]: ...


def _history_for(data: Any) -> History:
    """A History weighted by the clients' sample counts when ``data`` has them (a FederatedDataset)."""
    if isinstance(data, FederatedDataset):
        return History(data.train.n.cpu().numpy().astype(float), data.test.n.cpu().numpy().astype(float))
    return History()


def _record(history: History, metrics: dict[str, np.ndarray], round_: int) -> None:
    """Record metrics, stopping the run when a client with data has a non-finite or exploding loss."""
    for name, values in metrics.items():
        if not name.endswith("loss"):
            continue
        values = np.asarray(values, dtype=float)
        weights = history.weights_for(name)
        has_data = True if weights is None else weights > 0
        first = history.clients[name][0] if history.clients.get(name) else values
        limit = LOSS_GROWTH_LIMIT * np.maximum(1.0, np.abs(np.where(np.isfinite(first), first, 0.0)))
        bad = (~np.isfinite(values) | (values > limit)) & has_data
        if bad.any():
            clients = np.flatnonzero(bad)[:10].tolist()
            raise DivergenceError(f"{name} diverged at round {round_} (clients {clients}: {values[clients[0]]:.3g}; "
                                  f"criterion: not finite or > {LOSS_GROWTH_LIMIT:g} x max(1, first value)); "
                                  "try a smaller lr.")
    history.record(round_, metrics)


def _on_device(data_at: Callable[[int], Any], device) -> Callable[[int], Any]:
    """``data_at`` moving its data to the requested device (none requested: unchanged)."""
    if device is None and not os.environ.get(DEVICE_ENV_VAR):
        return data_at
    target = resolve_device(device)
    return lambda t: (lambda d: d.to(target) if isinstance(d, (FederatedDataset, ClientData)) else d)(data_at(t))


def run(algorithm: Algorithm, data: Any, *, rounds: int, seed: int = 0, eval_every: int = 1,
        state: Any = None, progress: bool | None = None,
        callback: Callable[[Any, dict], None] | None = None, order: str = "train_first",
        device: str | torch.device | None = None) -> tuple[Any, History]:
    r"""Train ``algorithm`` for ``rounds`` rounds and record per-client metrics.

    Parameters
    ----------
    algorithm : Algorithm
    data : FederatedDataset, other data the algorithm reads, or callable ``t -> data``
        A callable is a stream: round ``t`` (0-based) trains on, and is evaluated on, ``data(t)``. Data without
        client sample counts (the numpy simulators' problems) give every metric entry weight 1 in History.
    rounds : int
        Number of communication rounds (>= 0).
    seed : int
        All randomness derives from ``(seed, round, ...)``: the same seed gives the same History.
    eval_every : int
        With ``order="train_first"``: evaluate at round 0, every ``eval_every`` rounds and at the end.
    state : optional
        Resume from this state instead of ``algorithm.init``.
    progress : bool or None
        Progress bar; ``None`` shows it only for runs longer than a few seconds.
    callback : callable, optional
        ``callback(state, info)`` after every round.
    order : {"train_first", "evaluate_first"}
        ``"evaluate_first"`` is the online protocol (thesis §4.4.1): at each round :math:`t` the played model
        is scored on the round's new data *before* it learns from them, so History records rounds
        :math:`0..T-1` and ``test_accuracy[t]`` is :math:`\mathrm{Acc}(h_{t}, \mathcal S'_{t})` of (4.47);
        ``eval_every`` must then be 1.
    device : str or torch.device, optional
        Move the data (a FederatedDataset or ClientData, or a stream's) to this device and train there
        (:func:`fedlab.engine.device.resolve_device`: default ``$FEDLAB_DEVICE``; unset, the data stay where they
        are).

    Returns
    -------
    state, History

    Raises
    ------
    DivergenceError
        When a loss becomes non-finite.
    """
    missing = [m for m in ("init", "round", "evaluate") if not callable(getattr(algorithm, m, None))]
    if missing:
        raise TypeError(f"algorithm must have init, round and evaluate methods, got {type(algorithm).__name__} "
                        f"without {missing}.")
    check_int("rounds", rounds, low=0)
    check_int("eval_every", eval_every, low=1)
    check_int("seed", seed, low=0)
    check_choice("order", order, ORDERS)
    if progress is not None:
        check_bool("progress", progress)
    check_callable("callback", callback, optional=True)
    if order == "evaluate_first" and eval_every != 1:
        raise ValueError(f"order='evaluate_first' scores every round: eval_every must be 1, got {eval_every}.")
    data_at = _on_device(data if callable(data) else (lambda t: data), device)
    current = data_at(0)
    state = algorithm.init(current, seed) if state is None else state
    history = _history_for(current)
    if order == "train_first":
        _record(history, algorithm.evaluate(state, current), state.round)
    # `disable` is passed only to force the bar off, so that TQDM_DISABLE=1 still silences it otherwise
    bar = tqdm(range(rounds), desc=type(algorithm).__name__, delay=0 if progress else 3, leave=False,
               **({"disable": True} if progress is False else {}))
    for t in bar:
        current = data_at(t) if t > 0 else current
        if order == "evaluate_first":
            _record(history, algorithm.evaluate(state, current), t)
        state, info = algorithm.round(state, current, seed)
        history.log.append({"round": state.round, **info})
        if callback is not None:
            callback(state, info)
        if order == "train_first" and (state.round % eval_every == 0 or t == rounds - 1):
            _record(history, algorithm.evaluate(state, current), state.round)
    return state, history
