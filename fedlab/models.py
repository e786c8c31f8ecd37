r"""Small models written as pure functions of a parameter dict, so a population can be stacked.

A :class:`Model` holds no weights. ``init(generator)`` returns one client's parameters as a dict of
tensors; ``forward(params, x)`` maps one client's batch to outputs; ``forward_stacked(params, x)``
does the same for many clients at once, with a leading client axis on every parameter and on ``x``.
The default ``forward_stacked`` is ``torch.func.vmap(forward)``; linear layers override it with
``baddbmm`` (one kernel for the whole population).
"""
from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fedlab._validation import all_finite, check_bool, check_choice, check_int, check_type

__all__ = ["Params", "LOSSES", "Model", "LinearModel", "MLP", "SmallCNN", "ModuleModel", "femnist_cnn", "cifar_cnn", "char_lstm", "init_stacked", "check_model", "check_params", "check_param_dict"]

Params = dict[str, Tensor]

LOSSES: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "cross_entropy": lambda out, y: F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1),
                                                    reduction="none").reshape(y.shape),
    "mse": lambda out, y: 0.5 * (out.squeeze(-1) - y).pow(2),
}


class Model:
    r"""Base class: a functional model with a per-sample loss.

    Parameters
    ----------
    loss : {"cross_entropy", "mse"}
        Per-sample loss :math:`\ell(f_\theta(x), y)`; ``mse`` is :math:`\tfrac12 (f_\theta(x)-y)^2`.
    """

    def __init__(self, loss: str = "cross_entropy") -> None:
        self.loss_name = check_choice("loss", loss, LOSSES)

    def init(self, generator: torch.Generator) -> Params:
        raise NotImplementedError

    def forward(self, params: Params, x: Tensor) -> Tensor:
        raise NotImplementedError

    def forward_stacked(self, params: Params, x: Tensor) -> Tensor:
        """Outputs for stacked clients: params ``(R, ...)`` and x ``(R, B, ...)`` -> ``(R, B, out)``."""
        return torch.func.vmap(self.forward)(params, x)

    def select_rows(self, rows: Tensor) -> "Model":
        """The model for ``rows`` of a stack of rows (what a batched step that trains some rows alone calls): the model
        itself, unless it holds something per row."""
        return self

    def loss_and_grad_stacked(self, params: Params, x: Tensor, y: Tensor, weight: Tensor | None, *,
                              copies: int = 1) -> tuple[Tensor, list[Tensor]]:
        r"""Per-row mean loss ``(R,)`` and its gradients, one per parameter, for stacked clients.

        Row r's loss is :math:`\frac1B\sum_b w_b\,\ell(f_{\theta_r}(x_b), y_b)`. With ``copies = c``, ``x`` and
        ``y`` hold one minibatch per run of ``c`` consecutive rows (``(R / c, B, ...)``; ``weight`` stays per row): the
        rows of one client's mixture components train on the same draws (FedEM, Algorithm 7). With the default
        :meth:`forward_stacked` (``vmap(forward)``) the gradients are ``vmap(grad(row's loss))``: each comes out laid
        out like its parameter, where a backward pass through the vmapped forward gives a linear layer's weight
        gradient transposed (slow to walk in the update). With another ``forward_stacked``, rows are independent, so
        one backward pass of their sum gives every row's gradient. Models may override it with a closed form.
        """
        if copies > 1:
            x, y = x.repeat_interleave(copies, 0), y.repeat_interleave(copies, 0)
        if type(self).forward_stacked is Model.forward_stacked:
            grads, per_row = torch.func.vmap(torch.func.grad_and_value(self._row_loss),
                                             in_dims=(0, 0, 0, None if weight is None else 0))(params, x, y, weight)
            return per_row.detach(), [grads[k] for k in params]
        leaf = {k: v.detach().requires_grad_(True) for k, v in params.items()}
        losses = self.per_sample_loss(self.forward_stacked(leaf, x), y)
        if weight is not None:
            losses = losses * weight
        per_row = losses.mean(1)
        return per_row.detach(), list(torch.autograd.grad(per_row.sum(), list(leaf.values())))

    def _row_loss(self, params: Params, x: Tensor, y: Tensor, weight: Tensor | None) -> Tensor:
        """One row's mean (weighted) loss on its batch: what :meth:`loss_and_grad_stacked` differentiates."""
        losses = self.per_sample_loss(self.forward(params, x), y)
        return (losses if weight is None else losses * weight).mean()

    def per_sample_loss(self, out: Tensor, y: Tensor) -> Tensor:
        """Loss of each sample, same shape as ``y``."""
        return LOSSES[self.loss_name](out, y)

    @property
    def is_classifier(self) -> bool:
        return self.loss_name == "cross_entropy"

    def n_inputs(self) -> int | None:
        """Number of input features of one sample (after flattening); ``None`` when the model does not say."""
        return None

    def n_outputs(self) -> int | None:
        """Number of outputs (classes of a classifier); ``None`` when the model does not say."""
        return None

    def param_shapes(self) -> dict[str, tuple[int, ...]]:
        """Shape of each parameter of one client's model (from one draw of :meth:`init`, cached)."""
        if "_shapes" not in vars(self):
            self._shapes = {k: tuple(v.shape) for k, v in self.init(torch.Generator().manual_seed(0)).items()}
        return self._shapes

    def check_features(self, feature_shape: tuple[int, ...], name: str = "data") -> None:
        """Raise a ``ValueError`` naming ``name`` when samples of shape ``feature_shape`` do not fit the input."""
        expected = self.n_inputs()
        if expected is not None and math.prod(feature_shape) != expected:
            raise ValueError(f"{name} has samples of shape {tuple(feature_shape)} ({math.prod(feature_shape)} "
                             f"features) but {self!r} takes {expected} input features.")

    def signature(self) -> tuple:
        """A hashable description used to cache the automatic backend choice."""
        return (type(self).__name__, *sorted((k, v) for k, v in vars(self).items()
                                            if isinstance(v, (int, float, str, tuple))))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


