r"""A federated least-squares problem whose minimiser drifts as a random walk (Rizk et al., spec ``dynamic.md`` C.4/C.7).

Agent k (k = 1..K) sees features :math:`h\sim\mathcal N(0, v_k I_d)` and labels :math:`y = h^\top w^\star_{k,i}
+ \mathcal N(0,\sigma_n^2)` with the squared loss :math:`Q_k(w; h, y) = \tfrac12(h^\top w - y)^2`, so
:math:`P_k(w) = \tfrac{v_k}2\|w - w^\star_{k,i}\|^2 + \tfrac{\sigma_n^2}2`. Agent optima are a common drifting
model plus a fixed offset, :math:`w^\star_{k,i} = w^\star_i + c_k`, with the random walk (17)
:math:`w^\star_i = w^\star_{i-1} + q_i`, :math:`q_i\sim\mathcal N(0, \tfrac{\sigma_q^2}d I)` and
:math:`c_k\sim\mathcal N(0,\tfrac{\sigma_c^2}d I)` (so :math:`\mathbb E\|q_i\|^2 = \sigma_q^2`,
:math:`\mathbb E\|c_k\|^2 = \sigma_c^2`). The aggregate risk :math:`\frac1K\sum_k P_k` has the exact minimiser

.. math:: w^o_i = \frac{\sum_k v_k w^\star_{k,i}}{\sum_k v_k} = w^\star_i + \bar c,\qquad
          \bar c = \frac{\sum_k v_k c_k}{\sum_k v_k},

which drifts exactly like :math:`w^\star_i` (Assumption 2 with variance :math:`\sigma_q^2`). Samples are fresh
at every minibatch (:math:`N_k=\infty`), the least-squares default of the spec (C.7) where :math:`w^o_i` is exact.

The paper's own experiment (§V) is the regularised logistic risk (29),
:math:`P_k(w) = \mathbb E\ln(1+e^{-\gamma h^\top w}) + \rho\|w\|^2` with 2-D Gaussian features
:math:`h\sim\mathcal N(0, v_kI_2)` and noise-free labels :math:`\gamma = \mathrm{sign}(h^\top w^\star_{k,i})`
(:class:`DriftingLogistic`). Its aggregate minimiser has no closed form; with fresh samples it is the minimiser of
the population risk, computed by :func:`logistic_risk_minimizer` (Newton's method on an exact polar quadrature).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_int, check_real

__all__ = ["DriftingLeastSquares", "make_drifting_least_squares", "random_walk", "sample_least_squares",
           "DriftingLogistic", "make_drifting_logistic", "logistic_risk_minimizer", "logistic_risk_curvature"]



@dataclass(frozen=True)
class _DriftingAgents:
    r"""What the least-squares and the logistic problems share: the agents' feature variances :math:`v_k` and offset
    directions :math:`z_k`, the offset and drift variances, the start model :math:`w^\star_0`."""

    feature_var: np.ndarray
    offset_dirs: np.ndarray
    offset_var: float = 0.1
    drift_var: float = 0.0
    w_start: np.ndarray | None = None

    def _check_agents(self, dim: int | None = None) -> None:
        """Check the shared fields (``dim`` columns of ``offset_dirs`` when given) and store them as arrays."""
        v = check_array("feature_var", self.feature_var, ndim=1)
        if v.size == 0 or np.any(v <= 0):
            raise ValueError(f"feature_var must be a non-empty vector of positive variances, got {v}.")
        z = check_array("offset_dirs", self.offset_dirs, ndim=2)
        if z.shape[0] != v.size or (dim is not None and z.shape[1] != dim):
            columns = "" if dim is None else f" and {dim} columns"
            raise ValueError(f"offset_dirs must have one row per agent ({v.size}){columns}, got shape {z.shape}.")
        check_real("offset_var", self.offset_var, low=0)
        check_real("drift_var", self.drift_var, low=0)
        d = z.shape[1]
        w0 = np.zeros(d) if self.w_start is None else check_array("w_start", self.w_start, shape=(d,))
        object.__setattr__(self, "feature_var", v)
        object.__setattr__(self, "offset_dirs", z)
        object.__setattr__(self, "w_start", w0)

    @property
    def n_agents(self) -> int:
        return self.feature_var.size

    @property
    def dim(self) -> int:
        return self.offset_dirs.shape[1]

    def with_(self, **changes):
        """A copy with some fields changed (e.g. ``problem.with_(drift_var=1e-3)``)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class DriftingLeastSquares(_DriftingAgents):
    r"""The drifting federated least-squares problem (module docstring).

    Parameters
    ----------
    feature_var : array (K,)
        :math:`v_k > 0`, the feature variance of agent k (its risk's curvature).
    offset_dirs : array (K, d)
        Standard-normal directions :math:`z_k`; the offsets are :math:`c_k = \sqrt{\sigma_c^2/d}\,z_k`.
    offset_var : float
        :math:`\sigma_c^2 \ge 0` (model variability across agents).
    drift_var : float
        :math:`\sigma_q^2 \ge 0` (random-walk variance per iteration).
    noise_std : float
        :math:`\sigma_n \ge 0` (label noise).
    w_start : array (d,)
        :math:`w^\star_0`.
    """

    noise_std: float = 0.5

    def __post_init__(self) -> None:
        self._check_agents()
        check_real("noise_std", self.noise_std, low=0)

    @property
    def offsets(self) -> np.ndarray:
        r""":math:`c_k = \sqrt{\sigma_c^2/d}\,z_k`, shape (K, d)."""
        return np.sqrt(self.offset_var / self.dim) * self.offset_dirs

    @property
    def mean_offset(self) -> np.ndarray:
        r""":math:`\bar c = \sum_k v_k c_k/\sum_k v_k`: the aggregate minimiser is :math:`w^\star_i + \bar c`."""
        return self.feature_var @ self.offsets / self.feature_var.sum()

    def optimum(self, w_star) -> np.ndarray:
        r"""Aggregate minimiser :math:`w^o = \sum_k v_k(w^\star + c_k)/\sum_k v_k` for common model(s) (..., d)."""
        return np.asarray(w_star, dtype=float) + self.mean_offset

    def agent_optima(self, w_star) -> np.ndarray:
        r""":math:`w^\star_{k} = w^\star + c_k`, shape (..., K, d)."""
        return np.asarray(w_star, dtype=float)[..., None, :] + self.offsets

    def risk(self, w, w_star) -> np.ndarray:
        r"""Aggregate risk :math:`\frac1K\sum_k P_k(w) = \frac1K\sum_k \tfrac{v_k}2\|w-w^\star_k\|^2 + \tfrac{\sigma_n^2}2`."""
        diff = np.asarray(w, dtype=float)[..., None, :] - self.agent_optima(w_star)
        return 0.5 * np.mean(self.feature_var * np.sum(diff ** 2, -1), -1) + 0.5 * self.noise_std ** 2


