r"""Client availability as Markov chains: two-state chains, heterogeneous populations, traces, estimators.

Each client :math:`k` is *active* (state 1) or *inactive* (state 0) at every round, following a
two-state chain parameterised by its stationary availability :math:`\pi_k` and the second
eigenvalue :math:`\lambda_k = \lambda_2(\mathbf P_k)` (thesis §2.2.6.1 and eqs. (D.226)-(D.228)):

.. math::
    \mathbf P_k = \begin{bmatrix} 1-(1-\lambda_k)\pi_k & (1-\lambda_k)\pi_k \\
                                  (1-\lambda_k)(1-\pi_k) & \lambda_k+(1-\lambda_k)\pi_k \end{bmatrix},
    \qquad \mathbf P_k^t = \mathbf 1\rho_k^\top + \lambda_k^t(\mathbf I - \mathbf 1\rho_k^\top),

with stationary law :math:`\rho_k = (1-\pi_k, \pi_k)`. The joint process of independent clients is the
Kronecker product :math:`\mathbf P=\bigotimes_k\mathbf P_k` (§D.6.2); its correlation parameter is
:math:`\lambda(\mathbf P) = (\bar\lambda_2(\mathbf P)+1)/2 = \max_k \lambda(\mathbf P_k)` (Prop. D.27).
Clusters of clients that share one chain model spatial correlation (Fig. 2.15).

A simulated trace (rounds x clients, bool) plugs into the engine through :func:`trace_participation`
(a ``participation`` callable for ``FedAvg`` and the availability algorithms).

The chapter's data sets (CPU scale, spec §5.2), :data:`AVAILABILITY_DATASETS`:

- ``"leaf"``: LEAF Synthetic(γ, δ) [Li+20a] with N clients, 60 features, 10 classes,
  :math:`n_k=\min(\lfloor\mathrm{LogNormal}(4,1)\rfloor+50, 500)`, 80/20 split per client (:func:`leaf_federation`);
- ``"digits"``: scikit-learn's 8x8 digits (a stand-in for the thesis' MNIST) split over N clients with
  Dirichlet(ς) label proportions, 25% test per client (:func:`digits_federation`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from fedlab._rng import Stream, as_numpy_rng, derive_seed, numpy_rng
from fedlab._validation import check_array, check_bool, check_choice, check_int, check_real, check_type
from fedlab.data.digits import load_digits_arrays
from fedlab.data.partition import partition_dirichlet
from fedlab.data.synthetic import make_leaf_synthetic
from fedlab.engine import FederatedDataset
from fedlab.markov import check_transition_matrix, sample_chains, stationary_distribution

__all__ = [
    "two_state_matrix",
    "lambda_bounds",
    "stationary_distribution",
    "second_eigenvalue_modulus",
    "mixing_parameter",
    "product_chain",
    "mean_sojourn_times",
    "hitting_time",
    "simulate_availability",
    "MarkovAvailability",
    "LAYOUTS",
    "make_population",
    "make_clustered_population",
    "AvailabilityEstimator",
    "estimate_availability",
    "trace_participation",
    "AVAILABILITY_DATASETS",
    "leaf_federation",
    "digits_federation",
    "DIGITS_SPLITS",
    "SPATIAL_PI",
    "SPATIAL_LAMBDA",
    "spatial_population",
]


# ------------------------------------------------------------------------------------ two-state chains

def _check_pi(pi, name: str = "pi") -> np.ndarray:
    arr = check_array(name, pi)
    if np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name} must lie in [0, 1] (probabilities), got values in [{arr.min():.4g}, {arr.max():.4g}].")
    return arr


def lambda_bounds(pi) -> tuple[np.ndarray, np.ndarray]:
    r"""Range of :math:`\lambda_2` for which :math:`\mathbf P_k` is a stochastic matrix.

    All entries lie in [0, 1] iff :math:`\lambda \ge -\min(\pi, 1-\pi)/\max(\pi, 1-\pi)` and :math:`\lambda\le 1`.

    Parameters
    ----------
    pi : float or array (N,)
        Stationary availabilities in [0, 1].

    Returns
    -------
    low, high : arrays shaped like ``pi``
    """
    pi = _check_pi(pi)
    low = -np.minimum(pi, 1 - pi) / np.maximum(pi, 1 - pi)
    return low, np.ones_like(pi)


def _check_chain(pi, lam) -> tuple[np.ndarray, np.ndarray]:
    pi = _check_pi(pi)
    lam = check_array("lam", lam)
    if pi.ndim and lam.ndim and pi.shape != lam.shape:
        raise ValueError(f"pi and lam must have the same shape (or one be a scalar), got {pi.shape} and {lam.shape}.")
    pi, lam = np.broadcast_arrays(pi, lam)
    low, _ = lambda_bounds(pi)
    bad = (lam < low - 1e-12) | (lam > 1)
    if np.any(bad):
        i = np.flatnonzero(bad.ravel())[0]
        raise ValueError(f"lam must lie in [-min(pi,1-pi)/max(pi,1-pi), 1] for a valid chain; got lam="
                         f"{lam.ravel()[i]:.4g} with pi={pi.ravel()[i]:.4g} (lowest valid {low.ravel()[i]:.4g}).")
    return pi.astype(float), lam.astype(float)


def two_state_matrix(pi, lam) -> np.ndarray:
    r"""Transition matrix of the two-state availability chain, eq. (D.226).

    .. math::
        \mathbf P = \begin{bmatrix} 1-(1-\lambda)\pi & (1-\lambda)\pi \\ (1-\lambda)(1-\pi) & \lambda+(1-\lambda)\pi
        \end{bmatrix}, \qquad \text{rows/columns: (inactive, active)}.

    Its stationary law is :math:`(1-\pi, \pi)` and its eigenvalues are 1 and :math:`\lambda`.

    Parameters
    ----------
    pi : float or array (N,)
        Stationary availability :math:`\pi_k \in [0, 1]`.
    lam : float or array (N,)
        Second eigenvalue :math:`\lambda_k`, in the range of :func:`lambda_bounds`.

    Returns
    -------
    array (2, 2) or (N, 2, 2)
    """
    pi, lam = _check_chain(pi, lam)
    up = (1 - lam) * pi                      # P(0 -> 1)
    down = (1 - lam) * (1 - pi)              # P(1 -> 0)
    P = np.stack([np.stack([1 - up, up], -1), np.stack([down, 1 - down], -1)], -2)
    return np.clip(P, 0.0, 1.0)


def second_eigenvalue_modulus(P) -> np.ndarray | float:
    r"""Second-largest eigenvalue modulus :math:`\bar\lambda_2(\mathbf P) = \max(|\lambda_2|, |\lambda_M|)` (§2.2.3.1).

    Parameters
    ----------
    P : array (M, M) or (N, M, M)

    Returns
    -------
    float or array (N,)
    """
    P = check_transition_matrix(P)
    mods = np.sort(np.abs(np.linalg.eigvals(P)), axis=-1)
    out = mods[..., -2] if P.shape[-1] > 1 else np.zeros(P.shape[:-2])
    return float(out) if np.ndim(out) == 0 else out


def mixing_parameter(P) -> np.ndarray | float:
    r"""Correlation parameter :math:`\lambda(\mathbf P) = (\bar\lambda_2(\mathbf P)+1)/2 \in [1/2, 1)`, used in eq. (2.18).

    The closer to 1, the slower the chain mixes (the more correlated the availability).
    """
    return (second_eigenvalue_modulus(P) + 1) / 2


def product_chain(matrices) -> np.ndarray:
    r"""Joint chain of independent clients :math:`\mathbf P=\bigotimes_k\mathbf P_k` (§D.6.2, Props. D.24-D.27).

    Parameters
    ----------
    matrices : sequence of arrays (m_k, m_k), or array (N, m, m)
        At most 2**12 joint states.

    Returns
    -------
    array (M, M) with :math:`M=\prod_k m_k`; state index in row-major (first client most significant) order.
    """
    if isinstance(matrices, (str, bytes)) or not isinstance(matrices, (list, tuple, np.ndarray)):
        raise TypeError(f"matrices must be a sequence of transition matrices, got {type(matrices).__name__}.")
    mats = [check_transition_matrix(m, name=f"matrices[{i}]") for i, m in enumerate(matrices)]
    if not mats:
        raise ValueError("matrices must hold at least one transition matrix.")
    size = int(np.prod([m.shape[0] for m in mats]))
    if size > 4096:
        raise ValueError(f"the product chain would have {size} states; product_chain is limited to 4096.")
    out = mats[0]
    for m in mats[1:]:
        out = np.kron(out, m)
    return out


def mean_sojourn_times(pi, lam) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean lengths of active and inactive runs: :math:`1/(1-p_{11})` and :math:`1/(1-p_{00})` (§1.3 of the spec).

    With :math:`p_{11} = \lambda+(1-\lambda)\pi` and :math:`p_{00} = 1-(1-\lambda)\pi`:
    active runs last :math:`1/((1-\lambda)(1-\pi))` and inactive runs :math:`1/((1-\lambda)\pi)` rounds.
    """
    pi, lam = _check_chain(pi, lam)
    with np.errstate(divide="ignore"):
        return 1.0 / ((1 - lam) * (1 - pi)), 1.0 / ((1 - lam) * pi)