def _uniform(shape: tuple[int, ...], bound: float, generator: torch.Generator) -> Tensor:
    return (torch.rand(shape, generator=generator, device=generator.device) * 2 - 1) * bound


def _linear_init(fan_in: int, fan_out: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
    """PyTorch's default ``nn.Linear`` initialisation, with the weight stored as ``(in, out)``."""
    bound = 1 / math.sqrt(fan_in)
    return _uniform((fan_in, fan_out), bound, generator), _uniform((fan_out,), bound, generator)


class LinearModel(Model):
    r"""Linear model :math:`f_\theta(x) = W x + b`: multinomial logistic regression or least squares.

    ``weight`` has shape ``(out_features, in_features)`` as in ``nn.Linear``.

    Parameters
    ----------
    in_features, out_features : int
        Input dimension and number of outputs (classes, or 1 for regression).
    loss : {"cross_entropy", "mse"}
    zero_init : bool
        Start from zero weights (convex problems) instead of PyTorch's uniform initialisation.
    """

    def __init__(self, in_features: int, out_features: int, *, loss: str = "cross_entropy",
                 zero_init: bool = False) -> None:
        super().__init__(loss)
        self.in_features = check_int("in_features", in_features, low=1)
        self.out_features = check_int("out_features", out_features, low=1)
        self.zero_init = check_bool("zero_init", zero_init)

    def n_inputs(self) -> int:
        return self.in_features

    def n_outputs(self) -> int:
        return self.out_features

    def init(self, generator: torch.Generator) -> Params:
        w, b = _linear_init(self.in_features, self.out_features, generator)
        if self.zero_init:
            w, b = torch.zeros_like(w), torch.zeros_like(b)
        return {"weight": w.T.contiguous(), "bias": b}

    def forward(self, params: Params, x: Tensor) -> Tensor:
        return torch.addmm(params["bias"], x.flatten(1), params["weight"].T)

    def forward_stacked(self, params: Params, x: Tensor) -> Tensor:
        return torch.baddbmm(params["bias"].unsqueeze(1), x.flatten(2), params["weight"].transpose(1, 2))

    def loss_and_grad_stacked(self, params: Params, x: Tensor, y: Tensor, weight: Tensor | None, *,
                              copies: int = 1) -> tuple[Tensor, list[Tensor]]:
        r"""Closed-form gradients :math:`\nabla_W = r^\top X`, :math:`\nabla_b = \sum_b r_b`, where
        :math:`r = (\mathrm{softmax}(Wx+b) - e_y)\,w/B` (cross-entropy) or :math:`(Wx+b-y)\,w/B` (mse).

        Logits are laid out ``(R, classes, B)`` so that the softmax runs over a short middle axis. The ``copies``
        rows of a shared minibatch (see :meth:`Model.loss_and_grad_stacked`) are one matrix product each way: their
        weights stacked, ``(c * classes, d)``, against the batch read once.
        """
        x = x.flatten(2)
        rows, out = params["weight"].shape[:2]
        weight_groups = params["weight"].reshape(len(x), copies * out, -1)
        logits = torch.baddbmm(params["bias"].reshape(len(x), -1, 1), weight_groups, x.transpose(1, 2))
        logits = logits.view(rows, out, -1)
        y = y.repeat_interleave(copies, 0) if copies > 1 else y
        scale = torch.full(y.shape, 1.0 / y.shape[1], device=x.device) if weight is None else weight / y.shape[1]
        if self.loss_name == "cross_entropy":
            log_p = torch.log_softmax(logits, dim=1)
            losses = -log_p.gather(1, y.unsqueeze(1)).squeeze(1)
            resid = log_p.exp_()
            resid.scatter_add_(1, y.unsqueeze(1), torch.full_like(losses, -1.0).unsqueeze(1))
        else:
            resid = logits - y.unsqueeze(1)
            losses = 0.5 * resid.squeeze(1).pow(2)
        resid = resid * scale.unsqueeze(1)
        grad_w = torch.bmm(resid.view(len(x), copies * out, -1), x).view(rows, out, -1)
        return (losses * scale).sum(1), [grad_w, resid.sum(2)]


class MLP(Model):
    """Fully connected network with ReLU activations: ``in -> hidden[0] -> ... -> out``."""

    def __init__(self, in_features: int, hidden: tuple[int, ...] | list[int], out_features: int, *,
                 loss: str = "cross_entropy") -> None:
        super().__init__(loss)
        self.in_features = check_int("in_features", in_features, low=1)
        self.hidden = tuple(check_int("hidden", h, low=1) for h in check_type("hidden", hidden, (tuple, list)))
        self.out_features = check_int("out_features", out_features, low=1)

    def n_inputs(self) -> int:
        return self.in_features

    def n_outputs(self) -> int:
        return self.out_features

    def _sizes(self) -> list[int]:
        return [self.in_features, *self.hidden, self.out_features]

    def init(self, generator: torch.Generator) -> Params:
        params = {}
        sizes = self._sizes()
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            params[f"w{i}"], params[f"b{i}"] = _linear_init(a, b, generator)
        return params

    def forward(self, params: Params, x: Tensor) -> Tensor:
        h = x.flatten(1)
        n_layers = len(self._sizes()) - 1
        for i in range(n_layers):
            h = torch.addmm(params[f"b{i}"], h, params[f"w{i}"])
            if i < n_layers - 1:
                h = torch.relu(h)
        return h

    def forward_stacked(self, params: Params, x: Tensor) -> Tensor:
        h = x.flatten(2)
        n_layers = len(self._sizes()) - 1
        for i in range(n_layers):
            h = torch.baddbmm(params[f"b{i}"].unsqueeze(1), h, params[f"w{i}"])
            if i < n_layers - 1:
                h = torch.relu(h)
        return h


class SmallCNN(Model):
    """Two 3x3 conv layers (with 2x2 max-pooling) and a linear head, for 8x8 digits or 28x28 images.

    Parameters
    ----------
    in_channels, image_size, n_classes : int
    channels : tuple of two ints
        Output channels of the two convolutions.
    """

    def __init__(self, in_channels: int = 1, image_size: int = 8, n_classes: int = 10,
                 channels: tuple[int, int] = (16, 32)) -> None:
        super().__init__("cross_entropy")
        self.in_channels = check_int("in_channels", in_channels, low=1)
        self.image_size = check_int("image_size", image_size, low=4)
        self.n_classes = check_int("n_classes", n_classes, low=2)
        channels = check_type("channels", channels, (tuple, list))
        if len(channels) != 2:
            raise ValueError(f"channels must hold two channel counts, got {channels!r}.")
        self.channels = tuple(check_int("channels", c, low=1) for c in channels)

    def n_inputs(self) -> int:
        return self.in_channels * self.image_size ** 2

    def n_outputs(self) -> int:
        return self.n_classes

    def init(self, generator: torch.Generator) -> Params:
        c0, (c1, c2) = self.in_channels, self.channels
        flat = c2 * (self.image_size // 4) ** 2
        b1, b2 = 1 / math.sqrt(c0 * 9), 1 / math.sqrt(c1 * 9)
        head_w, head_b = _linear_init(flat, self.n_classes, generator)
        return {"conv1.w": _uniform((c1, c0, 3, 3), b1, generator), "conv1.b": _uniform((c1,), b1, generator),
                "conv2.w": _uniform((c2, c1, 3, 3), b2, generator), "conv2.b": _uniform((c2,), b2, generator),
                "head.w": head_w, "head.b": head_b}

    def forward(self, params: Params, x: Tensor) -> Tensor:
        x = x.reshape(-1, self.in_channels, self.image_size, self.image_size)
        h = F.max_pool2d(torch.relu(F.conv2d(x, params["conv1.w"], params["conv1.b"], padding=1)), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, params["conv2.w"], params["conv2.b"], padding=1)), 2)
        return torch.addmm(params["head.b"], h.flatten(1), params["head.w"])


