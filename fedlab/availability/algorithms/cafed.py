r"""CA-Fed, correlation-aware FL (thesis Algorithm 6, §2.2.4).

Every round the server estimates the total error of eq. (2.29) with the proxy (2.31)-(2.33),

.. math::
    \hat\epsilon(\mathbf q)=\langle\hat{\mathbf F}-\hat{\mathbf F}^*,\tilde{\mathbf p}\rangle
    +4\bar\kappa^2\,d_{TV}^2(\alpha,\tilde{\mathbf p})\,\hat\Gamma',\qquad
    \tilde{\mathbf p}=\hat\pi\,\tilde\odot\,\mathbf q,\quad \hat\Gamma'=\max_k(\hat F_k-\hat F_k^*),

starts from the unbiased weights :math:`\mathbf q=\alpha/\hat\pi` and greedily sets :math:`q_k=0` (first pass:
clients by decreasing :math:`|\hat\lambda_k|`, Guideline B; second pass: by increasing :math:`\hat\pi_k`,
Guideline A) whenever that lowers :math:`\hat\epsilon` by more than :math:`\tau`. Surviving weights stay
:math:`\alpha_k/\hat\pi_k` (Guideline C). :math:`\bar\kappa^2` trades optimisation speed (small: many
exclusions) against bias (:math:`\bar\kappa^2\to\infty` is ``Unbiased``).

Implementation choices (spec §3.2-§3.4): the normalised :math:`\tilde{\mathbf p}` of (2.31)/(2.33) (Alg. 6 lines
18/21 literally use :math:`\pi\odot\mathbf q`; ``normalized=False``); a strict ``>`` τ test (``strict=False`` is
the thesis' ``≥``, which with τ = 0 drops every client when all gaps are 0); the last included client is never
excluded; β is the weight of the *new* loss in (2.30) (the thesis experiments' "β = 0" is the code's
convention, i.e. β = 1 here); :math:`\hat F_k^*` is the running minimum (thesis) or an oracle.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlab._validation import check_array, check_bool, check_choice, check_real, check_simplex, check_type
from fedlab.engine import ClientData
from fedlab.models import Model
from fedlab.availability.algorithms.baselines import AvailabilityAlgorithm, AvailabilityState
from fedlab.availability.algorithms._metrics import sample_metrics

__all__ = ["cafed_proxy", "CafedDecision", "cafed_weights", "cafed_tradeoff", "CAFed",
           "client_losses"]


def _proxy_inputs(alpha, pi, gap):
    alpha = check_simplex("alpha", alpha, ndim=1)
    pi = check_array("pi", pi, shape=alpha.shape)
    if np.any(pi < 0) or np.any(pi > 1):
        raise ValueError(f"pi must lie in [0, 1], got values in [{pi.min():.4g}, {pi.max():.4g}].")
    gap = check_array("gap", gap, shape=alpha.shape, nonnegative=True)
    return alpha, pi, gap


def cafed_proxy(q, alpha, pi, gap, *, kappa2: float, gamma_prime: float | None = None,
                normalized: bool = True) -> tuple[float, float, float]:
    r"""CA-Fed's estimate of the total error, eqs. (2.31)-(2.33): ``(total, opt, bias)``.

    .. math::
        \text{opt}=\langle\mathbf g,\tilde{\mathbf p}\rangle,\quad
        \text{bias}=4\bar\kappa^2d_{TV}^2(\alpha,\tilde{\mathbf p})\hat\Gamma',\quad
        \tilde p_k=\frac{\pi_kq_k}{\sum_h\pi_hq_h}

    (``normalized=False``: :math:`\tilde p_k=\pi_kq_k`, Alg. 6 lines 18/21 literally).

    Parameters
    ----------
    q : array (N,)
        Aggregation weights, non-negative.
    alpha : array (N,)
        Target importance.
    pi : array (N,)
        (Estimated) availabilities.
    gap : array (N,)
        :math:`\hat F_k-\hat F_k^*`.
    kappa2 : float >= 0
        :math:`\bar\kappa^2`.
    gamma_prime : float, optional
        :math:`\hat\Gamma'`; default ``max(gap)`` (2.32).
    normalized : bool
    """
    alpha, pi, gap = _proxy_inputs(alpha, pi, gap)
    q = check_array("q", q, shape=alpha.shape, nonnegative=True)
    kappa2 = check_real("kappa2", kappa2, low=0)
    gp = float(gap.max()) if gamma_prime is None else check_real("gamma_prime", gamma_prime, low=0)
    return _proxy(q, alpha, pi, gap, kappa2, gp, check_bool("normalized", normalized))


def _proxy(q, alpha, pi, gap, kappa2, gamma_prime, normalized) -> tuple[float, float, float]:
    p = pi * q
    if normalized:
        p = p / p.sum()
    opt = float(gap @ p)
    bias = float(4 * kappa2 * (0.5 * np.abs(alpha - p).sum()) ** 2 * gamma_prime)
    return opt + bias, opt, bias


@dataclass(frozen=True, eq=False)
class CafedDecision:
    """Result of CA-Fed's greedy exclusion.

    Attributes
    ----------
    q : array (N,)
        Weights over all clients (``alpha/pi`` on the included ones, 0 on the excluded).
    excluded : list of int
        Excluded clients, in the order they were excluded.
    total, opt, bias : float
        Final proxy and its two terms.
    trace : list of dict
        Every tested candidate: ``{"pass", "client", "eps", "eps_plus", "excluded"}``.
    """

    q: np.ndarray
    excluded: list
    total: float
    opt: float
    bias: float
    trace: list


def cafed_weights(alpha, pi, lam, gap, *, kappa2: float, tau: float = 0.0, strict: bool = True,
                  normalized: bool = True, gamma_prime: float | None = None, trace: bool = True) -> CafedDecision:
    r"""CA-Fed's aggregation weights, Alg. 6 lines 5-7 (two greedy ``get`` passes).

    Start from :math:`\mathbf q=\alpha/\pi`; for each client in order of decreasing :math:`|\lambda_k|`, then of
    increasing :math:`\pi_k` (stable sorts), tentatively set :math:`q_k=0` and keep it if
    :math:`\hat\epsilon-\hat\epsilon^+>\tau` (``strict``; else :math:`\ge\tau`). Candidates already at 0 are skipped;
    a pass stops rather than exclude the last client.

    Parameters
    ----------
    alpha, pi, lam, gap : arrays (N,)
        Target importance, availabilities, second eigenvalues and loss gaps :math:`\hat F_k-\hat F_k^*`.
    kappa2 : float >= 0
        :math:`\bar\kappa^2`.
    tau : float >= 0
        Threshold :math:`\tau`.
    strict, normalized : bool
        See the module docstring.
    gamma_prime : float, optional
        :math:`\hat\Gamma'` (default ``max(gap)``, over all clients).
    trace : bool
        Record every tested candidate (default). ``False`` leaves ``trace`` empty and skips the candidates that a
        vectorised estimate of their proxy proves rejected (:func:`_maybe_accepted`); ``q``, ``excluded`` and the
        proxy values are the same to the bit, as the greedy computes every candidate it may accept as before.

    Returns
    -------
    CafedDecision
    """
    alpha, pi, gap = _proxy_inputs(alpha, pi, gap)
    if np.any(pi <= 0):
        raise ValueError("pi must be positive: the unbiased start q = alpha/pi needs it.")
    lam = check_array("lam", lam, shape=alpha.shape)
    if np.any(np.abs(lam) > 1):
        raise ValueError(f"lam must hold second eigenvalues in [-1, 1], got values in [{lam.min():.4g}, "
                         f"{lam.max():.4g}].")
    kappa2 = check_real("kappa2", kappa2, low=0)
    tau = check_real("tau", tau, low=0)
    strict, normalized = check_bool("strict", strict), check_bool("normalized", normalized)
    screen = not check_bool("trace", trace)
    gp = float(gap.max()) if gamma_prime is None else check_real("gamma_prime", gamma_prime, low=0)
    q = alpha / pi
    eps, opt, bias = _proxy(q, alpha, pi, gap, kappa2, gp, normalized)
    excluded, trace = [], []
    orders = (("lambda", np.argsort(-np.abs(lam), kind="stable")), ("pi", np.argsort(pi, kind="stable")))
    for name, order in orders:
        maybe = None                          # screen of order[start:] for the current q
        for pos, k in enumerate(order):
            if q[k] == 0:
                continue
            if screen:
                if maybe is None:
                    start, maybe = pos, _maybe_accepted(q, eps, order[pos:], alpha, pi, gap, kappa2, gp, normalized,
                                                        tau)
                if not maybe[pos - start]:
                    continue
            q_plus = q.copy()
            q_plus[k] = 0.0
            if not np.any(q_plus * pi > 0):
                break
            eps_plus, opt_plus, bias_plus = _proxy(q_plus, alpha, pi, gap, kappa2, gp, normalized)
            gain = eps - eps_plus
            accept = gain > tau if strict else gain >= tau
            if not screen:
                trace.append({"pass": name, "client": int(k), "eps": eps, "eps_plus": eps_plus,
                              "excluded": bool(accept)})
            if accept:
                q, eps, opt, bias = q_plus, eps_plus, opt_plus, bias_plus
                excluded.append(int(k))
                maybe = None
    return CafedDecision(q, excluded, eps, opt, bias, trace)


SCREEN_MARGIN = 1e-9
"""Relative margin of :func:`_maybe_accepted`: its estimates of the proxy differ from :func:`_proxy`'s by rounding
errors some orders of magnitude below it."""


def _maybe_accepted(q, eps, candidates, alpha, pi, gap, kappa2, gamma_prime, normalized, tau) -> np.ndarray:
    r"""For each candidate k (with :math:`q_k>0`), whether setting :math:`q_k=0` may lower the proxy by more than
    :math:`\tau`: ``False`` only when the vectorised estimate of :math:`\hat\epsilon^+_k` (all candidates at once,
    summed in another order than :func:`_proxy`) misses the threshold by more than :data:`SCREEN_MARGIN` of the
    values. A candidate whose removal leaves less than 1e-3 of the weight :math:`\sum_j\pi_jq_j` (where that
    estimate loses precision) is always kept."""
    p = pi * q
    cand = np.asarray(candidates)
    p_plus = np.broadcast_to(p, (len(cand), len(p))).copy()
    p_plus[np.arange(len(cand)), cand] = 0.0
    total, rest = p.sum(), p_plus.sum(1)
    if normalized:
        p_plus /= np.where(rest > 0, rest, 1.0)[:, None]
    eps_plus = p_plus @ gap + 4 * kappa2 * (0.5 * np.abs(alpha - p_plus).sum(1)) ** 2 * gamma_prime
    missed = eps - eps_plus < tau - SCREEN_MARGIN * (abs(eps) + np.abs(eps_plus))
    return ~missed | (rest < 1e-3 * total)


def cafed_tradeoff(alpha, pi, lam, gap, kappa2_grid, **kwargs) -> dict:
    r"""CA-Fed's decision for every :math:`\bar\kappa^2` of a grid (the bias-optimisation trade-off, §2.2.4.3).

    Parameters
    ----------
    alpha, pi, lam, gap : arrays (N,)
        As for :func:`cafed_weights`.
    kappa2_grid : array (G,)
        Non-negative values of :math:`\bar\kappa^2`.
    **kwargs
        ``tau``, ``strict``, ``normalized``, ``gamma_prime`` for :func:`cafed_weights`.

    Returns
    -------
    dict of arrays
        ``kappa2`` (G,), ``opt``, ``bias``, ``total`` (G,), ``n_excluded`` (G,), ``q`` (G, N), ``p`` (G, N)
        (normalised :math:`\hat\pi\tilde\odot\mathbf q`) and ``excluded`` (list of G sorted lists).
    """
    grid = check_array("kappa2_grid", kappa2_grid, ndim=1, nonnegative=True)
    if grid.size == 0:
        raise ValueError("kappa2_grid must hold at least one value.")
    decisions = [cafed_weights(alpha, pi, lam, gap, kappa2=float(k), **kwargs) for k in grid]
    q = np.array([d.q for d in decisions])
    p = q * np.asarray(pi, float)
    return {"kappa2": grid, "opt": np.array([d.opt for d in decisions]), "bias": np.array([d.bias for d in decisions]),
            "total": np.array([d.total for d in decisions]), "n_excluded": np.array([len(d.excluded) for d in decisions]),
            "q": q, "p": p / p.sum(1, keepdims=True), "excluded": [sorted(d.excluded) for d in decisions]}


def client_losses(model: Model, params, data, clients, *, weight_decay: float = 0.0) -> np.ndarray:
    r"""Local objectives :math:`F_k(\mathbf w)` of one model on the given clients' full data, shape ``(len(clients),)``;
    adds :math:`\frac{\lambda_{wd}}2\|\mathbf w\|^2` when the local solver uses weight decay. Computed on the real
    samples only (:func:`~fedlab.availability.algorithms._metrics.sample_metrics`)."""
    check_type("data", data, ClientData)
    clients = data.check_clients(clients)
    weight_decay = check_real("weight_decay", weight_decay, low=0)
    loss = sample_metrics(model, params, data, clients, accuracy=False)["loss"]
    if weight_decay:
        loss = loss + 0.5 * weight_decay * float(sum(v.double().pow(2).sum() for v in params.values()))
    return loss


class CAFed(AvailabilityAlgorithm):
    r"""CA-Fed (Algorithm 6): FedAvg that excludes clients when the proxy (2.33) says it pays off.

    Each available client reports the loss of :math:`\mathbf w_{t,0}` on its training data; the server
    updates :math:`\hat{\mathbf F}` by (2.30) (first round: unseen clients take the mean reported loss),
    :math:`\hat F_k^*` (running minimum, or ``f_star`` given), :math:`\hat\Gamma'` (2.32), :math:`\hat\pi`,
    :math:`\hat\lambda`, then calls :func:`cafed_weights`. Only available clients with :math:`q_k>0` train.

    Parameters
    ----------
    kappa2 : float >= 0
        :math:`\bar\kappa^2` (thesis: 1; Fig. 2.12: 1e-2 .. 1e2).
    tau : float >= 0
        Exclusion threshold :math:`\tau` (thesis: 0).
    beta : float in (0, 1]
        Weight of the new loss in (2.30) (1 = keep the latest loss, the thesis' experiments).
    strict, normalized : bool
        See :func:`cafed_weights`.
    fstar : {"running_min", "oracle"}
        Estimator of :math:`F_k^*`.
    f_star : array (N,), optional
        Local minima for ``fstar="oracle"``.
    **kwargs
        As for :class:`~fedlab.availability.algorithms.baselines.AvailabilityAlgorithm` (``lam`` is needed
        with the oracle estimator).

    Notes
    -----
    The per-round ``history.log`` entry adds ``excluded`` (clients with :math:`q_k=0` after the greedy, over all
    clients), ``excluded_active``, ``proxy``/``proxy_opt``/``proxy_bias``, ``gamma_prime`` and ``gaps``.
    """

    def __init__(self, model: Model, solver, *, kappa2: float = 1.0, tau: float = 0.0, beta: float = 1.0,
                 strict: bool = True, normalized: bool = True, fstar: str = "running_min", f_star=None,
                 **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        self.kappa2 = check_real("kappa2", kappa2, low=0)
        self.tau = check_real("tau", tau, low=0)
        self.beta = check_real("beta", beta, low=0, high=1, low_open=True)
        self.strict, self.normalized = check_bool("strict", strict), check_bool("normalized", normalized)
        self.fstar = check_choice("fstar", fstar, ("running_min", "oracle"))
        if self.fstar == "oracle" and f_star is None:
            raise ValueError("fstar='oracle' needs the local minima f_star (N,).")
        self.f_star = None if f_star is None else check_array("f_star", f_star, ndim=1)
        if self.f_star is not None and self.f_star.size == 0:
            raise ValueError("f_star must hold one local minimum per client.")
        if self.estimator == "oracle" and self.lam is None:
            raise ValueError("CA-Fed with estimator='oracle' needs the true second eigenvalues lam.")

    def _check_sizes(self, n: int) -> None:
        super()._check_sizes(n)
        if self.f_star is not None and len(self.f_star) != n:
            raise ValueError(f"f_star has {len(self.f_star)} entries but the data has {n} clients.")

    def _loss_estimates(self, state: AvailabilityState, data, mask: np.ndarray):
        active = np.flatnonzero(mask)
        f_hat = state.f_hat
        if len(active):
            reported = client_losses(self.model, state.params, data.train, active,
                                     weight_decay=self.solver.weight_decay)
            if f_hat is None:
                f_hat = np.full(data.n_clients, float(reported.mean()))
                f_hat[active] = reported
            else:
                f_hat = f_hat.copy()
                f_hat[active] = (1 - self.beta) * f_hat[active] + self.beta * reported
        if f_hat is None:
            return None, None
        if self.fstar == "oracle":
            f_star = self.f_star
        else:
            f_star = f_hat.copy() if state.f_star is None else np.minimum(state.f_star, f_hat)
        return f_hat, f_star

    def weights(self, state, data, mask, pi_hat, lam_hat):
        alpha = self._alpha(data)
        f_hat, f_star = self._loss_estimates(state, data, mask)
        if f_hat is None:  # nobody has reported a loss yet: unbiased weights
            return np.where(mask, alpha / pi_hat, 0.0), {"excluded": [], "excluded_active": []}, {}
        gap = np.maximum(f_hat - f_star, 0.0)
        decision = cafed_weights(alpha, pi_hat, lam_hat, gap, kappa2=self.kappa2, tau=self.tau, strict=self.strict,
                                 normalized=self.normalized, trace=False)
        excluded = sorted(decision.excluded)
        info = {"excluded": excluded, "excluded_active": [k for k in excluded if mask[k]],
                "proxy": decision.total, "proxy_opt": decision.opt, "proxy_bias": decision.bias,
                "gamma_prime": float(gap.max()), "gaps": gap.tolist()}
        return np.where(mask, decision.q, 0.0), info, {"f_hat": f_hat, "f_star": f_star}

