r"""SFedPO: streaming FL with a prediction oracle (DDS + SAW, Algorithms 1-2) and its baselines.

Each round (Algorithm 1, spec ``dynamic.md`` §B.4): clients are available independently with probability
:math:`q_n`; an available client gets a forecast :math:`\hat\pi_n` from the oracle, computes its sampling
ratios :math:`\hat\alpha_{n,m}` (**DDS**), starts from :math:`\bar x^{(r)}`, and at each of the T time steps
replaces :math:`\mathrm{round}(\hat\alpha_{n,m_t}D)` buffer samples by fresh samples of its current state
:math:`m_t`, then takes an SGD step on a minibatch of the buffer. The server averages the updates with the
shift-aware weights :math:`\hat p_n` (**SAW**) and takes a server step.

**DDS** (§B.3). Score (10)/(87) and normalisation (11):

.. math::
    \mathrm{score}_n(m) = \frac{w_m - a_1d_m + b_1}{1 + \frac{1-\alpha_n}{\alpha_n}\hat\pi_{n,m}},\qquad
    \hat\alpha_{n,m} = \frac{\alpha_n\,\mathrm{ReLU}(\mathrm{score}_n(m))}
                             {\sum_{m'}\hat\pi_{n,m'}\mathrm{ReLU}(\mathrm{score}_n(m'))},

with Algorithm 2 clipping ratios at 1 and redistributing the budget. **Which score.** The paper prints two
inconsistent denominators: :math:`1 + \frac{1-\alpha_n}{\alpha_n}\hat\pi` in (10)/(87) and
:math:`1 + \frac{\alpha_n}{1-\alpha_n}\hat\pi` in §5/App. G (they coincide at the experiments' :math:`\alpha_n = 0.5`).
We use **(10)** by default (``variant="eq10"``); ``variant="oracle"`` gives the other. Neither is the exact
KKT solution of the sampling problem (82): ``sampling="exact"`` (:func:`dds_alpha_exact`) solves (82) exactly
(separable convex QP, water-filling on the budget multiplier; denominator
:math:`(2-\pi_m)/(2-\alpha_n) + \pi_m/\alpha_n`, spec §B.7 item 2).

**SAW** (§B.4). :math:`\hat p_n = \mathrm{ReLU}(1/q_n - a_2\hat s_n + b_2) / \sum_{j\in S_r}\mathrm{ReLU}(\cdot)`
(14), normalised over the participants :math:`S_r` (Algorithm 1; (14) normalises over all N, which would shrink the
model), with :math:`\hat s_n` the heterogeneity score (12) under :math:`\hat\pi, \hat\alpha`.
``aggregation="saw_exact"`` solves the surrogate QP (92) exactly. The server step is 1 (Algorithm 1's :math:`\eta`
there is presumably a typo, spec §B.7 item 6); ``server="fedexp"`` uses FedEXP's extrapolated step instead.

**Baselines** (§B.8 at CPU scale, :data:`PRESETS`): FedAvg on the latest data (full replacement every
step, the paper's treatment of methods without a sampling mechanism: FedOGD, and FedOMD, which is FedOGD with a
Euclidean mirror map), FedAvg on the buffer with uniform sampling :math:`\alpha_{n,m}=\alpha_n` and
:math:`p_n = 1/|S_r|` (the "original" methods of Table 2), a reservoir buffer (a uniform sample of the whole
stream, the long-term distribution DRSR targets), a buffer that is never refreshed, DDS or SAW alone, and the
modularity pairs FedProx / FedEXP with and without SFedPO.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_choice, check_real, check_simplex
from fedlab.sfedpo.bounds import heterogeneity_score
from fedlab.sfedpo.strategies import (AGGREGATION_RULES, SAMPLING_RULES, SCORE_VARIANTS, aggregation_weights,
                                      sampling_ratios)
from fedlab.sfedpo.data import BUFFER_RULES, BufferBank, PredictionOracle, TemporalShiftDataset
from fedlab.engine import (LocalSGD, broadcast, evaluate, local_sgd, metrics_from_outputs, model_outputs,
                           weighted_average)
from fedlab.models import Model, Params, check_param_dict
from fedlab.algorithms import METHODS
from fedlab.algorithms.common import (check_solver, initial_params)


__all__ = [
    "SERVER_RULES",
    "fedexp_step",
    "SFedPOState",
    "SFedPO",
    "PRESETS",
]

# ------------------------------------------------------------------------------------ server step

def fedexp_step(deltas: Params, p, eps: float = 1e-3) -> float:
    r"""FedEXP's server step (Jhunjhunwala et al., 2023) with weights :math:`p`:
    :math:`\eta_g = \max\{1, \sum_n p_n\|\Delta_n\|^2 / (2(\|\sum_n p_n\Delta_n\|^2 + \epsilon))\}`.

    Parameters
    ----------
    deltas : dict of Tensor (R, ...)
        Client updates :math:`\Delta_n = x_{n,T} - \bar x`.
    p : array-like (R,)
        Aggregation weights summing to 1.
    eps : float > 0
    """
    n_rows = check_param_dict("deltas", deltas)
    p = check_simplex("p", p, shape=(n_rows,))
    eps = check_real("eps", eps, low=0, low_open=True)
    return _fedexp_step(deltas, p, eps)


def _fedexp_step(deltas: Params, p: np.ndarray, eps: float = 1e-3) -> float:
    """:func:`fedexp_step` without the checks (SFedPO's round passes validated weights)."""
    pt = torch.as_tensor(p / p.sum(), dtype=torch.float64)
    sq = sum(v.double().flatten(1).pow(2).sum(1) for v in deltas.values())
    mean_sq = sum(torch.tensordot(pt, v.double(), dims=1).pow(2).sum() for v in deltas.values())
    return max(1.0, float((pt @ sq) / (2 * (mean_sq + eps))))


SERVER_RULES = ("avg", "fedexp")


# ------------------------------------------------------------------------------------ the algorithm

@dataclass(frozen=True)
class SFedPOState:
    r"""Global model :math:`\bar x^{(r)}`, the clients' buffers and the number of rounds done."""

    params: Params
    buffers: BufferBank = field(repr=False)
    round: int = 0


class SFedPO:
    r"""Algorithm 1 (SFedPO) and, through its options, the baselines of :data:`PRESETS`.

    Parameters
    ----------
    model : Model
    solver : LocalSGD
        Step size :math:`\eta` and minibatch; each of the T time steps runs ``solver.local_steps`` SGD steps
        (1 in the paper) on the buffer after its update. ``prox_mu > 0`` gives FedProx (anchor
        :math:`\bar x^{(r)}`). Momentum is not supported (the buffer changes between steps).
    sampling : str
        Key of :data:`SAMPLING_RULES` (``"dds"``, ``"exact"``, ``"uniform"``, ``"latest"``).
    aggregation : str
        Key of :data:`AGGREGATION_RULES` (``"saw"``, ``"saw_exact"``, ``"uniform"``).
    oracle : PredictionOracle, optional
        Default: the perfect oracle ``PredictionOracle("exact")``.
    alpha_budget : float in (0, 1]
        Sampling budget :math:`\alpha_n` (0.5 in the paper).
    a1, b1, variant : DDS constants and score form (see :func:`dds_scores`).
    a2, b2 : SAW constants.
    G, L, sigma2 : float
        Constants of the bound used by DDS ("exact") and by the heterogeneity score (12) (:math:`\eta` =
        ``solver.lr``).
    lam2 : float
        :math:`\lambda_2` of ``"saw_exact"``.
    buffer_rule : str
        Eviction rule of :data:`~fedlab.sfedpo.data.BUFFER_RULES` (``"random"``: the mixture update (1)).
    server : {"avg", "fedexp"}
    server_lr : float
        Server step :math:`\eta_g` of ``"avg"`` (1 = plain weighted averaging).
    backend : {"auto", "batched", "loop"}
    """

    def __init__(self, model: Model, solver: LocalSGD, *, sampling: str = "dds", aggregation: str = "saw",
                 oracle: PredictionOracle | None = None, alpha_budget: float = 0.5, a1: float = 0.1,
                 b1: float = 0.2, variant: str = "eq10", a2: float = 1.0, b2: float = 0.0, G: float = 1.0,
                 L: float = 1.0, sigma2: float = 1.0, lam2: float = 0.0, buffer_rule: str = "random",
                 server: str = "avg", server_lr: float = 1.0, backend: str = "auto") -> None:
        if not isinstance(model, Model):
            raise TypeError(f"model must be a fedlab Model, got {type(model).__name__}.")
        check_solver(solver)
        if solver.momentum:
            raise ValueError("SFedPO does not support momentum (the buffer changes at every time step); "
                             f"got momentum={solver.momentum}.")
        if oracle is not None and not isinstance(oracle, PredictionOracle):
            raise TypeError(f"oracle must be a PredictionOracle, got {type(oracle).__name__}.")
        self.model, self.solver = model, solver
        self.sampling = check_choice("sampling", sampling, SAMPLING_RULES)
        self.aggregation = check_choice("aggregation", aggregation, AGGREGATION_RULES)
        self.oracle = PredictionOracle("exact") if oracle is None else oracle
        self.alpha_budget = check_real("alpha_budget", alpha_budget, low=0, high=1, low_open=True)
        self.a1, self.b1 = check_real("a1", a1), check_real("b1", b1)
        self.variant = check_choice("variant", variant, SCORE_VARIANTS)
        if self.variant == "oracle" and self.alpha_budget >= 1:
            raise ValueError("variant 'oracle' divides by 1 - alpha_n: alpha_budget must be < 1.")
        self.a2, self.b2 = check_real("a2", a2), check_real("b2", b2)
        self.G = check_real("G", G, low=0, low_open=True)
        self.L = check_real("L", L, low=0)
        self.sigma2 = check_real("sigma2", sigma2, low=0)
        self.lam2 = check_real("lam2", lam2)
        self.buffer_rule = check_choice("buffer_rule", buffer_rule, BUFFER_RULES)
        self.server = check_choice("server", server, SERVER_RULES)
        self.server_lr = check_real("server_lr", server_lr, low=0, low_open=True)
        self.backend = check_choice("backend", backend, ("auto", "batched", "loop"))

    @staticmethod
    def _check(data) -> TemporalShiftDataset:
        if not isinstance(data, TemporalShiftDataset):
            raise TypeError(f"data must be a TemporalShiftDataset (fedlab.sfedpo.data), got "
                            f"{type(data).__name__}.")
        return data

    def strategy(self, pi_hat, data: TemporalShiftDataset, mask=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""Sampling ratios (N, M), heterogeneity scores :math:`\hat s` (N,) and weights (N,) for forecasts ``pi_hat``.

        Weights are normalised over ``mask`` (default: all clients, as in the theory's fixed :math:`p_n`).
        """
        data = self._check(data)
        a = sampling_ratios(self.sampling, pi_hat, alpha_budget=self.alpha_budget, d=data.d, w=data.w, a1=self.a1,
                            b1=self.b1, variant=self.variant, G=self.G, n_steps=data.n_steps)
        pi_hat = np.atleast_2d(pi_hat)
        eff = (pi_hat * a).sum(1)
        s = heterogeneity_score(pi_hat, a, data.d, data.w, G=self.G, n_steps=data.n_steps, L=self.L,
                                eta=self.solver.lr, sigma2=self.sigma2, budget=np.where(eff > 0, eff, 1.0))
        p = aggregation_weights(self.aggregation, data.q, s, mask, a2=self.a2, b2=self.b2, L=self.L,
                                eta=self.solver.lr, sigma2=self.sigma2, lam2=self.lam2)
        return a, s, p

    def init(self, data: TemporalShiftDataset, seed: int) -> SFedPOState:
        data = self._check(data)
        return SFedPOState(initial_params(self.model, seed), data.initial_bank(self.buffer_rule), 0)

    def round(self, state: SFedPOState, data: TemporalShiftDataset, seed: int) -> tuple[SFedPOState, dict]:
        data = self._check(data)
        r = state.round
        if r >= data.n_rounds:
            raise ValueError(f"round {r} is beyond the data set's horizon R={data.n_rounds}.")
        mask = numpy_rng(seed, r, Stream.SAMPLING).random(data.n_clients) < data.q
        chosen = np.flatnonzero(mask)
        if len(chosen) == 0:
            return SFedPOState(state.params, state.buffers, r + 1), {
                "participants": [], "p_round": [], "local_loss": float("nan"), "server_lr": 0.0, "refreshed": 0}
        pi_hat = self.oracle.predict(data, r, seed)
        alpha, _, p_all = self.strategy(pi_hat, data, mask)
        p = p_all[chosen]
        bank = state.buffers.copy()
        steps = data.step_states(r)
        start = broadcast(state.params, len(chosen))
        params, losses, refreshed = start, [], 0
        rows = np.arange(data.n_clients)
        for t in range(1, data.n_steps + 1):
            # round(alpha_{n, m_t} D) fresh samples of the current state for each participant, 0 for the others
            sizes = np.where(mask, np.rint(alpha[rows, steps[:, t - 1]] * data.capacity), 0).astype(np.int64)
            fresh = data.fresh(r, t, sizes)
            rng = numpy_rng(seed, r, Stream.SFEDPO_EVICT, t)
            for n in chosen:
                if fresh[n] is not None:  # None: the ratio of the current state is 0 (e.g. a state the forecast missed)
                    x, y, m = fresh[n]
                    refreshed += bank._replace(int(n), x, y, m, rng)
            params, loss = local_sgd(self.model, params, bank.client_data(chosen), self.solver,
                                     key=(seed, r, Stream.LOCAL, t), anchor=start, backend=self.backend)
            losses.append(loss)
        mean = weighted_average(params, p)
        if self.server == "fedexp":
            deltas = {k: params[k] - start[k] for k in params}
            eta_g = _fedexp_step(deltas, p)
        else:
            eta_g = self.server_lr
        new = {k: state.params[k] + eta_g * (mean[k] - state.params[k]) for k in mean}
        info = {"participants": chosen.tolist(), "p_round": [float(v) for v in p],
                "local_loss": float(torch.stack(losses).mean()), "server_lr": float(eta_g), "refreshed": refreshed}
        return SFedPOState(new, bank, r + 1), info

    def evaluate(self, state: SFedPOState, data: TemporalShiftDataset) -> dict[str, np.ndarray]:
        r"""Per-client metrics on the current buffers (``train_*``) and the clients' test sets (``test_*``), and
        the global objective (3) on ``data.state_test`` weighted by :math:`w` (``global_loss``/``global_accuracy``,
        the same value repeated for every client)."""
        data = self._check(data)
        k = data.n_clients
        out = evaluate(self.model, broadcast(state.params, k), state.buffers.client_data(), data.test)
        m = data.n_states
        glob = metrics_from_outputs(self.model, model_outputs(self.model, broadcast(state.params, m), data.state_test),
                                    data.state_test)
        for name, values in glob.items():
            out[f"global_{name}"] = np.full(k, float(np.nansum(data.w * values)))
        return out


# ------------------------------------------------------------------------------------ methods

#: Named configurations of :class:`SFedPO` (keyword overrides; ``prox_mu`` changes the solver). The paper's
#: baselines that need machinery outside this CPU-scale setting (FedDrift's clustering, Flash's drift detector,
#: FedEWC/FLwF-2T's Fisher or distillation terms, IS/ODE's per-sample valuation) are not included.
for _name, _label, _options, _solver_options in [
        ("sfedpo", "SFedPO (DDS + SAW)", dict(sampling="dds", aggregation="saw"), {}),
        ("sfedpo_dds", "DDS only", dict(sampling="dds", aggregation="uniform"), {}),
        ("sfedpo_saw", "SAW only", dict(sampling="uniform", aggregation="saw"), {}),
        ("sfedpo_exact", "exact QPs (82) + (92)", dict(sampling="exact", aggregation="saw_exact"), {}),
        ("fedavg_buffer", "FedAvg, uniform buffer sampling", dict(sampling="uniform", aggregation="uniform"), {}),
        ("fedavg_latest", "FedAvg on the latest data (≈ FedOGD/FedOMD)",
         dict(sampling="latest", aggregation="uniform"), {}),
        ("fedavg_reservoir", "FedAvg, reservoir buffer",
         dict(sampling="uniform", aggregation="uniform", buffer_rule="reservoir"), {}),
        ("fedavg_static", "FedAvg, buffer never refreshed",
         dict(sampling="uniform", aggregation="uniform", buffer_rule="keep"), {}),
        ("fedprox_buffer", "FedProx (μ = 0.1)", dict(sampling="uniform", aggregation="uniform"), {"prox_mu": 0.1}),
        ("fedprox_sfedpo", "FedProx + SFedPO", dict(sampling="dds", aggregation="saw"), {"prox_mu": 0.1}),
        ("fedexp_buffer", "FedEXP", dict(sampling="uniform", aggregation="uniform", server="fedexp"), {}),
        ("fedexp_sfedpo", "FedEXP + SFedPO", dict(sampling="dds", aggregation="saw", server="fedexp"), {})]:
    METHODS.register(_name, SFedPO, chapter="sfedpo", label=_label, solver_options=_solver_options, **_options)

PRESETS = METHODS.presets("sfedpo")
"""SFedPO and the baselines of §B.8 by short name: ``PRESETS[name](model, solver, **overrides)`` (``overrides``
update the options, e.g. ``oracle=``, ``a1=``; ``prox_mu`` sets the solver's FedProx term)."""