class ModuleModel(Model):
    """Wrap any ``nn.Module`` factory as a functional :class:`Model` (via ``torch.func.functional_call``).

    Parameters
    ----------
    factory : callable
        ``factory()`` returns a fresh module; it is called once to get the architecture.
    loss : {"cross_entropy", "mse"}
    """

    def __init__(self, factory: Callable[[], nn.Module], *, loss: str = "cross_entropy") -> None:
        super().__init__(loss)
        if not callable(factory):
            raise TypeError(f"factory must be callable returning an nn.Module, got {factory!r}.")
        self._module = factory()
        if not isinstance(self._module, nn.Module):
            raise TypeError(f"factory() must return an nn.Module, got {type(self._module).__name__}.")
        self.name = type(self._module).__name__
        self._fits: set[tuple[int, ...]] = set()

    def check_features(self, feature_shape: tuple[int, ...], name: str = "data") -> None:
        """Run the module once on a zero sample of shape ``feature_shape`` (once per shape) and raise a
        ``ValueError`` naming ``name`` when it does not accept it."""
        shape = tuple(feature_shape)
        if shape in self._fits:
            return
        try:
            with torch.no_grad():
                self._module(torch.zeros((1, *shape)))
        except (RuntimeError, ValueError, TypeError, IndexError) as err:
            raise ValueError(f"{name} has samples of shape {shape}, which {self.name} does not accept: {err}") from err
        self._fits.add(shape)

    def init(self, generator: torch.Generator) -> Params:
        params = {}
        for name, p in self._module.named_parameters():
            bound = 1 / math.sqrt(p[0].numel()) if p.dim() > 1 else 0.1
            params[name] = _uniform(tuple(p.shape), bound, generator)
        return params

    def forward(self, params: Params, x: Tensor) -> Tensor:
        return torch.func.functional_call(self._module, params, (x,))

    def n_outputs(self) -> int | None:
        return getattr(self._module, "n_outputs", None)

    @property
    def feature_dim(self) -> int | None:
        """Dimension of the module's representation (``forward(x, features=True)``), None when it has none."""
        return getattr(self._module, "feature_dim", None)

    def features(self, params: Params, x: Tensor) -> tuple[Tensor, Tensor]:
        """``(representation, logits)`` of a module that has one (:class:`PaperCNN`, :class:`CharLSTM`)."""
        if self.feature_dim is None:
            raise TypeError(f"{self.name} has no representation (forward(x, features=True)).")
        return torch.func.functional_call(self._module, params, (x,), {"features": True})