def make_drifting_least_squares(n_agents: int = 20, dim: int = 2, *, offset_var: float = 0.1, drift_var: float = 0.0,
                                noise_std: float = 0.5, feature_var_range: tuple[float, float] = (0.5, 2.0),
                                rng=None) -> DriftingLeastSquares:
    r"""Draw a problem with the spec's defaults (C.7): :math:`v_k\sim U(0.5, 2)`, :math:`w^\star_0\sim\mathcal N(0, I_d)`.

    Parameters
    ----------
    n_agents : int
        K.
    dim : int
        Model dimension (M in the paper, ``dim`` here).
    offset_var, drift_var : float >= 0
        :math:`\sigma_c^2` and :math:`\sigma_q^2`.
    noise_std : float >= 0
        :math:`\sigma_n`.
    feature_var_range : (low, high), 0 < low <= high
    rng : Generator, int or None
    """
    k = check_int("n_agents", n_agents, low=1)
    d = check_int("dim", dim, low=1)
    if len(feature_var_range) != 2:
        raise ValueError(f"feature_var_range must be (low, high), got {feature_var_range!r}.")
    lo = check_real("feature_var_range[0]", feature_var_range[0], low=0, low_open=True)
    hi = check_real("feature_var_range[1]", feature_var_range[1], low=lo)
    rng = as_numpy_rng(rng)
    v = rng.uniform(lo, hi, size=k)
    z = rng.standard_normal((k, d))
    w0 = rng.standard_normal(d)
    return DriftingLeastSquares(v, z, offset_var=offset_var, drift_var=drift_var, noise_std=noise_std, w_start=w0)