def hitting_time(pi, lam) -> np.ndarray:
    r"""Expected rounds for an inactive client to become active, :math:`1/((1-\lambda_k)\pi_k)` (§2.2.6.2, Fig. 2.14)."""
    return mean_sojourn_times(pi, lam)[1]


# --------------------------------------------------------------------------------------- simulation

def simulate_availability(pi, lam, rounds: int, *, rng=None, clusters=None, initial=None) -> np.ndarray:
    r"""Simulate who is available at each round: a boolean trace of shape ``(rounds, N)``.

    Chain :math:`c` starts in its stationary law (:math:`s_0\sim\mathrm{Bernoulli}(\pi_c)`, Assumption 3) and
    moves with :math:`P(s_{t+1}=1\mid s_t=0)=(1-\lambda_c)\pi_c`,
    :math:`P(s_{t+1}=1\mid s_t=1)=\lambda_c+(1-\lambda_c)\pi_c` (D.226). Client :math:`k` follows chain
    ``clusters[k]`` (default: its own chain), so clients in one cluster are active together. Sampled by
    :func:`fedlab.markov.sample_chains` with the uniforms ``rng.random((rounds + 1, C))``, one per round and chain.

    Parameters
    ----------
    pi, lam : arrays (C,)
        Per-chain stationary availability and second eigenvalue.
    rounds : int
        Number of rounds T (>= 0).
    rng : numpy Generator, int or None
    clusters : array of int (N,), optional
        Chain of each client (values in [0, C)).
    initial : bool array (C,), optional
        Initial states instead of stationary draws.

    Returns
    -------
    bool array (rounds, N)
    """
    pi, lam = _check_chain(np.atleast_1d(pi), np.atleast_1d(lam))
    rounds = check_int("rounds", rounds, low=0)
    rng = as_numpy_rng(rng)
    clusters = _check_clusters(clusters, len(pi))
    u = rng.random((rounds + 1, len(pi)))
    # states relabelled 0 = active, 1 = inactive, so that the inverse CDF reads "active iff u < P(-> active)"
    stay_on = np.clip(lam + (1 - lam) * pi, 0.0, 1.0)
    turn_on = np.clip((1 - lam) * pi, 0.0, 1.0)
    P = np.stack([np.stack([stay_on, 1 - stay_on], -1), np.stack([turn_on, 1 - turn_on], -1)], -2)
    if initial is None:
        first = dict(law=np.stack([pi, 1 - pi], -1))
    else:
        first = dict(start=np.where(_check_mask("initial", initial, (len(pi),)), 0, 1))
    states = sample_chains(P, rounds, uniforms=u[:rounds].T, **first)
    return (states == 0).T[:, clusters]