class PaperCNN(nn.Module):
    """The papers' CNN: two 5x5 convolutions (with 2x2 max-pooling), a hidden dense layer and a linear head.

    ``PaperCNN(1, 28, (32, 64), 2048, 62)`` is the FEMNIST model of the FedEM and kNN-Per code;
    ``PaperCNN(3, 32, (32, 64), 512, 10)`` the CIFAR-10 CNN of McMahan et al. (2017). Its representation
    (``forward(x, features=True)``, kNN-Per's datastore key) is the hidden dense layer after ReLU.
    """

    def __init__(self, in_channels: int, image_size: int, channels: tuple[int, int], hidden: int,
                 n_classes: int) -> None:
        super().__init__()
        c1, c2 = channels
        side = ((image_size - 4) // 2 - 4) // 2
        self.conv1, self.conv2 = nn.Conv2d(in_channels, c1, 5), nn.Conv2d(c1, c2, 5)
        self.fc, self.head = nn.Linear(c2 * side * side, hidden), nn.Linear(hidden, n_classes)
        self.in_channels, self.image_size = in_channels, image_size
        self.feature_dim, self.n_outputs = hidden, n_classes

    def forward(self, x: Tensor, features: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """Logits, or ``(representation, logits)`` when ``features``."""
        x = x.reshape(-1, self.in_channels, self.image_size, self.image_size)
        h = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        h = F.max_pool2d(torch.relu(self.conv2(h)), 2)
        z = torch.relu(self.fc(h.flatten(1)))
        return (z, self.head(z)) if features else self.head(z)


class CharLSTM(nn.Module):
    """The Shakespeare model of the FedEM code: an 8-dimensional character embedding, a 2-layer LSTM of 256 units
    and a linear head; it predicts the character after a window (character indices stored as floats). Its
    representation (``forward(x, features=True)``) is the final hidden and cell states of every layer (2 x 2 x 256 =
    1024-d, thesis §3.6.1)."""

    def __init__(self, vocabulary: int = 100, embed: int = 8, hidden: int = 256, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocabulary, embed)
        self.lstm = nn.LSTM(embed, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, vocabulary)
        self.feature_dim, self.n_outputs = 2 * layers * hidden, vocabulary

    def forward(self, x: Tensor, features: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """Logits, or ``(representation, logits)`` when ``features``."""
        out, (h, c) = self.lstm(self.embed(x.long()))
        logits = self.head(out[:, -1])
        if not features:
            return logits
        return torch.cat([h.permute(1, 0, 2).flatten(1), c.permute(1, 0, 2).flatten(1)], 1), logits


class _RowLoopModel(ModuleModel):
    """A module that ``torch.func.vmap`` cannot batch (an LSTM): stacked rows run one after another."""

    def forward_stacked(self, params: Params, x: Tensor) -> Tensor:
        return torch.stack([self.forward({k: v[r] for k, v in params.items()}, x[r]) for r in range(x.shape[0])])


def femnist_cnn(n_classes: int = 62) -> ModuleModel:
    """FEMNIST's CNN (thesis §3.5.6, FedEM code): 28x28 grey images, conv 32 and 64, dense 2048."""
    n_classes = check_int("n_classes", n_classes, low=2)
    return ModuleModel(lambda: PaperCNN(1, 28, (32, 64), 2048, n_classes))


def cifar_cnn(n_classes: int = 10) -> ModuleModel:
    """The CIFAR CNN of McMahan et al. (2017): 32x32 colour images, conv 32 and 64, dense 512 (the thesis uses
    an ImageNet-pretrained MobileNet-v2 for CIFAR, which needs downloaded weights; this is its from-scratch
    stand-in)."""
    n_classes = check_int("n_classes", n_classes, low=2)
    return ModuleModel(lambda: PaperCNN(3, 32, (32, 64), 512, n_classes))


def char_lstm(vocabulary: int = 100) -> ModuleModel:
    """Shakespeare's next-character LSTM (:class:`CharLSTM`), stacked rows run in a loop (no vmap for LSTMs)."""
    vocabulary = check_int("vocabulary", vocabulary, low=2)
    return _RowLoopModel(lambda: CharLSTM(vocabulary))


def check_model(model, name: str = "model") -> Model:
    """Return ``model`` when it is a :class:`Model`, else raise a ``TypeError`` naming ``name``."""
    return check_type(name, model, Model)


def check_param_dict(name: str, params, *, stacked: bool = True, rows: int | None = None,
                     nonempty: bool = True) -> int | None:
    """Check a parameter dict: name -> finite float Tensor, non-empty unless ``nonempty=False``. ``stacked``: every
    tensor has a leading row axis of one size (``rows`` when given). Returns the number of rows (None unstacked)."""
    check_type(name, params, dict)
    stacked, nonempty = check_bool("stacked", stacked), check_bool("nonempty", nonempty)
    if rows is not None:
        check_int("rows", rows, low=1)
    if nonempty and not params:
        raise ValueError(f"{name} must hold at least one parameter tensor, got an empty dict.")
    for key, value in params.items():
        check_type(f"{name}[{key!r}]", value, Tensor)
        if not value.is_floating_point() or (stacked and value.dim() < 1):
            raise ValueError(f"{name}[{key!r}] must be a float tensor{' with a leading row axis' if stacked else ''}, "
                             f"got dtype {value.dtype} and shape {tuple(value.shape)}.")
    _check_finite(name, params)
    if not stacked or not params:
        return None
    sizes = {v.shape[0] for v in params.values()}
    if len(sizes) > 1 or (rows is not None and sizes != {rows}):
        expected = f"{rows} rows" if rows is not None else "the same number of rows"
        raise ValueError(f"{name} must have {expected} in every tensor, got leading sizes "
                         f"{ {k: v.shape[0] for k, v in params.items()} }.")
    return sizes.pop()


def _check_finite(name: str, params: Params) -> None:
    bad = [k for k, v in params.items() if not all_finite(_distinct(v))]
    if bad:
        raise ValueError(f"{name} must be finite; {bad} hold NaN or infinite entries.")


def _distinct(t: Tensor) -> Tensor:
    """The entries of ``t`` without repeats along broadcast axes (stride 0): row 0 of :func:`fedlab.engine.broadcast`'s
    ``(R, ...)`` views, so that checking a broadcast model costs one model, not R."""
    if t.numel() == 0 or 0 not in t.stride():
        return t
    return t.as_strided([1 if st == 0 else n for n, st in zip(t.shape, t.stride())], t.stride(), t.storage_offset())


def check_params(model: Model, params, *, stacked: bool = True, rows: int | None = None,
                 name: str = "params") -> Params:
    """Return ``params`` when they are ``model``'s parameters (its names and shapes, finite), stacked on a leading
    row axis (``rows`` rows when given) or, with ``stacked=False``, one client's; else raise naming ``name``."""
    shapes = check_model(model).param_shapes()
    check_type(name, params, dict)
    if set(params) != set(shapes):
        raise ValueError(f"{name} must hold the parameters {sorted(shapes)} of {model!r}, got {sorted(params)}.")
    check_param_dict(name, params, stacked=stacked, rows=rows, nonempty=bool(shapes))
    lead = 1 if stacked else 0
    wrong = {k: tuple(v.shape[lead:]) for k, v in params.items() if tuple(v.shape[lead:]) != shapes[k]}
    if wrong:
        raise ValueError(f"{name} have shapes {wrong}, {model!r} expects {({k: shapes[k] for k in wrong})}"
                         f"{' after the row axis' if stacked else ''}.")
    return params


def init_stacked(model: Model, n_rows: int, generator: torch.Generator, *, same: bool = True) -> Params:
    """Parameters for ``n_rows`` clients stacked on a leading axis (identical rows when ``same``)."""
    check_model(model)
    check_int("n_rows", n_rows, low=1)
    check_type("generator", generator, torch.Generator)
    same = check_bool("same", same)
    if same:
        single = model.init(generator)
        return {k: v.unsqueeze(0).repeat(n_rows, *([1] * v.dim())) for k, v in single.items()}
    rows = [model.init(generator) for _ in range(n_rows)]
    return {k: torch.stack([r[k] for r in rows]) for k in rows[0]}
