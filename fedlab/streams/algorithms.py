r"""The meta-algorithm for data streams (thesis Algorithm 13; Marfoq et al., AISTATS 2023, Alg. 1).

At round :math:`t` every client updates its memory :math:`\mathcal M_m^{(t)}`, runs E local SGD steps on
the weighted local objective (eq. 4.3)

.. math::
    \mathcal L^{(\lambda)}_{\mathcal M_m^{(t)}}(\theta) =
    \frac{\sum_{j\in\mathcal I_m^{(t)}}\lambda_m^{(t,j)}\,\ell(\theta; z_m^{(j)})}{\sum_{j\in\mathcal I_m^{(t)}}\lambda_m^{(t,j)}},

and the server aggregates with :math:`p_m^{(t)} \propto \sum_{j}\lambda_m^{(t,j)}` (eq. 4.5); the output is the
:math:`q`-weighted average :math:`\bar\theta = \sum_t q^{(t)}\theta^{(t)}` (eq. 4.6), reported next to the last iterate.

**Scaling of λ for the engine.** The engine's local objective is :math:`\frac1{n_k}\sum_i w_i\ell_i` with
minibatches drawn uniformly *with replacement*; the weights passed to it are

.. math:: w_j = |\mathcal I_m^{(t)}|\,\lambda_m^{(t,j)} \Big/ \textstyle\sum_{j'}\lambda_m^{(t,j')},

so that :math:`\frac1{|\mathcal I|}\sum_j w_j\ell_j = \mathcal L^{(\lambda)}_{\mathcal M}` and the minibatch
gradient :math:`\frac1K\sum_{b} w_{j_b}\nabla\ell_{j_b}` is unbiased, as Algorithm 13's
:math:`g = \frac{|\mathcal I|}{|\xi|}\sum_{j\in\xi}\frac{\lambda_j}{\sum\lambda}\nabla\ell_j` (line 9, drawn
without replacement; :func:`algorithm13_gradient`). Within a client, only the ratios of the λ matter
locally; their sums set :math:`p^{(t)}` and :math:`q^{(t)}`.

Strategies of the case study (§4.3.3-4.3.4) are client importances :math:`p` (:data:`STRATEGIES`):
Fresh (:math:`p_{hist}=0`), Historical (:math:`p_{hist}=1`), Uniform (:math:`p = n`), Ours
(:math:`\arg\min\psi`), or a fixed :math:`p_{hist}`. ``StreamingFedAvg(weights=p)`` realises them with
:math:`\lambda_m^{(t,j)} = p_m / |\mathcal I_m^{(t)}|`, i.e. :math:`p^{(t)} = p` (the constant per-client
λ of the case study: :math:`\lambda_{hist}/\lambda_{fresh} = 1/T` for Uniform).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import torch

from fedlab._rng import Stream
from fedlab._validation import check_array, check_choice, check_int, check_real, check_sequence, check_simplex
from fedlab.streams.bounds import OPTIMIZERS, optimal_weights, p_hist_weights
from fedlab.streams.data import MemorySchedule, StreamDataset
from fedlab.engine import LocalSGD, broadcast, evaluate, local_sgd, weighted_average
from fedlab.models import Model, Params
from fedlab.algorithms.common import (check_solver, initial_params)
from fedlab.algorithms import METHODS

__all__ = [
    "StreamState",
    "StreamingFedAvg",
    "ScaffoldStreamState",
    "StreamingScaffold",
    "STRATEGIES",
    "strategy_weights",
    "LAMBDA_RULES",
    "sample_weight_schedule",
    "local_sample_weights",
    "algorithm13_gradient",
    "PRESETS",
]


# ------------------------------------------------------------------------------------ strategies

def _fresh(n, m_hist, p_hist, ratio, method):
    return p_hist_weights(0.0, n, m_hist)


def _historical(n, m_hist, p_hist, ratio, method):
    return p_hist_weights(1.0, n, m_hist)


def _uniform(n, m_hist, p_hist, ratio, method):
    return np.asarray(n, dtype=float).copy()


def _fixed(n, m_hist, p_hist, ratio, method):
    if p_hist is None:
        raise ValueError("strategy 'fixed' needs p_hist (the total weight of historical clients).")
    return p_hist_weights(p_hist, n, m_hist)


def _ours(n, m_hist, p_hist, ratio, method):
    if ratio is None:
        raise ValueError("strategy 'ours' needs ratio (an estimate of c2/c1, see fedlab.streams.bounds).")
    return optimal_weights(ratio, n, m_hist, method)


STRATEGIES: dict[str, Callable] = {
    "fresh": _fresh,
    "historical": _historical,
    "uniform": _uniform,
    "fixed": _fixed,
    "ours": _ours,
}


def strategy_weights(strategy: str, n, m_hist: int, *, p_hist: float | None = None, ratio: float | None = None,
                     method: str = "auto") -> np.ndarray:
    r"""Client importances :math:`p` of a strategy of thesis §4.3.4 (historical clients first).

    * ``"fresh"``: :math:`p_{hist} = 0`, fresh clients in proportion to :math:`N_m`;
    * ``"historical"``: :math:`p_m = N_m/N_{hist}` on historical clients, 0 on fresh ones;
    * ``"uniform"``: :math:`p = n` (every sample counts the same, :math:`N_{eff} = N`);
    * ``"fixed"``: a given ``p_hist`` split in proportion to sizes inside each group;
    * ``"ours"``: :math:`\hat p^* = \arg\min_p \psi(p; \hat c)` at ``ratio`` :math:`=\hat c_2/\hat c_1`.

    Parameters
    ----------
    strategy : str
        Key of :data:`STRATEGIES`.
    n : array-like (M,)
        Client fractions :math:`N_m/N`.
    m_hist : int
    p_hist : float, optional
        For ``"fixed"``.
    ratio : float, optional
        For ``"ours"``.
    method : {"auto", "closed", "cvxpy"}
        Minimiser used by ``"ours"``.

    Returns
    -------
    ndarray (M,) in the simplex.
    """
    strategy = check_choice("strategy", strategy, STRATEGIES)
    check_int("m_hist", m_hist, low=0, high=len(check_simplex("n", n, ndim=1)))
    if p_hist is not None:
        check_real("p_hist", p_hist, low=0, high=1)
    if ratio is not None and not (isinstance(ratio, (int, float, np.number)) and ratio == np.inf):
        check_real("ratio", ratio, low=0)
    check_choice("method", method, ("auto", *OPTIMIZERS))
    return STRATEGIES[strategy](n, m_hist, p_hist, ratio, method)


# ------------------------------------------------------------------------------------ lambda schedules

def _schedules(data) -> list[MemorySchedule]:
    if isinstance(data, StreamDataset):
        return data.schedules()
    if isinstance(data, (list, tuple)) and all(isinstance(s, MemorySchedule) for s in data) and data:
        return list(data)
    raise TypeError(f"data must be a StreamDataset or a list of MemorySchedule, got {type(data).__name__}.")


def _ones(s: MemorySchedule, p_k):
    return s.in_memory.astype(float)


def _inverse_stay(s: MemorySchedule, p_k):
    tau = s.stay_times.astype(float)
    return np.divide(s.in_memory, tau[None, :], out=np.zeros(s.in_memory.shape), where=tau[None, :] > 0)


def _client(s: MemorySchedule, p_k):
    size = s.sizes.astype(float)
    scale = np.divide(p_k, size, out=np.zeros_like(size), where=size > 0)
    return s.in_memory * scale[:, None]


LAMBDA_RULES: dict[str, Callable] = {"ones": _ones, "inverse_stay": _inverse_stay, "client": _client}


def sample_weight_schedule(data, rule: str = "ones", p=None) -> list[np.ndarray]:
    r"""Sample weights :math:`\lambda_m^{(t,i)}` from the memory schedules alone (data-independent rules).

    * ``"ones"``: :math:`\lambda \equiv 1` on the memory (FedAvg weighting by current memory sizes);
    * ``"inverse_stay"``: :math:`\lambda = 1/\tau_i`, with :math:`\tau_i` the rounds sample i spends in memory,
      giving :math:`p_{m,i} = 1/N` (Uniform, :math:`N_{eff} = N`; spec §2.1 (b));
    * ``"client"``: :math:`\lambda_m^{(t,j)} = p_m/|\mathcal I_m^{(t)}|`, i.e. aggregation weights
      :math:`p^{(t)} = p` every round (the constant per-client weights of the case study).

    Parameters
    ----------
    data : StreamDataset or list of MemorySchedule
    rule : str
        Key of :data:`LAMBDA_RULES`.
    p : array-like (M,), optional
        Client importances for ``"client"``.

    Returns
    -------
    list of ndarray (T, N_m), zero outside the memory.
    """
    rule = check_choice("rule", rule, LAMBDA_RULES)
    schedules = _schedules(data)
    if p is not None:
        p = check_simplex("p", p, ndim=1, size=len(schedules))
    if rule == "client" and p is None:
        raise ValueError("rule 'client' needs the client importances p.")
    return [LAMBDA_RULES[rule](s, None if p is None else p[k]) for k, s in enumerate(schedules)]


def local_sample_weights(lam) -> np.ndarray:
    r"""Engine weights :math:`w_j = |\mathcal I|\,\lambda_j / \sum_{j'}\lambda_{j'}` of one memory.

    With them the engine's objective :math:`\frac1{|\mathcal I|}\sum_j w_j\ell_j` equals the weighted local
    objective (4.3). Raises if the weights sum to zero.
    """
    lam = check_array("lam", lam, ndim=1, nonnegative=True)
    if lam.sum() <= 0:
        raise ValueError("lam must have a positive sum (a client with zero weight does not train).")
    return len(lam) * lam / lam.sum()


def algorithm13_gradient(per_sample_grads, lam, batch_size: int, rng=None) -> np.ndarray:
    r"""Reference stochastic gradient of Algorithm 13, line 9 (minibatch drawn without replacement).

    .. math::
        g = \frac{|\mathcal I|}{|\xi|}\sum_{j\in\xi}\frac{\lambda_j}{\sum_{j'\in\mathcal I}\lambda_{j'}}\nabla\ell_j,
        \qquad |\xi| = \min(K, |\mathcal I|),

    an unbiased estimate of :math:`\nabla\mathcal L^{(\lambda)}_{\mathcal M}`.

    Parameters
    ----------
    per_sample_grads : array-like (n, d)
        :math:`\nabla\ell_j` for the samples of the memory.
    lam : array-like (n,)
        Their weights :math:`\lambda_j \ge 0`.
    batch_size : int
        K.
    rng : numpy Generator, int or None
    """
    from fedlab._rng import as_numpy_rng

    grads = check_array("per_sample_grads", per_sample_grads, ndim=2)
    lam = check_array("lam", lam, shape=(grads.shape[0],), nonnegative=True)
    if lam.sum() <= 0:
        raise ValueError("lam must have a positive sum.")
    batch = min(check_int("batch_size", batch_size, low=1), len(lam))
    xi = as_numpy_rng(rng).choice(len(lam), size=batch, replace=False)
    return len(lam) / batch * (lam[xi] / lam.sum()) @ grads[xi]


# ------------------------------------------------------------------------------------ the algorithm

@dataclass(frozen=True)
class StreamState:
    r"""Global model :math:`\theta^{(t)}`, the running :math:`q`-weighted average and its mass.

    Attributes
    ----------
    params : dict of Tensor
        :math:`\theta^{(t+1)}` after ``round`` rounds (the last iterate).
    avg_params : dict of Tensor
        :math:`\sum_{s\le t} q^{(s)}\theta^{(s)} / \sum_{s\le t} q^{(s)}` (equals :math:`\bar\theta` at the end).
    avg_mass : float
        :math:`\sum_{s\le t}\sum_{m,j}\lambda_m^{(s,j)}`.
    round : int
    """

    params: Params
    avg_params: Params
    avg_mass: float = 0.0
    round: int = 0


class StreamingFedAvg:
    r"""Algorithm 13: FedAvg on the weighted empirical risk (4.4) of clients' data streams.

    Parameters
    ----------
    model : Model
    solver : LocalSGD
        Local solver (E = ``solver.local_steps``, K = ``solver.batch_size``).
    weights : array-like (M,), optional
        Client importances :math:`p` (e.g. from :func:`strategy_weights`); realised as
        :math:`\lambda_m^{(t,j)} = p_m/|\mathcal I_m^{(t)}|` so that :math:`p^{(t)} = p` every round
        (renormalised over clients with a non-empty memory).
    sample_weights : str or list of arrays (T, N_m), optional
        A rule of :data:`LAMBDA_RULES` or an explicit schedule :math:`\lambda_m^{(t,i)}`. Give at most one of
        ``weights`` / ``sample_weights``; the default is ``"ones"``.
    radius : float, optional
        Server projection :math:`\Pi_\Theta` on the Euclidean ball of this radius (assumption A2).
    backend : {"auto", "batched", "loop"}

    Notes
    -----
    Clients whose memory has zero total weight at a round do not train (Fresh skips historical clients).
    ``evaluate`` reports the last iterate (``train_*``/``test_*``; ``train`` is every sample collected over
    the horizon) and the :math:`q`-averaged iterate (``train_*_avg``/``test_*_avg``).
    """

    def __init__(self, model: Model, solver: LocalSGD, *, weights=None, sample_weights=None,
                 radius: float | None = None, backend: str = "auto") -> None:
        if not isinstance(model, Model):
            raise TypeError(f"model must be a fedlab Model, got {type(model).__name__}.")
        check_solver(solver)
        if weights is not None and sample_weights is not None:
            raise ValueError("give either weights (client importances) or sample_weights (a lambda schedule), "
                             "not both.")
        if isinstance(sample_weights, str):
            check_choice("sample_weights", sample_weights, LAMBDA_RULES)
            if sample_weights == "client":
                raise ValueError("use weights=p for the 'client' rule.")
        elif sample_weights is not None:
            check_sequence("sample_weights", sample_weights, nonempty=True)
            for k, w in enumerate(sample_weights):
                check_array(f"sample_weights[{k}]", w, ndim=2, nonnegative=True)
        self.model, self.solver = model, solver
        self.weights = None if weights is None else check_simplex("weights", weights, ndim=1)
        self.sample_weights = "ones" if weights is None and sample_weights is None else sample_weights
        self.radius = None if radius is None else check_real("radius", radius, low=0, low_open=True)
        self.backend = check_choice("backend", backend, ("auto", "batched", "loop"))
        self._slots: tuple | None = None

    # -- lambda aligned with the memory slots: (T, K, C_max)
    def slot_weights(self, data: StreamDataset) -> torch.Tensor:
        r""":math:`\lambda` aligned with ``data.memory_index``: shape ``(T, K, C_max)``, float64, 0 on padding."""
        if self._slots is not None and self._slots[0] is data:
            return self._slots[1]
        if not isinstance(data, StreamDataset):
            raise TypeError(f"data must be a StreamDataset (fedlab.streams.data), got {type(data).__name__}.")
        count = data.memory_count.to(torch.float64)
        valid = torch.arange(data.memory_index.shape[2]).view(1, 1, -1) < data.memory_count.unsqueeze(2)
        if self.weights is not None:
            if len(self.weights) != data.n_clients:
                raise ValueError(f"weights must have one entry per client ({data.n_clients}), got {len(self.weights)}.")
            p = torch.as_tensor(self.weights, dtype=torch.float64)
            per = torch.where(count > 0, p.view(1, -1) / count.clamp_min(1), torch.zeros(()))
            slots = valid * per.unsqueeze(2)
        else:
            lam = self.sample_weights
            if isinstance(lam, str):
                lam = sample_weight_schedule(data, lam)
            if len(lam) != data.n_clients:
                raise ValueError(f"sample_weights must hold one (T, N_m) array per client ({data.n_clients}).")
            slots = torch.zeros(data.memory_index.shape, dtype=torch.float64)
            for k, w in enumerate(lam):
                w = check_array(f"sample_weights[{k}]", w, shape=(data.horizon, int(data.train.n[k])),
                                nonnegative=True)
                slots[:, k] = torch.gather(torch.as_tensor(w, dtype=torch.float64), 1,
                                           data.memory_index[:, k].clamp_max(max(w.shape[1] - 1, 0)))
            slots = slots * valid
        if float(slots.sum()) <= 0:
            raise ValueError("the sample weights give no weight to any sample in memory.")
        self._slots = (data, slots)  # keeps a reference: the cache cannot outlive its data set
        return slots

    def init(self, data: StreamDataset, seed: int) -> StreamState:
        self.slot_weights(data)  # validate early
        params = initial_params(self.model, seed)
        return StreamState(params, {k: v.clone() for k, v in params.items()}, 0.0, 0)

    def _project(self, params: Params) -> Params:
        if self.radius is None:
            return params
        norm = torch.sqrt(sum(v.double().pow(2).sum() for v in params.values()))
        scale = min(1.0, self.radius / max(float(norm), 1e-30))
        return {k: v * scale for k, v in params.items()}

    def round(self, state: StreamState, data: StreamDataset, seed: int) -> tuple[StreamState, dict]:
        t = state.round
        if t >= data.horizon:
            raise ValueError(f"round {t} is beyond the streams' horizon T={data.horizon}.")
        lam = self.slot_weights(data)[t]
        mass = lam.sum(1)
        total = float(mass.sum())
        active = torch.nonzero(mass > 0).flatten()
        if len(active) == 0:
            return StreamState(state.params, state.avg_params, state.avg_mass, t + 1), {
                "participants": [], "p_round": [], "mass": 0.0, "local_loss": float("nan")}
        count = data.memory_count[t].to(torch.float64)
        w = (lam * (count / mass.clamp_min(1e-300)).unsqueeze(1)).to(torch.float32)
        memory = data.memory(t, weight=w)
        if len(active) < data.n_clients:
            memory = memory.select(active)
        p_t = (mass[active] / total).numpy()
        new, loss, extra = self._local(state, memory, active, p_t, seed=seed, t=t)
        params = self._project(weighted_average(new, p_t))
        avg_mass = state.avg_mass + total
        frac = total / avg_mass
        avg = {k: state.avg_params[k] + frac * (state.params[k] - state.avg_params[k]) for k in params}
        info = {"participants": active.tolist(), "p_round": [float(v) for v in p_t], "mass": total,
                "local_loss": float(loss.mean())}
        return replace(state, params=params, avg_params=avg, avg_mass=avg_mass, round=t + 1, **extra), info

    def _local(self, state: StreamState, memory, active: torch.Tensor, p_t: np.ndarray, *, seed: int,
               t: int) -> tuple[Params, torch.Tensor, dict]:
        """E local SGD steps of the active clients from the global model: (stacked params, losses, state updates)."""
        start = broadcast(state.params, len(active))
        new, loss = local_sgd(self.model, start, memory, self.solver, key=(seed, t, Stream.LOCAL), anchor=start,
                              backend=self.backend)
        return new, loss, {}

    def evaluate(self, state: StreamState, data: StreamDataset) -> dict[str, np.ndarray]:
        k = data.n_clients
        out = evaluate(self.model, broadcast(state.params, k), data.train, data.test)
        avg = evaluate(self.model, broadcast(state.avg_params, k), data.train, data.test)
        out.update({f"{name}_avg": v for name, v in avg.items()})
        return out


@dataclass(frozen=True)
class ScaffoldStreamState(StreamState):
    r""":class:`StreamState` plus SCAFFOLD's control variates.

    Attributes
    ----------
    control : dict of Tensor
        The server's :math:`c`, the :math:`p^{(t)}`-weighted average of the clients' controls.
    client_controls : dict of Tensor, stacked ``(M, ...)``
        Each client's :math:`c_m` (zero until the client first trains).
    """

    control: Params | None = None
    client_controls: Params | None = None


class StreamingScaffold(StreamingFedAvg):
    r"""Algorithm 13 with SCAFFOLD's local steps (Karimireddy et al., 2020; thesis §4.3.4.7).

    Each local step corrects the minibatch gradient of the weighted local objective (4.3) by the drift
    :math:`c - c_m`: :math:`y \leftarrow y - \eta\,(g_m(y) - c_m + c)`. After :math:`E` steps the client sets
    :math:`c_m^+ = c_m - c + (	heta^{(t)} - y)/(E\eta)` (option II of the paper), the server aggregates the models
    with :math:`p^{(t)}` as Algorithm 13 does and sets :math:`c = \sum_m p_m^{(t)} c_m^+` over the clients that
    trained (the drift of the weighted objective (4.4)). The steps are the engine's ``local_sgd`` one at a time,
    so the solver must be plain SGD (no momentum, weight decay or proximal term).

    Parameters are those of :class:`StreamingFedAvg`.
    """

    def __init__(self, model: Model, solver: LocalSGD, **kwargs) -> None:
        super().__init__(model, solver, **kwargs)
        if solver.momentum or solver.weight_decay or solver.prox_mu:
            raise ValueError("StreamingScaffold needs a plain SGD solver (momentum, weight_decay and prox_mu at 0), "
                             f"got {solver!r}.")
        self._step = replace(solver, local_steps=1)

    def init(self, data: StreamDataset, seed: int) -> ScaffoldStreamState:
        base = super().init(data, seed)
        zeros = {k: torch.zeros_like(v) for k, v in base.params.items()}
        return ScaffoldStreamState(base.params, base.avg_params, base.avg_mass, base.round, control=zeros,
                                   client_controls=broadcast(zeros, data.n_clients))

    def _local(self, state: ScaffoldStreamState, memory, active: torch.Tensor, p_t: np.ndarray, *, seed: int,
               t: int) -> tuple[Params, torch.Tensor, dict]:
        lr, steps = self.solver.lr, self.solver.local_steps
        own = {k: v[active] for k, v in state.client_controls.items()}
        drift = {k: state.control[k].unsqueeze(0) - own[k] for k in own}
        start = broadcast(state.params, len(active))
        y, losses = start, []
        for e in range(steps):
            y, loss = local_sgd(self.model, y, memory, self._step, key=(seed, t, Stream.LOCAL, e),
                                backend=self.backend)
            y = {k: v - lr * drift[k] for k, v in y.items()}
            losses.append(loss)
        updated = {k: own[k] - state.control[k].unsqueeze(0) + (start[k] - y[k]) / (steps * lr) for k in own}
        controls = {k: v.clone() for k, v in state.client_controls.items()}
        for k in controls:
            controls[k][active] = updated[k]
        return y, torch.stack(losses).mean(0), {"control": weighted_average(updated, p_t),
                                               "client_controls": controls}


METHODS.register("streaming_fedavg", StreamingFedAvg, chapter="streams", label="Streaming FedAvg (Algorithm 13)")
METHODS.register("streaming_fedprox", StreamingFedAvg, chapter="streams", solver_options={"prox_mu": 0.1},
                 label="Streaming FedProx (Algorithm 13, proximal local steps, μ = 0.1)")
METHODS.register("streaming_scaffold", StreamingScaffold, chapter="streams",
                 label="Streaming SCAFFOLD (Algorithm 13, SCAFFOLD steps)")

PRESETS = METHODS.presets("streams")
"""The chapter's methods by short name (``METHODS["streams:<name>"]``): ``PRESETS[name](model, solver, weights=p)``;
FedAvg, FedProx and SCAFFOLD inside Algorithm 13 (thesis §4.3.4.7)."""
