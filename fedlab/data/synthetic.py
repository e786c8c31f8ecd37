r"""Synthetic federated data: LEAF/FedProx Synthetic(α, β) and Gaussian mixtures.

``make_leaf_synthetic`` follows the generator of the FedProx paper [Li+20b] and its code
(the "LEAF Synthetic" data of the CA-Fed experiments, thesis §2.2.6.1, where (α, β) is written (γ, δ)).
``make_gaussian_mixture`` and ``make_gaussian_mixture_clients`` draw from a Gaussian mixture,
globally or with per-client mixture weights as in the mixture assumption of FedEM (thesis §3.5.1).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_bool, check_choice, check_int, check_simplex, check_real
from fedlab.data.partition import ClientArrays

__all__ = [
    "ClientArrays",
    "GaussianMixtureSample",
    "make_leaf_synthetic",
    "make_gaussian_mixture",
    "make_gaussian_mixture_clients",
]


def _client_sizes(n_samples: Any, n_clients: int | None, rng: np.random.Generator) -> np.ndarray:
    """Per-client sizes from an int, an array of ints or ``"lognormal"`` (LEAF: ``floor(LogN(4, 2)) + 50``)."""
    if isinstance(n_samples, str):
        check_choice("n_samples", n_samples, ("lognormal",))
        k = check_int("n_clients", 100 if n_clients is None else n_clients, low=1)
        return rng.lognormal(4.0, 2.0, size=k).astype(np.int64) + 50
    if np.ndim(n_samples) == 0:
        k = check_int("n_clients", 100 if n_clients is None else n_clients, low=1)
        return np.full(k, check_int("n_samples", n_samples, low=1), dtype=np.int64)
    sizes = np.asarray(n_samples)
    if sizes.ndim != 1 or sizes.dtype.kind not in "iu":
        raise TypeError(f"n_samples must be an int, 'lognormal' or a 1-D integer array, got {sizes.dtype} "
                        f"array of shape {sizes.shape}.")
    if n_clients is not None and check_int("n_clients", n_clients, low=1) != sizes.size:
        raise ValueError(f"n_clients={n_clients} does not match len(n_samples)={sizes.size}.")
    if sizes.size == 0 or sizes.min() < 1:
        raise ValueError(f"n_samples must give every client at least one sample, got {sizes.tolist()[:10]}.")
    return sizes.astype(np.int64)


def _leaf_parameters(alpha: float, beta: float, k: int, dim: int, n_classes: int, iid: bool,
                     rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Draw u_k, B_k, v_k, W_k, b_k of Synthetic(α, β); iid shares W, b and sets v_k = 0."""
    if iid:
        w, b = rng.standard_normal((dim, n_classes)), rng.standard_normal(n_classes)
        return {"u": np.zeros(k), "B": np.zeros(k), "v": np.zeros((k, dim)),
                "W": np.repeat(w[None], k, axis=0), "b": np.repeat(b[None], k, axis=0)}
    u = alpha * rng.standard_normal(k)
    big_b = beta * rng.standard_normal(k)
    v = big_b[:, None] + rng.standard_normal((k, dim))
    w = u[:, None, None] + rng.standard_normal((k, dim, n_classes))
    b = u[:, None] + rng.standard_normal((k, n_classes))
    return {"u": u, "B": big_b, "v": v, "W": w, "b": b}