def _check_mask(name: str, value, shape: tuple) -> np.ndarray:
    """A boolean array of the given shape (True/False flags, not numbers)."""
    arr = np.asarray(value)
    if arr.dtype != bool or arr.shape != shape:
        raise TypeError(f"{name} must be a bool array of shape {shape}, got {arr.dtype} {arr.shape}.")
    return arr


def _check_clusters(clusters, n_chains: int) -> np.ndarray:
    if clusters is None:
        return np.arange(n_chains)
    arr = np.asarray(clusters)
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or arr.size == 0:
        raise TypeError(f"clusters must be a 1-D integer array, got {arr.dtype} array of shape {arr.shape}.")
    if arr.min() < 0 or arr.max() >= n_chains:
        raise ValueError(f"clusters must take values in [0, {n_chains}), got [{arr.min()}, {arr.max()}].")
    return arr


@dataclass(frozen=True, eq=False)
class MarkovAvailability:
    r"""A population of clients whose availability follows independent two-state chains (or shared cluster chains).

    Attributes
    ----------
    pi, lam : arrays (C,)
        Stationary availability and second eigenvalue of each chain.
    clusters : int array (N,)
        Chain followed by each client (identity when every client has its own chain).
    group : int array (N,)
        Group label of each client (e.g. "more available"), for plots and cumulative weights.
    group_names : tuple of str
    """

    pi: np.ndarray
    lam: np.ndarray
    clusters: np.ndarray | None = None
    group: np.ndarray | None = None
    group_names: tuple = ()

    def __post_init__(self) -> None:
        pi, lam = _check_chain(np.atleast_1d(self.pi), np.atleast_1d(self.lam))
        if pi.ndim != 1:
            raise ValueError(f"pi and lam must be 1-D, got shape {pi.shape}.")
        clusters = _check_clusters(self.clusters, len(pi))
        group = np.zeros(len(clusters), dtype=int) if self.group is None else np.asarray(self.group)
        if group.shape != clusters.shape or group.dtype.kind not in "iu" or group.min() < 0:
            raise ValueError(f"group must hold one label >= 0 per client ({len(clusters)}), got {group.dtype} "
                             f"{group.shape}.")
        names = check_type("group_names", self.group_names, (tuple, list))
        if names and (len(names) != group.max() + 1 or not all(isinstance(x, str) for x in names)):
            raise ValueError(f"group_names must name the {group.max() + 1} groups, got {names!r}.")
        object.__setattr__(self, "pi", pi)
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "clusters", clusters)
        object.__setattr__(self, "group", group.astype(int))
        object.__setattr__(self, "group_names", tuple(self.group_names) or tuple(f"group {g}" for g in
                                                                                 range(group.max() + 1)))

    @property
    def n_clients(self) -> int:
        return int(len(self.clusters))

    @property
    def client_pi(self) -> np.ndarray:
        """Stationary availability of each client, shape (N,)."""
        return self.pi[self.clusters]

    @property
    def client_lambda(self) -> np.ndarray:
        """Second eigenvalue of each client's chain, shape (N,)."""
        return self.lam[self.clusters]

    def transition_matrices(self) -> np.ndarray:
        """Per-chain matrices, shape (C, 2, 2)."""
        return two_state_matrix(self.pi, self.lam)

    def mixing(self) -> np.ndarray:
        r"""Per-client :math:`\lambda(\mathbf P_k) = (|\lambda_k|+1)/2`, shape (N,)."""
        return (np.abs(self.client_lambda) + 1) / 2

    def simulate(self, rounds: int, rng=None) -> np.ndarray:
        """Boolean trace ``(rounds, N)`` started in stationarity; see :func:`simulate_availability`."""
        return simulate_availability(self.pi, self.lam, rounds, rng=rng, clusters=self.clusters)

    def group_mask(self, name: str) -> np.ndarray:
        """Boolean mask of the clients in the group called ``name``."""
        check_choice("name", name, self.group_names)
        return self.group == self.group_names.index(name)


