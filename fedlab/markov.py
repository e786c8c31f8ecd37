r"""Finite Markov chains shared by the chapters (client availability, temporal shifts, Markovian streams): the
transition-matrix check, the stationary law and the one trajectory sampler, :func:`sample_chains`."""
from __future__ import annotations

import numpy as np

from fedlab._rng import as_numpy_rng
from fedlab._validation import check_array, check_int, check_real, check_simplex

__all__ = ["check_transition_matrix", "stationary_distribution", "sample_chains"]


def check_transition_matrix(P, name: str = "P", atol: float = 1e-8) -> np.ndarray:
    """Return ``P`` as a float array (S, S) or (..., S, S), or raise if it is not row-stochastic.

    Raises
    ------
    ValueError
        When ``P`` is not square, has negative or non-finite entries, or a row does not sum to 1.
    """
    atol = check_real("atol", atol, low=0)
    arr = check_array(name, P)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2] or arr.shape[-1] < 1:
        raise ValueError(f"{name} must be a square transition matrix (S, S), got shape {arr.shape}.")
    if np.any(arr < 0):
        raise ValueError(f"{name} must have non-negative entries (a transition matrix), got minimum {arr.min():.4g}.")
    sums = arr.sum(-1)
    if np.any(np.abs(sums - 1.0) > atol):
        bad = np.flatnonzero(np.abs(sums.reshape(-1) - 1.0) > atol)[:5]
        raise ValueError(f"{name} must be row-stochastic (rows summing to 1); rows {bad.tolist()} sum to "
                         f"{np.round(sums.reshape(-1)[bad], 6).tolist()}.")
    return arr


def _stationary_one(P: np.ndarray) -> np.ndarray:
    s = P.shape[0]
    lhs = np.vstack([P.T - np.eye(s), np.ones((1, s))])
    rhs = np.concatenate([np.zeros(s), [1.0]])
    pi, _, rank, _ = np.linalg.lstsq(lhs, rhs, rcond=None)
    if rank < s:
        raise ValueError("P has several stationary distributions (it is not irreducible); pass an irreducible chain.")
    pi = np.clip(pi, 0.0, None)
    return pi / pi.sum()


def stationary_distribution(P) -> np.ndarray:
    r"""Stationary law :math:`\rho^\top \mathbf P = \rho^\top`, :math:`\sum_i \rho_i = 1` (thesis Assumption 3).

    Least-squares solution of :math:`[(\mathbf P^\top - \mathbf I); \mathbf 1^\top]\rho = (0, 1)`, unique for
    irreducible chains.

    Parameters
    ----------
    P : array (S, S) or (..., S, S)
        Row-stochastic transition matrices.

    Returns
    -------
    array (S,) or (..., S)

    Raises
    ------
    ValueError
        When ``P`` is not a transition matrix or has several stationary laws.
    """
    P = check_transition_matrix(P)
    flat = P.reshape(-1, *P.shape[-2:])
    return np.stack([_stationary_one(p) for p in flat]).reshape(P.shape[:-1])


def _chain_count(n_chains, **sizes) -> int:
    """The number of chains C fixed by ``n_chains`` and by the leading axes of the arrays that have one."""
    known = {name: size for name, size in sizes.items() if size is not None}
    if n_chains is not None:
        known = {"n_chains": check_int("n_chains", n_chains, low=1), **known}
    if len(set(known.values())) > 1:
        raise ValueError("the number of chains differs between " + ", ".join(f"{k} ({v})" for k, v in known.items())
                         + "; give them the same leading size.")
    return next(iter(known.values()), 1)


def _initial_states(P: np.ndarray, start, law, n_chains, u0: np.ndarray) -> np.ndarray:
    """X_0 of each chain: the given ``start`` states, or the inverse CDF of ``law`` at the uniforms ``u0`` (C,)."""
    s = P.shape[-1]
    if start is not None:
        x0 = np.asarray(start)
        if x0.dtype.kind not in "iu" or x0.ndim > 1:
            raise TypeError(f"start must be an integer state or an integer array (C,), got {x0.dtype} array of "
                            f"shape {x0.shape}.")
        if np.any((x0 < 0) | (x0 >= s)):
            raise ValueError(f"start must hold states in [0, {s}), got values in [{x0.min()}, {x0.max()}].")
        return np.broadcast_to(x0, (n_chains,)).astype(np.int64)
    cdf = np.cumsum(law, axis=-1)
    cdf[..., -1] = 1.0                      # rounding: the last state takes the rest of [0, 1)
    return (u0[:, None] >= cdf).sum(-1)


def _draws(n_chains: int, n_steps: int, rng, uniforms, hold) -> tuple[np.ndarray, np.ndarray | None]:
    """The uniforms (C, n), drawn from ``rng`` or checked, and the checked ``hold`` flags (C, n - 1)."""
    if uniforms is None:
        u = as_numpy_rng(rng).random((n_chains, n_steps))
    else:
        u = check_array("uniforms", uniforms, shape=(n_chains, n_steps))
        if np.any((u < 0) | (u >= 1)):
            raise ValueError("uniforms must lie in [0, 1).")
    if hold is not None:
        hold = np.asarray(hold)
        if hold.dtype != bool or hold.shape != (n_chains, max(n_steps - 1, 0)):
            raise TypeError(f"hold must be a bool array of shape ({n_chains}, {max(n_steps - 1, 0)}), got "
                            f"{hold.dtype} array of shape {hold.shape}.")
    return u, hold