def make_leaf_synthetic(alpha: float, beta: float, *, n_clients: int | None = None, n_samples: Any = 200,
                        dim: int = 60, n_classes: int = 10, iid: bool = False, rng=None) -> ClientArrays:
    r"""LEAF/FedProx Synthetic(α, β): per-client softmax-regression data [Li+20b].

    For client :math:`k`: :math:`u_k \sim \mathcal N(0, \alpha^2)`, :math:`B_k \sim \mathcal N(0, \beta^2)`;
    :math:`W_k \in \mathbb R^{d \times C}` and :math:`b_k \in \mathbb R^C` with entries
    :math:`\sim \mathcal N(u_k, 1)`; :math:`v_k` with entries :math:`\sim \mathcal N(B_k, 1)`;
    inputs :math:`x \sim \mathcal N(v_k, \Sigma)`, :math:`\Sigma = \mathrm{diag}(j^{-1.2})_{j=1..d}`;
    label :math:`y = \arg\max_c \mathrm{softmax}(x^\top W_k + b_k)_c`. As in the reference code,
    α and β are standard deviations. ``iid=True`` is FedProx's IID variant: one shared
    :math:`W, b \sim \mathcal N(0, 1)` and :math:`v_k = 0` for all clients (α, β unused).

    Note: :math:`u_k` shifts every logit of a sample by the same amount :math:`u_k(1 + \sum_j x_j)`,
    so labels do not depend on α at all; heterogeneity comes from β (input shift, which makes a few
    classes dominate each client) and from the client-specific :math:`W_k, b_k`. With a fixed seed,
    changing α leaves ``ys`` unchanged.

    Parameters
    ----------
    alpha, beta : float
        Heterogeneity parameters, ``>= 0``.
    n_clients : int or None
        Number of clients; default 100, or ``len(n_samples)`` when that is an array.
    n_samples : int, array of int or ``"lognormal"``
        Samples per client; ``"lognormal"`` is LEAF's ``floor(LogNormal(4, 2)) + 50``.
    dim, n_classes : int
        Input dimension ``d`` (60 in FedProx) and number of classes ``C`` (10).
    iid : bool
        Generate the IID variant.
    rng : numpy Generator, int or None
        Randomness (exact FedProx draws, made with legacy ``np.random``, are not reproduced).

    Returns
    -------
    ClientArrays
        ``xs[k]`` float32 (n_k, d), ``ys[k]`` int64 (n_k,); ``meta`` holds ``u`` (K,), ``B`` (K,),
        ``v`` (K, d), ``W`` (K, d, C), ``b`` (K, C) and ``sigma_diag`` (d,).
    """
    alpha = check_real("alpha", alpha, low=0.0)
    beta = check_real("beta", beta, low=0.0)
    dim = check_int("dim", dim, low=1)
    n_classes = check_int("n_classes", n_classes, low=2)
    rng = as_numpy_rng(rng)
    sizes = _client_sizes(n_samples, n_clients, rng)
    params = _leaf_parameters(alpha, beta, sizes.size, dim, n_classes, check_bool("iid", iid), rng)
    sigma_diag = np.arange(1, dim + 1, dtype=np.float64) ** -1.2
    xs, ys = [], []
    for k, n_k in enumerate(sizes):
        x = (params["v"][k] + np.sqrt(sigma_diag) * rng.standard_normal((n_k, dim))).astype(np.float32)
        logits = x.astype(np.float64) @ params["W"][k] + params["b"][k]
        xs.append(x)
        ys.append(np.argmax(logits, axis=1).astype(np.int64))
    return ClientArrays(xs, ys, n_classes, meta={**params, "sigma_diag": sigma_diag})


class GaussianMixtureSample(NamedTuple):
    """Draws from a Gaussian mixture and the mixture that produced them."""

    x: np.ndarray
    """(n, d) float64 samples."""
    z: np.ndarray
    """(n,) int64 component of each sample."""
    means: np.ndarray
    """(M, d) component means."""
    weights: np.ndarray
    """(M,) mixture weights."""
    covariances: np.ndarray
    """(M, d, d) component covariances (isotropic)."""


def _mixture_means(means: Any, n_components: int, dim: int, spread: float, rng: np.random.Generator) -> np.ndarray:
    if means is None:
        return spread * rng.standard_normal((n_components, dim))
    return check_array("means", means, shape=(n_components, dim))


def _component_variances(cov_scale: Any, n_components: int) -> np.ndarray:
    if np.ndim(cov_scale) == 0:
        return np.full(n_components, check_real("cov_scale", cov_scale, low=0.0, low_open=True))
    var = check_array("cov_scale", cov_scale, shape=(n_components,))
    if var.min() <= 0:
        raise ValueError(f"cov_scale must be positive, got minimum {var.min()}.")
    return var