def random_walk(n_steps: int, dim: int, drift_var: float, *, start=None, rng=None) -> np.ndarray:
    r"""Random walk (17): :math:`w_i = w_{i-1} + q_i`, :math:`q_i\sim\mathcal N(0,\tfrac{\sigma_q^2}d I_d)`.

    Returns an array (n_steps + 1, dim) starting at ``start`` (zeros by default).
    """
    n = check_int("n_steps", n_steps, low=0)
    d = check_int("dim", dim, low=1)
    s2 = check_real("drift_var", drift_var, low=0)
    start = np.zeros(d) if start is None else check_array("start", start, shape=(d,))
    rng = as_numpy_rng(rng)
    steps = np.sqrt(s2 / d) * rng.standard_normal((n, d))
    return np.vstack([start, start + np.cumsum(steps, axis=0)])


def sample_least_squares(problem: DriftingLeastSquares, w_star, agents, batch: int, *, rng=None):
    r"""Draw ``batch`` fresh samples for each listed agent at common model ``w_star`` (d,).

    Returns ``(h, y)`` with shapes (len(agents), batch, d) and (len(agents), batch):
    :math:`h\sim\mathcal N(0, v_kI)`, :math:`y = h^\top(w^\star + c_k) + \sigma_n\,\xi`.
    """
    if not isinstance(problem, DriftingLeastSquares):
        raise TypeError(f"problem must be a DriftingLeastSquares, got {type(problem).__name__}.")
    agents = np.asarray(agents)
    if agents.size == 0:
        raise ValueError("agents must list at least one agent index.")
    if agents.ndim != 1 or not np.issubdtype(agents.dtype, np.integer) or np.any(agents < 0) \
            or np.any(agents >= problem.n_agents):
        raise ValueError(f"agents must be a 1-D array of indices in [0, {problem.n_agents}), got {agents}.")
    b = check_int("batch", batch, low=1)
    w_star = check_array("w_star", w_star, shape=(problem.dim,))
    rng = as_numpy_rng(rng)
    h = rng.standard_normal((agents.size, b, problem.dim)) * np.sqrt(problem.feature_var[agents])[:, None, None]
    targets = problem.agent_optima(w_star)[agents]
    y = np.einsum("abd,ad->ab", h, targets) + problem.noise_std * rng.standard_normal((agents.size, b))
    return h, y