def _largest_remainder(n: int, fractions) -> np.ndarray:
    raw = np.asarray(fractions, float) * n
    counts = np.floor(raw).astype(int)
    order = np.argsort(-(raw - counts), kind="stable")
    counts[order[: n - counts.sum()]] += 1
    return counts


# layout -> list of (name, fraction, availability class (+1 more / -1 less), correlated?)
LAYOUTS = {
    "code3": [("more available", 0.5, +1, False),
              ("less available, correlated", 0.25, -1, True),
              ("less available, weakly correlated", 0.25, -1, False)],
    "thesis4": [("more available, correlated", 0.25, +1, True),
                ("more available, weakly correlated", 0.25, +1, False),
                ("less available, correlated", 0.25, -1, True),
                ("less available, weakly correlated", 0.25, -1, False)],
}


def make_population(n_clients: int, *, g: float = 0.4, nu: float = 0.9, eps: float = 1e-2,
                    layout: str = "code3", rng=None, shuffle: bool = True) -> MarkovAvailability:
    r"""The heterogeneous population of the thesis experiments (§2.2.6.1, §D.6.3).

    "More available" clients have :math:`\pi_k = 1/2+g`, "less available" :math:`1/2-g`; "correlated"
    clients have :math:`\lambda_k=\nu`, "weakly correlated" ones :math:`\lambda_k\sim\mathcal N(0,\varepsilon^2)`
    (clipped to the valid range). ``layout="thesis4"`` is the text's four equal groups; ``"code3"`` the
    authors' code and Fig. 2.11d: 50% (more, weak), 25% (less, correlated), 25% (less, weak).

    Parameters
    ----------
    n_clients : int
        At least the layout's number of groups (3 or 4).
    g : float in (0, 1/2)
        Availability gap (0.4 gives :math:`\pi\in\{0.9, 0.1\}`).
    nu : float in [0, 1)
        Correlation of the correlated groups.
    eps : float >= 0
        Standard deviation of :math:`\lambda` in the weakly correlated groups.
    layout : {"code3", "thesis4"}
    rng : numpy Generator, int or None
    shuffle : bool
        Assign groups to clients by a random permutation (otherwise in blocks).

    Returns
    -------
    MarkovAvailability
    """
    n = check_int("n_clients", n_clients, low=1)
    g = check_real("g", g, low=0, high=0.5, low_open=True, high_open=True)
    nu = check_real("nu", nu, low=0, high=1, high_open=True)
    eps = check_real("eps", eps, low=0)
    shuffle = check_bool("shuffle", shuffle)
    spec = LAYOUTS[check_choice("layout", layout, LAYOUTS)]
    if n < len(spec):
        raise ValueError(f"n_clients must be at least the {len(spec)} groups of layout {layout!r}, got {n}.")
    rng = as_numpy_rng(rng)
    counts = _largest_remainder(n, [s[1] for s in spec])
    group = np.repeat(np.arange(len(spec)), counts)
    if shuffle:
        group = group[rng.permutation(n)]
    cls = np.array([s[2] for s in spec])[group]
    correlated = np.array([s[3] for s in spec])[group]
    pi = 0.5 + g * cls
    lam = np.where(correlated, nu, eps * rng.standard_normal(n))
    low, _ = lambda_bounds(pi)
    lam = np.clip(lam, low, 1 - 1e-12)
    return MarkovAvailability(pi, lam, None, group, tuple(s[0] for s in spec))


