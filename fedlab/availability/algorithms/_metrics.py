r"""Per-client metrics of one global model, computed on the clients' real samples only for linear models.

The engine's evaluation (:func:`fedlab.engine.evaluate`) runs the model on every client's padded row of
``n_max`` samples; in the availability chapter's LEAF federation the clients hold 117 samples on average for
``n_max = 400``, so most of that work is padding. For the models of :data:`PACKED_MODELS`, :func:`sample_metrics`
runs the model on the real samples alone and lays the per-sample values back in their padded rows before taking each
client's mean the engine's way: the metrics are the engine's to the bit (the tests check it). Other models (the
paper mode's CNN, whose outputs round differently with another batch) take the engine's padded path.
"""
from __future__ import annotations

import numpy as np
import torch

from fedlab._validation import check_bool, check_type
from fedlab.engine import ClientData, broadcast, check_model_data, metrics_from_outputs, model_outputs
from fedlab.models import LinearModel, Model, check_params

__all__ = ["sample_metrics", "global_metrics"]

CHUNK_CLIENTS = 64
"""Samples go through the model at most this many padded clients' worth at a time (the engine's evaluation chunk)."""
PACKED_MODELS = (LinearModel,)
"""Models computed on the real samples only: each sample's outputs are one row of a matrix product, the same
whichever samples share the call."""


def sample_metrics(model: Model, params, data: ClientData, clients=None, *, accuracy: bool = True) -> dict:
    """Mean loss (and, for classifiers when ``accuracy``, accuracy) of one model on each client's samples, the values
    of :func:`fedlab.engine.metrics_from_outputs` (on the real samples only for :data:`PACKED_MODELS`).

    Parameters
    ----------
    model : Model
    params : dict of tensors
        One model's parameters (not stacked).
    data : ClientData
    clients : int array (K,), optional
        Client indices (default: all clients, in order).
    accuracy : bool

    Returns
    -------
    dict of arrays (K,)
        ``loss`` and ``accuracy`` (float64; NaN for a client without samples).
    """
    check_type("data", data, ClientData)
    check_model_data(model, data)
    check_params(model, params, stacked=False)
    accuracy = check_bool("accuracy", accuracy) and model.is_classifier
    if not isinstance(model, PACKED_MODELS):
        sub = data if clients is None else data.select(clients)
        metrics = metrics_from_outputs(model, model_outputs(model, broadcast(params, sub.n_clients), sub), sub)
        return metrics if accuracy else {"loss": metrics["loss"]}
    clients = torch.arange(data.n_clients, device=data.device) if clients is None else data.check_clients(clients)
    return _packed_metrics(model, params, data, clients, accuracy)


def _packed_metrics(model: Model, params, data: ClientData, clients: torch.Tensor, accuracy: bool) -> dict:
    """:func:`sample_metrics` of a model of :data:`PACKED_MODELS`: the real samples, at most ``CHUNK_CLIENTS``
    padded clients' worth per call, then each client's mean over its padded row."""
    (x, y), mask = data.valid_samples(clients), data.mask.index_select(0, clients)
    one, chunk = broadcast(params, 1), CHUNK_CLIENTS * data.x.shape[1]
    losses, correct = [], []
    with torch.no_grad():
        for start in range(0, max(len(y), 1), chunk):
            out = model.forward_stacked(one, x[None, start:start + chunk])[0]
            losses.append(model.per_sample_loss(out, y[start:start + chunk]))
            if accuracy:
                correct.append((out.argmax(-1) == y[start:start + chunk]).to(torch.float32))
    metrics = {"loss": _padded_means(torch.cat(losses), mask)}
    if accuracy:
        metrics["accuracy"] = _padded_means(torch.cat(correct), mask)
    return metrics


def global_metrics(model: Model, params, train: ClientData, test: ClientData) -> dict[str, np.ndarray]:
    """``train_loss``, ``train_accuracy``, ``test_loss`` and ``test_accuracy`` of one global model on every client,
    as :func:`fedlab.algorithms.common.evaluate_global` gives them (the same values), by :func:`sample_metrics`."""
    check_type("test", test, ClientData)
    out = {f"train_{k}": v for k, v in sample_metrics(model, params, train).items()}
    out.update({f"test_{k}": v for k, v in sample_metrics(model, params, test).items()})
    return out


def _padded_means(values: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
    """Per-row means of the samples' ``values`` (M,) laid back in their padded rows ``mask`` (K, n_max), summed over
    the whole row as the engine's evaluation does (NaN for a row without samples)."""
    padded = torch.zeros(mask.shape, dtype=values.dtype, device=values.device)
    padded[mask] = values
    count = mask.sum(1)
    mean = padded.sum(1).double() / count.clamp_min(1)
    return torch.where(count > 0, mean, torch.full_like(mean, float("nan"))).cpu().numpy()