@dataclass(frozen=True)
class DriftingLogistic(_DriftingAgents):
    r"""The paper's drifting logistic problem (29) in two dimensions (module docstring; spec C.6).

    Agent k sees :math:`h\sim\mathcal N(0, v_kI_2)` with the label :math:`\gamma = \mathrm{sign}(h^\top w^\star_{k,i})`,
    :math:`w^\star_{k,i} = w^\star_i + c_k`, and the loss :math:`\ln(1+e^{-\gamma h^\top w}) + \rho\|w\|^2`; the
    common model follows the random walk (17). Samples are fresh (:math:`N_k = \infty`): the reference
    :math:`w^o_i` is the minimiser of the aggregate population risk (:meth:`optimum`).

    Parameters
    ----------
    feature_var : array (K,)
        :math:`v_k > 0`.
    offset_dirs : array (K, 2)
        Standard-normal directions :math:`z_k`; :math:`c_k = \sqrt{\sigma_c^2/2}\,z_k`.
    offset_var, drift_var : float >= 0
        :math:`\sigma_c^2`, :math:`\sigma_q^2`.
    reg_rho : float > 0
        :math:`\rho` (not given in the paper; 0.01 by default, spec C.7 assumption).
    w_start : array (2,)
        :math:`w^\star_0`.
    """

    reg_rho: float = 0.01

    def __post_init__(self) -> None:
        self._check_agents(dim=2)
        check_real("reg_rho", self.reg_rho, low=0, low_open=True)

    def agent_optima(self, w_star, offset_var=None) -> np.ndarray:
        r"""Label-generating models :math:`w^\star + c_k`, shape (..., K, 2); ``offset_var`` (...,) overrides
        :math:`\sigma_c^2` per leading entry."""
        w_star = np.asarray(w_star, dtype=float)
        ov = self.offset_var if offset_var is None else np.asarray(offset_var, dtype=float)
        return w_star[..., None, :] + np.sqrt(np.asarray(ov) / 2)[..., None, None] * self.offset_dirs

    def optimum(self, w_star, offset_var=None, *, w_init=None) -> np.ndarray:
        r"""Aggregate minimiser :math:`w^o` for common model(s) ``w_star`` (..., 2) (:func:`logistic_risk_minimizer`)."""
        return logistic_risk_minimizer(self.feature_var, self.agent_optima(w_star, offset_var), self.reg_rho,
                                       w_init=w_init)


def make_drifting_logistic(n_agents: int = 20, *, offset_var: float = 0.1, drift_var: float = 0.0,
                           reg_rho: float = 0.01, feature_var_range: tuple[float, float] = (0.5, 2.0),
                           rng=None) -> DriftingLogistic:
    r"""Draw the paper's logistic problem: :math:`v_k\sim U(0.5, 2)` (the paper: "a random variance"),
    :math:`z_k, w^\star_0\sim\mathcal N(0, I_2)` (the same draws, in the same order, as
    :func:`make_drifting_least_squares` with ``dim = 2``)."""
    ls = make_drifting_least_squares(n_agents, 2, offset_var=offset_var, drift_var=drift_var,
                                     feature_var_range=feature_var_range, rng=rng)
    return DriftingLogistic(ls.feature_var, ls.offset_dirs, offset_var=offset_var, drift_var=drift_var,
                            reg_rho=reg_rho, w_start=ls.w_start)