def _draw_mixture(n: int, weights: np.ndarray, means: np.ndarray, var: np.ndarray,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    z = rng.choice(weights.size, size=n, p=weights).astype(np.int64)
    x = means[z] + np.sqrt(var[z])[:, None] * rng.standard_normal((n, means.shape[1]))
    return x, z


def make_gaussian_mixture(n_components: int, dim: int, n_samples: int, *, means: Any = None,
                          spread: float = 3.0, cov_scale: Any = 1.0, weights: Any = None,
                          rng=None) -> GaussianMixtureSample:
    r"""Sample :math:`x \sim \sum_m \pi_m \mathcal N(\mu_m, s_m I_d)` and keep the component labels.

    Means default to :math:`\mu_m \sim \mathcal N(0, \text{spread}^2 I_d)`; weights to uniform.

    Parameters
    ----------
    n_components, dim, n_samples : int
        Number of components ``M``, dimension ``d`` and samples ``n``.
    means : array-like (M, d) or None
        Component means.
    spread : float
        Standard deviation of the random means.
    cov_scale : float or array-like (M,)
        Variance :math:`s_m` of each isotropic component.
    weights : array-like (M,) or None
        Mixture weights :math:`\pi` (non-negative, summing to 1).
    rng : numpy Generator, int or None
        Randomness.

    Returns
    -------
    GaussianMixtureSample
        ``(x, z, means, weights, covariances)``.
    """
    m = check_int("n_components", n_components, low=1)
    dim = check_int("dim", dim, low=1)
    n = check_int("n_samples", n_samples, low=1)
    spread = check_real("spread", spread, low=0.0)
    rng = as_numpy_rng(rng)
    mu = _mixture_means(means, m, dim, spread, rng)
    var = _component_variances(cov_scale, m)
    pi = np.full(m, 1.0 / m) if weights is None else check_simplex("weights", weights, ndim=1, size=m)
    x, z = _draw_mixture(n, pi, mu, var, rng)
    return GaussianMixtureSample(x, z, mu, pi, var[:, None, None] * np.eye(dim))


def make_gaussian_mixture_clients(n_clients: int, n_components: int, dim: int, n_samples: Any, *,
                                  alpha: float = 1.0, means: Any = None, spread: float = 3.0,
                                  cov_scale: Any = 1.0, rng=None) -> ClientArrays:
    r"""Clients sharing Gaussian components with their own mixture weights :math:`\pi_k \sim \mathrm{Dir}(\alpha 1_M)`.

    Client :math:`k` samples :math:`z \sim \pi_k` and :math:`x \sim \mathcal N(\mu_z, s_z I_d)`: the
    mixture assumption of FedEM (thesis §3.5.1, Assumption 8) with Gaussian components.

    Parameters
    ----------
    n_clients, n_components, dim : int
        Clients ``K``, components ``M`` and dimension ``d``.
    n_samples : int, array of int (K,) or ``"lognormal"``
        Samples per client.
    alpha : float
        Dirichlet concentration of the per-client weights, ``> 0``.
    means, spread, cov_scale :
        As in :func:`make_gaussian_mixture`.
    rng : numpy Generator, int or None
        Randomness.

    Returns
    -------
    ClientArrays
        ``xs[k]`` float64 (n_k, d), ``ys[k]`` the components (``n_classes = M``); ``meta`` holds
        ``means`` (M, d), ``weights`` (K, M) and ``covariances`` (M, d, d).
    """
    k = check_int("n_clients", n_clients, low=1)
    m = check_int("n_components", n_components, low=1)
    dim = check_int("dim", dim, low=1)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    spread = check_real("spread", spread, low=0.0)
    rng = as_numpy_rng(rng)
    sizes = _client_sizes(n_samples, k, rng)
    mu = _mixture_means(means, m, dim, spread, rng)
    var = _component_variances(cov_scale, m)
    pis = rng.dirichlet(np.full(m, alpha), size=k)
    draws = [_draw_mixture(int(n_k), pi / pi.sum(), mu, var, rng) for n_k, pi in zip(sizes, pis)]
    meta = {"means": mu, "weights": pis, "covariances": var[:, None, None] * np.eye(dim)}
    return ClientArrays([d[0] for d in draws], [d[1] for d in draws], m, meta=meta)