def make_clustered_population(clients_per_cluster: int, pi, lam) -> MarkovAvailability:
    r"""Spatially correlated clients (§2.2.6.2, Fig. 2.15): cluster :math:`c` shares one chain :math:`(\pi_c,\lambda_c)`.

    Clients ``c*m .. (c+1)*m - 1`` belong to cluster ``c``; the group label is the cluster.
    """
    m = check_int("clients_per_cluster", clients_per_cluster, low=1)
    pi, lam = _check_chain(np.atleast_1d(pi), np.atleast_1d(lam))
    clusters = np.repeat(np.arange(len(pi)), m)
    return MarkovAvailability(pi, lam, clusters, clusters.copy(), tuple(f"cluster {c}" for c in range(len(pi))))


# --------------------------------------------------------------------------------------- estimation

@dataclass(frozen=True, eq=False)
class AvailabilityEstimator:
    r"""Bayesian estimates of :math:`\pi_k` and :math:`\lambda_k` from observed activity (§2.2.4.2).

    .. math::
        \hat\pi_k = \frac{\sum_{s\le t}\mathbb 1\{k\in\mathcal A_s\}+n_k}{t+n_k+m_k},\qquad
        \hat p_{01} = \frac{n_{01}+a_0}{n_{00}+n_{01}+a_0+b_0},\quad
        \hat p_{10} = \frac{n_{10}+a_1}{n_{10}+n_{11}+a_1+b_1},\quad
        \hat\lambda_k = 1-\hat p_{01}-\hat p_{10},

    i.e. posterior means under Beta priors, with :math:`n_{ab}` the counted transitions :math:`a\to b`.
    Immutable: :meth:`observe` returns a new estimator.

    Attributes
    ----------
    t : int
        Rounds observed.
    active : array (N,)
        Rounds in which each client was active.
    transitions : array (N, 2, 2)
        ``transitions[k, a, b]`` = number of observed moves from state a to state b.
    last : bool array (N,) or None
        Last observed state.
    prior : (n, m)
        Beta prior of :math:`\pi` (pseudo-counts of active, inactive).
    row_prior : ((a0, b0), (a1, b1))
        Beta priors of :math:`p_{01}` and :math:`p_{10}`.
    """

    t: int
    active: np.ndarray
    transitions: np.ndarray
    last: np.ndarray | None = None
    prior: tuple = (1.0, 1.0)
    row_prior: tuple = ((1.0, 1.0), (1.0, 1.0))

    def __post_init__(self) -> None:
        check_int("t", self.t, low=0)
        active = check_array("active", self.active, ndim=1, nonnegative=True)
        n = len(active)
        counts = check_array("transitions", self.transitions, shape=(n, 2, 2), nonnegative=True)
        if np.any(active != np.round(active)) or np.any(counts != np.round(counts)):
            raise ValueError("active and transitions must hold counts (whole numbers).")
        if self.last is not None:
            _check_mask("last", self.last, (n,))
        check_priors(self.prior, self.row_prior)

    @classmethod
    def empty(cls, n_clients: int, *, prior=(1.0, 1.0), row_prior=((1.0, 1.0), (1.0, 1.0))) -> "AvailabilityEstimator":
        """An estimator that has observed nothing (estimates equal the prior means)."""
        n = check_int("n_clients", n_clients, low=1)
        prior, row_prior = check_priors(prior, row_prior)
        return cls(0, np.zeros(n), np.zeros((n, 2, 2)), None, prior, row_prior)

    @property
    def n_clients(self) -> int:
        return int(len(self.active))

    def observe(self, mask) -> "AvailabilityEstimator":
        """Add one round: ``mask`` (N,) bool, True where the client is available."""
        mask = np.asarray(mask)
        if mask.shape != (self.n_clients,):
            raise ValueError(f"mask must have shape ({self.n_clients},), got {mask.shape}.")
        mask = mask.astype(bool)
        transitions = self.transitions
        if self.last is not None:
            transitions = transitions.copy()
            transitions[np.arange(self.n_clients), self.last.astype(int), mask.astype(int)] += 1  # one cell per client
        return self._derived(self.t + 1, self.active + mask, transitions, mask)

    def _derived(self, t: int, active: np.ndarray, transitions: np.ndarray, last: np.ndarray) -> "AvailabilityEstimator":
        """An estimator with this one's priors and counts derived from its checked ones (not checked again: the
        per-round :meth:`observe` would spend more time on the checks than on the counting)."""
        out = object.__new__(AvailabilityEstimator)
        for name, value in (("t", t), ("active", active), ("transitions", transitions), ("last", last),
                            ("prior", self.prior), ("row_prior", self.row_prior)):
            object.__setattr__(out, name, value)
        return out

    def observe_trace(self, trace) -> "AvailabilityEstimator":
        """Add every round of a trace ``(T, N)`` at once (same result as T calls of :meth:`observe`)."""
        trace = np.asarray(trace)
        if trace.ndim != 2 or trace.shape[1] != self.n_clients:
            raise ValueError(f"trace must have shape (T, {self.n_clients}), got {trace.shape}.")
        if len(trace) == 0:
            return self
        trace = trace.astype(bool)
        seq = trace if self.last is None else np.vstack([self.last[None], trace])
        a, b = seq[:-1].astype(int), seq[1:].astype(int)
        transitions = self.transitions.copy()
        for i in (0, 1):
            for j in (0, 1):
                transitions[:, i, j] += ((a == i) & (b == j)).sum(0)
        return AvailabilityEstimator(self.t + len(trace), self.active + trace.sum(0), transitions, trace[-1],
                                     self.prior, self.row_prior)

    @property
    def pi_hat(self) -> np.ndarray:
        r""":math:`\hat\pi_k`, shape (N,)."""
        n, m = self.prior
        return (self.active + n) / (self.t + n + m)

    @property
    def transition_hat(self) -> np.ndarray:
        r""":math:`\hat{\mathbf P}_k`, shape (N, 2, 2)."""
        (a0, b0), (a1, b1) = self.row_prior
        c = self.transitions
        p01 = (c[:, 0, 1] + a0) / (c[:, 0].sum(1) + a0 + b0)
        p10 = (c[:, 1, 0] + a1) / (c[:, 1].sum(1) + a1 + b1)
        return np.stack([np.stack([1 - p01, p01], -1), np.stack([p10, 1 - p10], -1)], -2)

    @property
    def lambda_hat(self) -> np.ndarray:
        r""":math:`\hat\lambda_k = \hat p_{00}+\hat p_{11}-1`, the second eigenvalue of :math:`\hat{\mathbf P}_k`, shape (N,)."""
        P = self.transition_hat
        return P[:, 0, 0] + P[:, 1, 1] - 1


