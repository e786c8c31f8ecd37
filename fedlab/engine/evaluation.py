r"""Per-client evaluation of stacked models on padded client data."""
from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from fedlab._validation import check_int, check_type
from fedlab.models import Model, Params, check_params
from fedlab.engine.population import ClientData, check_model_data

__all__ = ["model_outputs", "metrics_from_outputs", "metrics_from_proba", "evaluate"]


@torch.no_grad()
def model_outputs(model: Model, params: Params, data: ClientData, *, chunk: int = 64) -> Tensor:
    """Outputs of row k's model on client k's samples, shape ``(K, n_max, out)`` (padding included).

    ``params`` are stacked ``(K, ...)``; rows are processed ``chunk`` at a time to bound memory.
    """
    return _outputs(model, params, data, check_int("chunk", chunk, low=1), "data")


def _outputs(model: Model, params: Params, data: ClientData, chunk: int, name: str) -> Tensor:
    check_model_data(model, data, name)
    check_params(model, params, rows=data.n_clients)
    outs = []
    for start in range(0, data.n_clients, chunk):
        sl = slice(start, start + chunk)
        outs.append(model.forward_stacked({k: v[sl] for k, v in params.items()}, data.x[sl]))
    return torch.cat(outs)


def _masked_mean(values: Tensor, mask: Tensor) -> np.ndarray:
    count = mask.sum(1)
    total = torch.where(mask, values, torch.zeros((), dtype=values.dtype, device=values.device)).sum(1).double()
    mean = total / count.clamp_min(1)
    return torch.where(count > 0, mean, torch.full_like(mean, float("nan"))).cpu().numpy()


def metrics_from_proba(proba: Tensor, data: ClientData, prefix: str = "") -> dict[str, np.ndarray]:
    """Per-client log-loss and accuracy of predicted class probabilities ``(K, n_max, C)``."""
    check_type("data", data, ClientData)
    _check_outputs("proba", proba, data, finite=True)
    if data.y.is_floating_point():
        raise TypeError(f"data.y must hold integer class labels, got dtype {data.y.dtype}.")
    if data.label_max is not None and data.label_max >= proba.shape[-1]:
        raise ValueError(f"proba has {proba.shape[-1]} classes but data holds the label {data.label_max}.")
    if float(proba.min()) < 0 or float(proba.max()) > 1 + 1e-6:
        raise ValueError(f"proba must hold probabilities in [0, 1], got values in [{float(proba.min()):.4g}, "
                         f"{float(proba.max()):.4g}].")
    y = data.y.clamp_min(0)
    p_true = proba.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    loss = -torch.log(p_true.clamp_min(1e-12))
    correct = (proba.argmax(-1) == y).to(torch.float32)
    return {f"{prefix}loss": _masked_mean(loss, data.mask), f"{prefix}accuracy": _masked_mean(correct, data.mask)}


def metrics_from_outputs(model: Model, outputs: Tensor, data: ClientData, prefix: str = "") -> dict[str, np.ndarray]:
    """Per-client mean loss (and accuracy for classifiers) from model outputs ``(K, n_max, out)``."""
    check_model_data(model, data)
    _check_outputs("outputs", outputs, data, finite=False)
    if model.n_outputs() is not None and outputs.shape[-1] != model.n_outputs():
        raise ValueError(f"outputs must have {model.n_outputs()} outputs per sample (the model's), got "
                         f"{outputs.shape[-1]}.")
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
    metrics = metrics_from_outputs(model, _outputs(model, params, train, 64, "train"), train, "train_")
    metrics.update(metrics_from_outputs(model, _outputs(model, params, test, 64, "test"), test, "test_"))
    return metrics


def _check_outputs(name: str, values, data: ClientData, *, finite: bool) -> None:
    """Per-sample outputs: a float tensor ``(K, n_max, out)`` on ``data``'s padded samples (finite when asked: the
    run loop reports non-finite losses of outputs as a divergence)."""
    check_type(name, values, Tensor)
    if values.dim() != 3 or tuple(values.shape[:2]) != tuple(data.y.shape) or not values.is_floating_point():
        raise ValueError(f"{name} must be a float tensor of shape ({data.n_clients}, {data.y.shape[1]}, out) on the "
                         f"data's samples, got {values.dtype} {tuple(values.shape)}.")
    if finite and not bool(torch.isfinite(values).all()):
        raise ValueError(f"{name} must contain only finite values.")
