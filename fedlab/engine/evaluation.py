r"""Per-client evaluation of stacked models on padded client data."""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from fedlab.models import Model, Params
from fedlab.engine.population import ClientData

__all__ = ["model_outputs", "metrics_from_outputs", "metrics_from_proba", "evaluate"]


@torch.no_grad()
def model_outputs(model: Model, params: Params, data: ClientData, *, chunk: int = 64) -> Tensor:
    """Outputs of row k's model on client k's samples, shape ``(K, n_max, out)`` (padding included).

    ``params`` are stacked ``(K, ...)``; rows are processed ``chunk`` at a time to bound memory.
    """
    outs = []
    for start in range(0, data.n_clients, chunk):
        sl = slice(start, start + chunk)
        outs.append(model.forward_stacked({k: v[sl] for k, v in params.items()}, data.x[sl]))
    return torch.cat(outs)


def _masked_mean(values: Tensor, mask: Tensor) -> np.ndarray:
    count = mask.sum(1)
    total = torch.where(mask, values, torch.zeros((), dtype=values.dtype)).sum(1).double()
    mean = total / count.clamp_min(1)
    return torch.where(count > 0, mean, torch.full_like(mean, float("nan"))).numpy()


def metrics_from_proba(proba: Tensor, data: ClientData, prefix: str = "") -> dict[str, np.ndarray]:
    """Per-client log-loss and accuracy of predicted class probabilities ``(K, n_max, C)``."""
    y = data.y.clamp_min(0)
    p_true = proba.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    loss = -torch.log(p_true.clamp_min(1e-12))
    correct = (proba.argmax(-1) == y).to(torch.float32)
    return {f"{prefix}loss": _masked_mean(loss, data.mask), f"{prefix}accuracy": _masked_mean(correct, data.mask)}


def metrics_from_outputs(model: Model, outputs: Tensor, data: ClientData, prefix: str = "") -> dict[str, np.ndarray]:
    """Per-client mean loss (and accuracy for classifiers) from model outputs ``(K, n_max, out)``."""
    loss = model.per_sample_loss(outputs, data.y)
    metrics = {f"{prefix}loss": _masked_mean(loss, data.mask)}
    if model.is_classifier:
        correct = (outputs.argmax(-1) == data.y).to(torch.float32)
        metrics[f"{prefix}accuracy"] = _masked_mean(correct, data.mask)
    return metrics


def evaluate(model: Model, params: Params, train: ClientData, test: ClientData) -> dict[str, np.ndarray]:
    """``train_loss``, ``test_loss`` (and ``*_accuracy``) of each client's model, arrays of shape ``(K,)``.

    Clients without test samples get NaN test metrics.
    """
    metrics = metrics_from_outputs(model, model_outputs(model, params, train), train, "train_")
    metrics.update(metrics_from_outputs(model, model_outputs(model, params, test), test, "test_"))
    return metrics