def check_priors(prior, row_prior=((1.0, 1.0), (1.0, 1.0))) -> tuple[tuple, tuple]:
    r"""Beta pseudo-counts: ``prior`` (n, m) of :math:`\pi` and ``row_prior`` ((a0, b0), (a1, b1)) of the transition
    rows, non-negative with positive sums; returned as tuples of floats."""
    prior = tuple(float(v) for v in check_array("prior", prior, shape=(2,), nonnegative=True))
    rp = check_array("row_prior", row_prior, shape=(2, 2), nonnegative=True)
    if prior[0] + prior[1] <= 0 or min(rp[0].sum(), rp[1].sum()) <= 0:
        raise ValueError("prior and row_prior pseudo-counts must have positive sums.")
    return prior, tuple(map(tuple, rp.tolist()))


def check_trace(trace, *, nonempty: bool = True, name: str = "trace") -> np.ndarray:
    """An availability trace: a bool (or 0/1) array (T, N) with N >= 1 (and T >= 1 when ``nonempty``)."""
    arr = np.asarray(trace)
    if arr.ndim != 2 or arr.dtype.kind not in "biu" or arr.shape[1] == 0 or (nonempty and arr.shape[0] == 0) or \
            not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must be a bool array (T, N) of availabilities, got {arr.dtype} {arr.shape}.")
    return arr.astype(bool)