def _transition_tables(cum: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``tab[j, c, i]``: the state of chain c after a move from state i with uniform ``u[c, j]`` (inverse CDF)."""
    n_chains, n_moves = u.shape
    s = cum.shape[-1]
    cum = np.broadcast_to(cum, (n_chains, s, s))
    steps = u.T[:, :, None]                                             # (J, C, 1)
    tab = np.empty((n_moves, n_chains, s), dtype=np.min_scalar_type(s - 1))
    for i in range(s):
        tab[:, :, i] = (steps >= cum[None, :, i, :]).sum(-1)
    return tab


def _walk(cum: np.ndarray, x0: np.ndarray, u: np.ndarray, hold) -> np.ndarray:
    """States (C, n) from X_0 = ``x0``: only the moves (the steps not held) are walked, one move index at a time."""
    c, n = u.shape
    if hold is None:
        u_moves, made = u[:, 1:], np.broadcast_to(np.arange(1, n), (c, n - 1))
    else:
        made = np.cumsum(~hold, axis=1)                                 # moves made by the end of each step
        rows, cols = np.nonzero(~hold)
        u_moves = np.zeros((c, int(made[:, -1].max()) if n > 1 else 0))
        u_moves[rows, made[rows, cols] - 1] = u[rows, cols + 1]         # each chain's move uniforms, in order
    tab = _transition_tables(cum, u_moves).reshape(u_moves.shape[1], c * cum.shape[-1])
    offset = np.arange(c) * cum.shape[-1]
    after = np.empty((u_moves.shape[1] + 1, c), dtype=np.int64)         # the state after j moves
    after[0] = x0
    for j in range(u_moves.shape[1]):
        after[j + 1] = tab[j].take(offset + after[j])
    out = np.empty((c, n), dtype=np.int64)
    out[:, 0] = x0
    out[:, 1:] = np.take_along_axis(after.T, made, axis=1)
    return out


def sample_chains(P, n_steps: int, *, start=None, law=None, n_chains: int | None = None, rng=None, uniforms=None,
                  hold=None) -> np.ndarray:
    r"""Trajectories :math:`X_{c,0}, \dots, X_{c,n-1}` of C independent finite Markov chains, shape (C, n), int64.

    Inverse-CDF sampling with one uniform :math:`u_{c,t}\in[0,1)` per chain and time:
    :math:`X_{c,0} = \#\{j : F_0(j) \le u_{c,0}\}` with :math:`F_0` the CDF of the initial law, and

    .. math::
        X_{c,t+1} = \#\Big\{j : \textstyle\sum_{i\le j} \mathbf P_c(X_{c,t}, i) \le u_{c,t+1}\Big\},

    i.e. :math:`P(X_{t+1}=j \mid X_t=x) = \mathbf P(x, j)` (thesis Assumption 3's chains). States are visited in
    the order 0..S-1; a caller that reads its uniforms the other way relabels its states. Vectorised over the chains;
    the time loop walks precomputed transition tables (one indexing per move), and only the moves: held steps
    cost nothing, so lazy chains that rarely move are cheap.

    Parameters
    ----------
    P : array (S, S) or (C, S, S)
        Transition matrix shared by the chains, or one per chain.
    n_steps : int
        Trajectory length n >= 0 (the initial state included).
    start : int or int array (C,), optional
        Initial states (column 0 of the uniforms is then unused).
    law : array (S,) or (C, S), optional
        Initial law. Without ``start`` and ``law``: the stationary law of ``P``.
    n_chains : int, optional
        C when no argument has a chain axis (default 1).
    rng : numpy Generator, int or None
        Source of the uniforms, drawn as ``rng.random((C, n))`` when ``uniforms`` is not given.
    uniforms : array (C, n) in [0, 1), optional
        The uniforms themselves, for callers that draw them in their own order.
    hold : bool array (C, n - 1), optional
        ``hold[c, t]`` keeps chain c in place from t to t + 1 (its uniform is then unused). With ``hold``
        i.i.d. Bernoulli(:math:`1-\kappa`), the trajectories follow the lazy chain :math:`(1-\kappa)\mathbf I +
        \kappa\mathbf P`.

    Returns
    -------
    int64 array (C, n)

    Raises
    ------
    ValueError, TypeError
        On a matrix that is not row-stochastic, arguments with different numbers of chains, both ``start`` and
        ``law``, or both ``rng`` and ``uniforms``.
    """
    P = check_transition_matrix(P)
    if P.ndim not in (2, 3):
        raise ValueError(f"P must have shape (S, S) or (C, S, S), got {P.shape}.")
    n = check_int("n_steps", n_steps, low=0)
    if start is not None and law is not None:
        raise ValueError("pass the initial states (start) or the initial law (law), not both.")
    if uniforms is not None and rng is not None:
        raise ValueError("pass rng or uniforms, not both.")
    s = P.shape[-1]
    if start is None:
        law = stationary_distribution(P) if law is None else check_simplex("law", law, size=s, ndim=(1, 2))
    c = _chain_count(n_chains, P=P.shape[0] if P.ndim == 3 else None,
                     start=np.shape(start)[0] if np.ndim(start) == 1 else None,
                     law=law.shape[0] if law is not None and law.ndim == 2 else None,
                     uniforms=np.shape(uniforms)[0] if np.ndim(uniforms) >= 1 else None,
                     hold=np.shape(hold)[0] if np.ndim(hold) >= 1 else None)
    u, hold = _draws(c, n, rng, uniforms, hold)
    if n == 0:
        return np.empty((c, 0), dtype=np.int64)
    cum = np.cumsum(P, axis=-1)
    cum[..., -1] = 1.0
    return _walk(cum, _initial_states(P, start, law, c, u[:, 0]), u, hold)
