r"""Markovian client data streams (paper D, Huynh et al.; spec ``dynamic.md`` part D).

Finite Markov chains (exact :math:`d(t)` and mixing time by matrix powers; the transition-matrix check, the
stationary law and the general trajectory sampler live in :mod:`fedlab.markov`), per-client two-state streams with a
controllable mixing time in three modes that share their marginals, and the paper's non-convex streaming regression
problem (§5).

Stream modes (``STREAM_MODES``), for symmetric two-state chains with flip probability p:

``"markov"``       one continuous chain per client: all T·K samples of client m are consecutive states
                   (paper §3.2, "dependent batches");
``"independent"``  each round restarts from :math:`x\sim\pi` independently of the past, samples inside a round
                   stay dependent (App. G, Fig. 7, "independent batches");
``"iid"``          every sample is independent, drawn from the *same marginal* as the ``"markov"`` stream at the
                   same time index :math:`s = tK + k`, i.e. :math:`QP^s` (equal to π for a stationary start):
                   the i.i.d. comparison with identical marginals.

TV distances use the L1 convention of paper D (:func:`fedlab.markovian.bounds.tv_l1`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import minimize

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_choice, check_int, check_real, check_simplex
from fedlab.markovian.bounds import tv_l1
from fedlab.markov import check_transition_matrix, sample_chains, stationary_distribution

__all__ = [
    "check_transition_matrix",
    "flip_matrix",
    "stationary_distribution",
    "state_marginals",
    "distance_to_stationarity",
    "mixing_time",
    "flip_prob_from_mixing_time",
    "FLIP_MAPPINGS",
    "STREAM_MODES",
    "STARTS",
    "two_state_streams",
    "stream_marginals",
    "MarkovRegression",
    "make_markov_regression",
    "MarkovStreams",
    "markov_streams",
]

STREAM_MODES = ("markov", "independent", "iid")
STARTS = ("state0", "stationary")
FLIP_MAPPINGS = ("inverse", "exact")


# ------------------------------------------------------------------------------ chains

def flip_matrix(flip_prob: float, back_prob: float | None = None) -> np.ndarray:
    """Two-state transition matrix ``[[1-p, p], [q, 1-q]]``; ``q = p`` (symmetric chain) by default."""
    p = check_real("flip_prob", flip_prob, low=0, high=1)
    q = p if back_prob is None else check_real("back_prob", back_prob, low=0, high=1)
    return np.array([[1.0 - p, p], [q, 1.0 - q]])


def _initial(init, s: int, P: np.ndarray) -> np.ndarray:
    if isinstance(init, str):
        check_choice("init", init, ("stationary",))
        return stationary_distribution(P)
    if isinstance(init, (int, np.integer)) and not isinstance(init, bool):
        check_int("init", init, low=0, high=s - 1)
        q = np.zeros(s)
        q[int(init)] = 1.0
        return q
    q = check_array("init", init, ndim=1, shape=(s,), nonnegative=True)
    if abs(q.sum() - 1.0) > 1e-6:
        raise ValueError(f"init must be a probability vector over the {s} states, got sum {q.sum():.6g}.")
    return q


def state_marginals(P, init, n_steps: int) -> np.ndarray:
    """Exact marginal laws :math:`QP^s` for s = 0..n_steps-1, shape (n_steps, S).

    ``init``: a state index, a probability vector, or ``"stationary"``.
    """
    P = check_transition_matrix(P)
    n = check_int("n_steps", n_steps, low=1)
    q = _initial(init, P.shape[0], P)
    out = np.empty((n, P.shape[0]))
    for s in range(n):
        out[s] = q
        q = q @ P
    return out


def distance_to_stationarity(P, t_max: int) -> np.ndarray:
    r"""Exact :math:`d(t) = \max_x \|P^t(x,\cdot)-\pi\|_{TV}` (L1 convention) for t = 0..t_max, by matrix powers."""
    P = check_transition_matrix(P)
    t_max = check_int("t_max", t_max, low=0)
    pi = stationary_distribution(P)
    out = np.empty(t_max + 1)
    pt = np.eye(P.shape[0])
    for t in range(t_max + 1):
        out[t] = tv_l1(pt, np.broadcast_to(pi, pt.shape)).max()
        pt = pt @ P
    return out


def mixing_time(P, eps: float = 0.25, t_max: int = 100_000) -> int:
    r"""Mixing time :math:`\tau(\varepsilon) = \inf\{t\ge1 : d(t)\le\varepsilon\}` (paper D, Def. 3.3, L1 TV).

    Computed exactly by repeated squaring then bisection on the monotone :math:`d(t)`.

    Raises ``ValueError`` when :math:`d(t) > \varepsilon` up to ``t_max`` (e.g. a periodic chain).
    """
    P = check_transition_matrix(P)
    eps = check_real("eps", eps, low=0, high=2, low_open=True, high_open=True)
    t_max = check_int("t_max", t_max, low=1)
    pi = stationary_distribution(P)

    def d(pt):  # a 1e-12 slack so that d(t) = eps exactly (e.g. p = 1/4, t = 2) counts as mixed
        return tv_l1(pt, np.broadcast_to(pi, pt.shape)).max() - 1e-12

    powers = {1: P.copy()}
    t, pt = 1, P.copy()
    while d(pt) > eps:
        if 2 * t > t_max:
            raise ValueError(f"the chain does not mix to TV {eps} within t_max = {t_max} steps (periodic or too slow).")
        pt = pt @ pt
        t *= 2
        powers[t] = pt
    if t == 1:
        return 1
    # d(t/2) > eps >= d(t): bisect with the stored powers P^(2^j)
    lo, p_lo = t // 2, powers[t // 2]
    step = t // 4
    while step >= 1:
        cand = p_lo @ powers[step]
        if d(cand) > eps:
            lo, p_lo = lo + step, cand
        step //= 2
    return lo + 1


def flip_prob_from_mixing_time(mixing_time, mapping: str = "inverse") -> float | np.ndarray:
    r"""Flip probability of the symmetric two-state chain for a target mixing time :math:`\tau_m`.

    ``"inverse"``: :math:`p = 1/\tau_m` (the paper's "mixing time Θ(1/p)", spec D.5.6 default; the exact
    :math:`\tau(1/4)` of that chain is then :math:`\approx 0.69\,\tau_m`);
    ``"exact"``: the p with :math:`|1-2p|^{\tau_m} = 1/4`, i.e. :math:`p = (1-4^{-1/\tau_m})/2`, whose exact
    :math:`\tau(1/4)` equals :math:`\tau_m`.
    """
    check_choice("mapping", mapping, FLIP_MAPPINGS)
    tau = check_array("mixing_time", mixing_time)
    if np.any(tau < 1):
        raise ValueError(f"mixing_time must be >= 1, got {tau}.")
    p = np.minimum(1.0 / tau, 0.5) if mapping == "inverse" else (1.0 - 4.0 ** (-1.0 / tau)) / 2.0
    return float(p) if p.ndim == 0 else p


# ------------------------------------------------------------------------------ client streams

def _check_flip(flip_prob, n_clients: int) -> np.ndarray:
    p = check_array("flip_prob", flip_prob)
    if p.ndim > 1 or (p.ndim == 1 and p.shape[0] != n_clients):
        raise ValueError(f"flip_prob must be a scalar or have shape ({n_clients},), got {p.shape}.")
    if np.any(p <= 0) or np.any(p >= 1):
        raise ValueError(f"flip_prob must lie in (0, 1), got {p}.")
    return np.broadcast_to(p, (n_clients,)).astype(float)


def stream_marginals(flip_prob, n_steps: int, start: str = "state0") -> np.ndarray:
    r"""Probability that a symmetric two-state stream is in state 1 at times s = 0..n_steps-1.

    :math:`(1-(1-2p)^s)/2` from state 0, 1/2 from the stationary law. ``flip_prob`` scalar or (M,): output
    (n_steps,) or (n_steps, M).
    """
    check_choice("start", start, STARTS)
    p = check_array("flip_prob", flip_prob)
    if np.any(p <= 0) or np.any(p >= 1):
        raise ValueError(f"flip_prob must lie in (0, 1), got {p}.")
    n = check_int("n_steps", n_steps, low=1)
    s = np.arange(n).reshape((n,) + (1,) * p.ndim)
    if start == "stationary":
        return np.full(s.shape[:1] + p.shape, 0.5)
    return (1.0 - (1.0 - 2.0 * p) ** s) / 2.0


_SWAP = np.array([[0.0, 1.0], [1.0, 0.0]])


def _flip_chains(p: np.ndarray, u_flip: np.ndarray, u_start: np.ndarray | None) -> np.ndarray:
    r"""Symmetric two-state chains, one per row of ``u_flip`` (C, n - 1), as int8 (C, n).

    The chain of flip probability p is the lazy chain :math:`(1-p)\mathbf I + p\mathbf S` of the swap
    :math:`\mathbf S`: row c flips at step t iff ``u_flip[c, t] < p[c]``. It starts in state 0, or, with
    ``u_start`` (C,), in state 1 iff ``u_start[c] < 1/2``. The sampler reads an initial uniform below 1/2 as its
    first label, so it runs on the swapped labels 1 - state (the swap is the same in both labellings).
    """
    n_chains = u_flip.shape[0]
    first = dict(start=np.ones(n_chains, dtype=np.int64)) if u_start is None else dict(law=[0.5, 0.5])
    u0 = np.zeros(n_chains) if u_start is None else u_start
    labels = sample_chains(_SWAP, u_flip.shape[1] + 1, uniforms=np.concatenate([u0[:, None], u_flip], axis=1),
                           hold=u_flip >= p[:, None], **first)
    return (1 - labels).astype(np.int8)


def two_state_streams(flip_prob, *, n_clients: int, n_rounds: int, n_local: int, mode: str = "markov",
                      start: str = "state0", rng=None) -> np.ndarray:
    r"""States of M client streams of symmetric two-state chains, shape (n_rounds, n_clients, n_local), int8.

    Client m's chain flips state with probability ``flip_prob[m]`` at each step; its stationary law is
    (1/2, 1/2) and its mixing time :math:`\tau(1/4)` is :func:`fedlab.markovian.bounds.two_state_mixing_time`.
    ``mode`` is one of ``STREAM_MODES`` (module docstring); ``start`` is ``"state0"`` (all clients start in
    state 0: a non-stationary system chain, Q ≠ π) or ``"stationary"`` (Q = π). In ``"independent"`` mode every
    round starts from π (paper App. G), so ``start`` only affects ``"markov"`` and ``"iid"``.

    Each stream is the lazy chain :math:`(1-p)\mathbf I + p\mathbf S` of the swap :math:`\mathbf S` (flip iff
    :math:`u < p`), sampled by :func:`fedlab.markov.sample_chains`; the uniforms are drawn in the order: initial
    states (stationary start or restarts), then all the flips.
    """
    m = check_int("n_clients", n_clients, low=1)
    t = check_int("n_rounds", n_rounds, low=1)
    k = check_int("n_local", n_local, low=1)
    check_choice("mode", mode, STREAM_MODES)
    check_choice("start", start, STARTS)
    p = _check_flip(flip_prob, m)
    rng = as_numpy_rng(rng)
    if mode == "iid":
        prob1 = stream_marginals(p, t * k, start)                     # (T*K, M)
        states = rng.random((t * k, m)) < prob1
        return states.reshape(t, k, m).transpose(0, 2, 1).astype(np.int8)
    if mode == "markov":
        u_start = rng.random(m) if start == "stationary" else None
        states = _flip_chains(p, rng.random((m, t * k - 1)), u_start)         # (M, T*K)
        return states.reshape(m, t, k).transpose(1, 0, 2).copy()
    u_start = rng.random((t, m)).reshape(-1)                           # independent: restart from pi every round
    return _flip_chains(np.tile(p, t), rng.random((t, m, k - 1)).reshape(t * m, k - 1), u_start).reshape(t, m, k)


# ------------------------------------------------------------------------------ regression problem

def _reg_grad(w: np.ndarray) -> np.ndarray:
    return w / (1.0 + w * w) ** 2


@dataclass(frozen=True)
class MarkovRegression:
    r"""The streaming regression of paper D §5, for M clients whose data stream visits S states.

    In state i client m observes :math:`x = w_{m,i}^\top V_{m,i} + \epsilon`, :math:`\epsilon\sim U(0, h)`, and
    the sample loss is :math:`f_m(w; i, x) = \tfrac12(w^\top V_{m,i} - x)^2 + \lambda r(w)` with the non-convex
    regulariser :math:`r(w) = \tfrac12\sum_j w_j^2/(1+w_j^2)`, :math:`\nabla r(w)_j = w_j/(1+w_j^2)^2`.
    The client objective is the stationary expectation :math:`F_m = \mathbb E_{\pi_m} f_m` (spec D.5.6
    assumption) and :math:`F = \frac1M\sum_m F_m` (paper eq. (1)).

    Parameters
    ----------
    features : array (M, S, d)
        :math:`V_{m,i}`.
    optima : array (M, S, d)
        :math:`w_{m,i}`.
    stat_dist : array (S,) or (M, S)
        :math:`\pi_m`.
    noise_high : float
        h, the observation noise is U(0, h) (mean h/2: not centred, as in the paper).
    reg_lambda : float
        :math:`\lambda \ge 0`.
    """

    features: np.ndarray
    optima: np.ndarray
    stat_dist: np.ndarray
    noise_high: float = 0.01
    reg_lambda: float = 0.01

    def __post_init__(self) -> None:
        v = check_array("features", self.features, ndim=3)
        w = check_array("optima", self.optima, shape=v.shape)
        pi = check_array("stat_dist", self.stat_dist, nonnegative=True)
        if pi.shape not in ((v.shape[1],), v.shape[:2]) or np.any(np.abs(pi.sum(-1) - 1) > 1e-6):
            raise ValueError(f"stat_dist must be probability vector(s) of shape ({v.shape[1]},) or {v.shape[:2]}.")
        check_real("noise_high", self.noise_high, low=0)
        check_real("reg_lambda", self.reg_lambda, low=0)
        object.__setattr__(self, "features", v)
        object.__setattr__(self, "optima", w)
        object.__setattr__(self, "stat_dist", np.broadcast_to(pi, v.shape[:2]).copy())

    @property
    def n_clients(self) -> int:
        return self.features.shape[0]

    @property
    def n_states(self) -> int:
        return self.features.shape[1]

    @property
    def dim(self) -> int:
        return self.features.shape[2]

    @property
    def targets(self) -> np.ndarray:
        r"""Noise-free observations :math:`b_{m,i} = w_{m,i}^\top V_{m,i}`, shape (M, S)."""
        return np.einsum("msd,msd->ms", self.optima, self.features)

    def sample_gradient(self, w, states, noise) -> np.ndarray:
        r"""Per-sample gradients :math:`(w_m^\top V_{m,i} - x)V_{m,i} + \lambda\nabla r(w_m)`.

        ``w`` (..., M, d): one model per client (local iterates); ``states`` (..., M) int; ``noise`` (..., M).
        """
        v = self.features[np.arange(self.n_clients), states]          # (..., M, d)
        x = self.targets[np.arange(self.n_clients), states] + noise
        res = np.einsum("...d,...d->...", w, v) - x
        return res[..., None] * v + self.reg_lambda * _reg_grad(w)

    def client_gradients(self, w) -> np.ndarray:
        r""":math:`\nabla F_m(w) = \sum_i\pi_{m,i}((w-w_{m,i})^\top V_{m,i} - h/2)V_{m,i} + \lambda\nabla r(w)`, (..., M, d)."""
        w = np.asarray(w, dtype=float)
        a = np.einsum("...d,msd->...ms", w, self.features) - self.targets - self.noise_high / 2
        g = np.einsum("ms,...ms,msd->...md", self.stat_dist, a, self.features)
        return g + self.reg_lambda * _reg_grad(w)[..., None, :]

    def gradient(self, w) -> np.ndarray:
        r""":math:`\nabla F(w) = \frac1M\sum_m\nabla F_m(w)` for w of shape (..., d)."""
        return self.client_gradients(w).mean(-2)

    def objective(self, w) -> np.ndarray:
        r""":math:`F(w) = \frac1M\sum_{m,i}\pi_{m,i}\,\tfrac12[(a_{m,i}-h/2)^2 + h^2/12] + \lambda r(w)`."""
        w = np.asarray(w, dtype=float)
        a = np.einsum("...d,msd->...ms", w, self.features) - self.targets - self.noise_high / 2
        quad = 0.5 * np.einsum("ms,...ms->...", self.stat_dist, a ** 2 + self.noise_high ** 2 / 12) / self.n_clients
        return quad + self.reg_lambda * 0.5 * np.sum(w * w / (1 + w * w), axis=-1)

    def hessian_quadratic(self) -> np.ndarray:
        r"""Hessian of the quadratic part, :math:`\frac1M\sum_{m,i}\pi_{m,i}V_{m,i}V_{m,i}^\top` (d, d)."""
        return np.einsum("ms,msd,mse->de", self.stat_dist, self.features, self.features) / self.n_clients

    def minimizer(self, w0=None) -> np.ndarray:
        """A minimiser of F (L-BFGS from the quadratic part's minimiser; F is a quadratic plus a small non-convex term)."""
        h = self.hessian_quadratic()
        rhs = np.einsum("ms,ms,msd->d", self.stat_dist, self.targets + self.noise_high / 2, self.features) / self.n_clients
        start = np.linalg.lstsq(h, rhs, rcond=None)[0] if w0 is None else np.asarray(w0, dtype=float)
        res = minimize(lambda x: float(self.objective(x)), start, jac=lambda x: self.gradient(x),
                       method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
        return res.x

    def constants(self, w0=None, radius: float | None = None) -> dict:
        r"""Problem constants of paper D's assumptions, for the bound calculators.

        * ``smooth_L``: per-sample smoothness :math:`\max_{m,i}\|V_{m,i}\|^2 + \lambda` (Ass. 4.2; :math:`|r''|\le1`);
        * ``sigma2``: an upper bound on :math:`\sup_{x,w}\|\nabla f_m(w;x)-\nabla F_m(w)\|^2` over the ball of
          ``radius`` around the minimiser (Ass. 4.3 cannot hold on all of :math:`\mathbb R^d` for this
          least-squares model); the gradient difference is affine in w and in the noise, so
          :math:`\|A w^* + c\| + \|A\|_2 R` at the noise extremes bounds it;
        * ``het_theta2`` with ``het_delta2`` = 1 (Ass. 4.4): the same ball bound on
          :math:`\frac1M\sum_m\|\nabla F_m - \nabla F\|^2` (the regulariser cancels);
        * ``delta0`` = :math:`F(w_0)-F^*`, ``G0`` = :math:`\frac1M\sum_m\|\nabla F_m(w_0)\|^2`, ``f_star``, ``w_star``.

        ``radius`` defaults to :math:`\|w_0 - w^*\|`, the ball the iterates start on.
        """
        w_star = self.minimizer()
        w0 = np.zeros(self.dim) if w0 is None else check_array("w0", w0, shape=(self.dim,))
        r = float(np.linalg.norm(w0 - w_star)) if radius is None else check_real("radius", radius, low=0)
        v, pi, h = self.features, self.stat_dist, self.noise_high
        b = self.targets
        # per-sample gradient minus client gradient, quadratic part: (V_i V_i^T - sum_j pi_j V_j V_j^T) w + c
        outer = np.einsum("msd,mse->msde", v, v)
        mean_outer = np.einsum("ms,msde->mde", pi, outer)
        mean_lin = np.einsum("ms,ms,msd->md", pi, b + h / 2, v)
        a_mat = outer - mean_outer[:, None]                                          # (M, S, d, d)
        op = np.linalg.norm(a_mat, ord=2, axis=(-2, -1))
        sig = 0.0
        for eps in (0.0, h):
            c = -(b + eps)[..., None] * v + mean_lin[:, None]
            sig = max(sig, float(np.max(np.linalg.norm(np.einsum("msde,e->msd", a_mat, w_star) + c, axis=-1) + op * r)))
        # client dissimilarity: grad F_m - grad F = (H_m - H) w - (c_m - c)
        hm = mean_outer - mean_outer.mean(0)
        cm = mean_lin - mean_lin.mean(0)
        diss = np.linalg.norm(np.einsum("mde,e->md", hm, w_star) - cm, axis=-1) + np.linalg.norm(hm, ord=2, axis=(-2, -1)) * r
        g0 = self.client_gradients(w0)
        return {"smooth_L": float(np.max(np.sum(v * v, -1)) + self.reg_lambda), "sigma2": sig ** 2,
                "het_theta2": float(np.mean(diss ** 2)), "het_delta2": 1.0,
                "delta0": float(self.objective(w0) - self.objective(w_star)), "G0": float(np.mean(np.sum(g0 ** 2, -1))),
                "f_star": float(self.objective(w_star)), "w_star": w_star, "radius": r}


def make_markov_regression(n_clients: int, *, dim: int = 10, optima: str = "per_client", noise_high: float = 0.01,
                           reg_lambda: float = 0.01, rng=None) -> MarkovRegression:
    r"""The regression of paper D §5 with two states per client and :math:`\pi_m = (1/2, 1/2)`.

    :math:`V_{m,i}\sim U(0,1)^d`. Optima: the first half of the clients have :math:`w_{m,i}\sim U(0,1)^d`, the
    other half :math:`U(1,2)^d` — ``"per_client"`` draws them for every (m, i) (spec D.5.6 assumption),
    ``"groups"`` shares one draw :math:`w_i^1` / :math:`w_i^2` per half (the other reading of the paper).
    """
    m = check_int("n_clients", n_clients, low=1)
    d = check_int("dim", dim, low=1)
    check_choice("optima", optima, ("per_client", "groups"))
    rng = as_numpy_rng(rng)
    v = rng.random((m, 2, d))
    low = (np.arange(m) >= m // 2).astype(float) if m > 1 else np.zeros(1)   # 0 for the first half, 1 after
    if optima == "per_client":
        w = low[:, None, None] + rng.random((m, 2, d))
    else:
        shared = rng.random((2, 2, d)) + np.array([0.0, 1.0])[:, None, None]  # (group, state, d)
        w = shared[low.astype(int)]
    return MarkovRegression(v, w, np.array([0.5, 0.5]), noise_high=noise_high, reg_lambda=reg_lambda)


# ------------------------------------------------------------------------------ the engine's data

@dataclass(frozen=True)
class MarkovStreams:
    r"""The data of the streaming algorithms: N = ``copies`` x R rows of problems and R replicas of client streams.

    Row ``c * R + r`` is parameter setting c on replica r; the ``copies`` settings of a replica share its streams and
    its noise (common random numbers). Build with :func:`markov_streams`, repeat for settings with :meth:`tile`.

    Attributes
    ----------
    features : array (N, M, S, d)
        :math:`V_{m,i}` of each row's problem.
    targets : array (N, M, S)
        Noise-free observations :math:`w_{m,i}^\top V_{m,i}`.
    stat_dist : array (N, M, S)
        Stationary laws :math:`\pi_m`.
    states : int array (R, T, M, K)
        The client streams: round t of client m holds the chain's states at times tK..tK+K-1.
    noise_high, reg_lambda : float
        h and :math:`\lambda`, shared by all problems.
    copies : int
    """

    features: np.ndarray
    targets: np.ndarray
    stat_dist: np.ndarray
    states: np.ndarray
    noise_high: float
    reg_lambda: float
    copies: int = 1

    def __post_init__(self) -> None:
        feats = check_array("features", self.features, ndim=4)
        if 0 in feats.shape:
            raise ValueError(f"features must have shape (N, M, S, d) with every size >= 1, got {feats.shape}.")
        check_array("targets", self.targets, shape=feats.shape[:3])
        check_simplex("stat_dist", self.stat_dist, shape=feats.shape[:3])
        st = check_array("states", self.states, ndim=4, dtype=np.int64)
        if 0 in st.shape or np.any(st < 0) or np.any(st >= feats.shape[2]):
            raise ValueError(f"states must have shape (R, T, M, K) with sizes >= 1 and hold states in "
                             f"[0, {feats.shape[2]}), got shape {st.shape}.")
        copies = check_int("copies", self.copies, low=1)
        if st.shape[2] != feats.shape[1] or feats.shape[0] != copies * st.shape[0]:
            raise ValueError(f"features must have copies * R = {copies * st.shape[0]} rows and {st.shape[2]} clients "
                             f"(those of states), got shape {feats.shape}.")
        check_real("noise_high", self.noise_high, low=0)
        check_real("reg_lambda", self.reg_lambda, low=0)

    @property
    def n_rows(self) -> int:
        return self.features.shape[0]

    @property
    def n_replicas(self) -> int:
        return self.states.shape[0]

    @property
    def n_rounds(self) -> int:
        return self.states.shape[1]

    @property
    def n_clients(self) -> int:
        return self.states.shape[2]

    @property
    def n_local(self) -> int:
        return self.states.shape[3]

    @property
    def dim(self) -> int:
        return self.features.shape[3]

    def tile(self, copies: int) -> "MarkovStreams":
        """The same replicas for ``copies`` parameter settings (rows ``c * N + n``)."""
        copies = check_int("copies", copies, low=1)
        tiled = (np.tile(a, (copies,) + (1,) * (a.ndim - 1)) for a in (self.features, self.targets, self.stat_dist))
        return replace(self, **dict(zip(("features", "targets", "stat_dist"), tiled)), copies=self.copies * copies)

    def gradient(self, w: np.ndarray) -> np.ndarray:
        r""":math:`\nabla F(w)` of every row's problem, w (N, d) -> (N, d)."""
        a = np.einsum("rd,rmsd->rms", w, self.features) - self.targets - self.noise_high / 2
        return (np.einsum("rms,rms,rmsd->rd", self.stat_dist, a, self.features) / self.n_clients
                + self.reg_lambda * w / (1 + w * w) ** 2)

    def noise(self, rng: np.random.Generator) -> np.ndarray:
        """The round's observation noise U(0, h), one draw (R, M, K) repeated over the settings: (N, M, K)."""
        draw = rng.random((self.n_replicas, self.n_clients, self.n_local)) * self.noise_high
        return draw if self.copies == 1 else np.tile(draw, (self.copies, 1, 1))

    def round_samples(self, t: int, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Features (N, M, K, d) and observations (N, M, K) of round t: the K next states of every client's chain."""
        states = self.states[:, t] if self.copies == 1 else np.tile(self.states[:, t], (self.copies, 1, 1))
        r = np.arange(self.n_rows)[:, None, None]
        m = np.arange(self.n_clients)[None, :, None]
        return self.features[r, m, states], self.targets[r, m, states] + noise


def markov_streams(problem, states) -> MarkovStreams:
    """Stack R replica problems and their client streams.

    Parameters
    ----------
    problem : MarkovRegression or sequence of R of them
        One problem is shared by all replicas.
    states : int array (T, M, K) or (R, T, M, K)
        Client streams (e.g. :func:`fedlab.markovian.data.two_state_streams`).

    Returns
    -------
    MarkovStreams
    """
    st = np.asarray(states)
    st = st[None] if st.ndim == 3 else st
    if st.ndim != 4 or st.size == 0:
        raise ValueError(f"states must have shape (T, M, K) or (R, T, M, K) with every size >= 1, got "
                         f"{np.shape(states)}.")
    if not np.issubdtype(st.dtype, np.integer):
        raise TypeError(f"states must be integer state indices, got dtype {st.dtype}.")
    problems = [problem] if isinstance(problem, MarkovRegression) else \
        list(problem) if isinstance(problem, (list, tuple)) else []
    if not problems or not all(isinstance(p, MarkovRegression) for p in problems):
        raise TypeError("problem must be a MarkovRegression or a non-empty sequence of them (one per replica).")
    first = problems[0]
    if any(p.features.shape != first.features.shape or p.noise_high != first.noise_high
           or p.reg_lambda != first.reg_lambda for p in problems[1:]):
        raise ValueError("all problems must share n_clients, n_states, dim, noise_high and reg_lambda.")
    if len(problems) not in (1, st.shape[0]):
        raise ValueError(f"got {len(problems)} problems for {st.shape[0]} replicas of states; pass 1 or {st.shape[0]}.")
    if st.shape[2] != first.n_clients:
        raise ValueError(f"states have {st.shape[2]} clients, the problem has {first.n_clients}.")
    if st.min() < 0 or st.max() >= first.n_states:
        raise ValueError(f"states must lie in [0, {first.n_states}), got range [{st.min()}, {st.max()}].")
    reps = st.shape[0] if len(problems) == 1 else 1
    arrays = (np.repeat(np.stack([getattr(p, name) for p in problems]), reps, axis=0)
              for name in ("features", "targets", "stat_dist"))
    return MarkovStreams(*arrays, st, first.noise_high, first.reg_lambda)