@functools.lru_cache(maxsize=8)
def _polar_rule(n_angle: int, n_radius: int, r_max: float = 9.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Angles in (-pi/2, pi/2), radii and the product weights of a half-plane Gauss-Legendre rule for N(0, I_2)."""
    ta, wa = np.polynomial.legendre.leggauss(n_angle)
    tr, wr = np.polynomial.legendre.leggauss(n_radius)
    angle, radius = ta * np.pi / 2, (tr + 1) * r_max / 2
    w_rad = wr * r_max / 2 * radius * np.exp(-radius ** 2 / 2)       # Rayleigh density of |z|
    return angle, radius, (wa / 2)[:, None] * w_rad[None, :]


def _quadrature(v: np.ndarray, u: np.ndarray, n_angle: int, n_radius: int) -> tuple:
    """Directions (..., K, A, 2), feature norms sqrt(v_k) r (K, R) and weights (1, A, R) of every agent's half-plane."""
    angle, radius, weight = _polar_rule(n_angle, n_radius)
    phi = np.arctan2(u[..., 1], u[..., 0])[..., None] + angle                  # (..., K, A)
    return np.stack([np.cos(phi), np.sin(phi)], -1), np.sqrt(v)[:, None] * radius, weight[None] / v.size


def _grad_hess(rule: tuple, w: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """Gradient (..., 2) and Hessian (..., 2, 2) of the aggregate risk at ``w``: h.w = |h| (dir.w) is separable."""
    dirs, scale, wk = rule
    m = np.einsum("...kaj,...j->...ka", dirs, w)[..., None] * scale[:, None, :]
    s = expit(-m)                                                              # sigma(-m): (..., K, A, R)
    g_rad = np.sum(wk * s * scale[:, None, :], -1)                             # (..., K, A)
    h_rad = np.sum(wk * s * (1 - s) * (scale ** 2)[:, None, :], -1)
    grad = -np.einsum("...ka,...kaj->...j", g_rad, dirs) + 2 * rho * w
    return grad, np.einsum("...ka,...kai,...kaj->...ij", h_rad, dirs, dirs) + 2 * rho * np.eye(2)


def logistic_risk_curvature(feature_var, agent_optima, reg_rho: float, w) -> np.ndarray:
    r"""Eigenvalues (ascending, (..., 2)) of the Hessian of the aggregate logistic risk (29) at ``w`` (..., 2):
    :math:`\frac1K\sum_k\mathbb E[\sigma(m)\sigma(-m)hh^\top] + 2\rho I`, :math:`m = \gamma h^\top w`; at
    :math:`w^o` the smallest is the strong-convexity constant ν that sets the contraction :math:`1-\mu\nu`."""
    v = check_array("feature_var", feature_var, ndim=1)
    if v.size == 0 or np.any(v <= 0):
        raise ValueError(f"feature_var must be a non-empty vector of positive variances, got {v}.")
    u = check_array("agent_optima", agent_optima)
    if u.ndim < 2 or u.shape[-2:] != (v.size, 2):
        raise ValueError(f"agent_optima must have shape (..., {v.size}, 2), got {u.shape}.")
    rho = check_real("reg_rho", reg_rho, low=0, low_open=True)
    w = check_array("w", w, shape=u.shape[:-2] + (2,))
    return np.linalg.eigvalsh(_grad_hess(_quadrature(v, u, 24, 32), w, rho)[1])


def logistic_risk_minimizer(feature_var, agent_optima, reg_rho: float, *, w_init=None, newton_steps: int = 30,
                            n_angle: int = 24, n_radius: int = 32) -> np.ndarray:
    r"""Minimiser of the aggregate population logistic risk (29) with noise-free sign labels.

    .. math:: w^o = \arg\min_w \frac1K\sum_k\mathbb E_{h\sim\mathcal N(0,v_kI_2)}
              \ln\bigl(1+e^{-\mathrm{sign}(h^\top u_k)\,h^\top w}\bigr) + \rho\|w\|^2,

    :math:`u_k` = ``agent_optima[..., k, :]``. Since :math:`\mathrm{sign}(h^\top u)\,h` is :math:`h` reflected into
    the half-plane :math:`h^\top u > 0`, each expectation is an integral over that half-plane, computed in polar
    coordinates with Gauss-Legendre rules in the angle and the radius (smooth integrands: exact to ~1e-12 with the
    defaults); Newton's method (strictly convex objective, Hessian :math:`\succeq 2\rho I`) from ``w_init`` (zeros).

    Parameters
    ----------
    feature_var : array (K,)
    agent_optima : array (..., K, 2)
    reg_rho : float > 0
    w_init : array (..., 2), optional
        Warm start.
    newton_steps : int
    n_angle, n_radius : int
        Nodes of the quadrature.

    Returns
    -------
    array (..., 2)
    """
    v = check_array("feature_var", feature_var, ndim=1)
    if v.size == 0 or np.any(v <= 0):
        raise ValueError(f"feature_var must be a non-empty vector of positive variances, got {v}.")
    u = check_array("agent_optima", agent_optima)
    if u.ndim < 2 or u.shape[-2:] != (v.size, 2):
        raise ValueError(f"agent_optima must have shape (..., {v.size}, 2), got {u.shape}.")
    rho = check_real("reg_rho", reg_rho, low=0, low_open=True)
    steps = check_int("newton_steps", newton_steps, low=1)
    check_int("n_angle", n_angle, low=2)
    check_int("n_radius", n_radius, low=2)
    w = np.zeros(u.shape[:-2] + (2,)) if w_init is None else check_array("w_init", w_init, shape=u.shape[:-2] + (2,))
    rule = _quadrature(v, u, n_angle, n_radius)
    for _ in range(steps):
        grad, hess = _grad_hess(rule, w, rho)
        w = w - np.linalg.solve(hess, grad[..., None])[..., 0]
    return w