def estimate_availability(trace, *, prior=(1.0, 1.0), row_prior=((1.0, 1.0), (1.0, 1.0))) -> AvailabilityEstimator:
    """Estimator after observing a whole trace ``(T, N)``: read ``.pi_hat``, ``.lambda_hat``, ``.transition_hat``."""
    trace = check_trace(trace, nonempty=False)
    return AvailabilityEstimator.empty(trace.shape[1], prior=prior, row_prior=row_prior).observe_trace(trace)


def trace_participation(trace) -> Callable[[int, np.random.Generator], np.ndarray]:
    """Turn a trace ``(T, N)`` into the engine's ``participation(round, rng) -> mask`` (round ``t`` -> ``trace[t]``).

    Raises ``IndexError`` when a run asks for a round beyond the trace.
    """
    trace = np.asarray(trace)
    if trace.dtype != bool:
        raise ValueError(f"trace must be a boolean array of shape (T, N), got {trace.dtype} {trace.shape}.")
    trace = check_trace(trace, nonempty=True).copy()

    def participation(round_: int, rng=None) -> np.ndarray:
        if not 0 <= round_ < len(trace):
            raise IndexError(f"round {round_} is outside the availability trace (T={len(trace)}); simulate more rounds.")
        return trace[round_]

    participation.trace = trace
    return participation


# ------------------------------------------------------------------------------ the chapter's data sets

def leaf_federation(n_clients: int, seed: int, *, gamma: float = 0.5, delta: float = 0.5,
                    max_samples: int = 500) -> FederatedDataset:
    r"""LEAF Synthetic(γ, δ) over ``n_clients`` clients, sizes :math:`\min(\lfloor\mathrm{LogN}(4,1)\rfloor+50,` ``max_samples``:math:`)`."""
    n_clients, max_samples = check_int("n_clients", n_clients, low=1), check_int("max_samples", max_samples, low=1)
    check_real("gamma", gamma, low=0), check_real("delta", delta, low=0)
    rng = numpy_rng(seed, Stream.AVAILABILITY_DATA)
    sizes = np.minimum(rng.lognormal(4.0, 1.0, size=n_clients).astype(np.int64) + 50, max_samples)
    arrays = make_leaf_synthetic(gamma, delta, n_samples=sizes, dim=60, n_classes=10, rng=rng)
    return FederatedDataset.from_client_arrays(arrays.xs, arrays.ys, test_fraction=0.2, n_classes=10,
                                               seed=derive_seed(seed, Stream.AVAILABILITY_DATA, 1))


def digits_federation(n_clients: int, seed: int, *, dirichlet: float = 0.5, split: str = "client",
                      n_clusters: int = 10) -> FederatedDataset:
    """The 8x8 digits split over ``n_clients``, 25% test.

    ``split="client"``: Dirichlet(``dirichlet``) label proportions per client (heterogeneous everywhere);
    ``"cluster"``: Dirichlet proportions per cluster of ``n_clients / n_clusters`` consecutive clients, shared at
    random inside the cluster (homogeneous within clusters, heterogeneous across); ``"iid"``: a uniform random split
    (homogeneous everywhere). The last two are the data settings of Fig. 2.15a-b.
    """
    n_clients = check_int("n_clients", n_clients, low=1)
    check_real("dirichlet", dirichlet, low=0, low_open=True)
    check_choice("split", split, DIGITS_SPLITS)
    n_clusters = check_int("n_clusters", n_clusters, low=1)
    if split == "cluster" and n_clients % n_clusters:
        raise ValueError(f"n_clients ({n_clients}) must be a multiple of n_clusters ({n_clusters}) with split='cluster'.")
    x, y = load_digits_arrays()
    rng = numpy_rng(seed, Stream.AVAILABILITY_DATA)
    if split == "iid":
        indices = np.array_split(rng.permutation(len(y)), n_clients)
    else:
        groups = n_clients if split == "client" else n_clusters
        min_size = max(4, min(20, len(y) // (3 * groups)))
        part = partition_dirichlet(y, groups, dirichlet, min_size=min_size, rng=rng)
        indices = part.indices if split == "client" else \
            [chunk for idx in part.indices for chunk in np.array_split(rng.permutation(idx), n_clients // n_clusters)]
    return FederatedDataset.from_client_arrays([x[i] for i in indices], [y[i] for i in indices],
                                               test_fraction=0.25, n_classes=10,
                                               seed=derive_seed(seed, Stream.AVAILABILITY_DATA, 1))


DIGITS_SPLITS = ("client", "cluster", "iid")
SPATIAL_PI = (0.9,) * 5 + (0.1,) * 5
SPATIAL_LAMBDA = (0.0,) * 5 + (0.5, 0.6, 0.7, 0.8, 0.9)
r"""Fig. 2.15's ten cluster chains: clusters 0-4 more available and uncorrelated, 5-9 rare with
:math:`\lambda_c=c/10`."""


def spatial_population(n_clients: int) -> MarkovAvailability:
    r"""The spatially correlated population of Fig. 2.15: ``n_clients`` in ten clusters of consecutive clients, each
    cluster sharing one chain (:data:`SPATIAL_PI`, :data:`SPATIAL_LAMBDA`)."""
    n_clients = check_int("n_clients", n_clients, low=10)
    if n_clients % 10:
        raise ValueError(f"n_clients must be a multiple of the 10 clusters, got {n_clients}.")
    return make_clustered_population(n_clients // 10, SPATIAL_PI, SPATIAL_LAMBDA)


AVAILABILITY_DATASETS = {"leaf": leaf_federation, "digits": digits_federation}
