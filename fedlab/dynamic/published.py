"""What Rizk, Vlaski & Sayed (*Dynamic Federated Learning*) publish that the dynamic chapter compares with.

The paper gives an :math:`O(\\cdot)` theorem, qualitative readings of its Fig. 1 and one number, the optimal step
of Fig. 1b. Its experiment's setting (§V) is here too; what it leaves open (ρ, the feature variances, N_k, the μ
grid, the iteration count) is the chapter's choice (spec C.5-C.7), not the paper's.
"""
from __future__ import annotations

__all__ = ["THEOREM_1_EXPONENTS", "FIG_1B_DRIFT", "FIG_1B_OPTIMAL_STEP", "FIG_1_SETTING"]

THEOREM_1_EXPONENTS = {"noise": 1.0, "tracking": -1.0}
r"""Theorem 1 (28): :math:`\mathbb E\|w^o_i-w_i\|^2\le O(\gamma^i)+O(\mu)(\sigma_s^2+\epsilon^2)+O(\mu^{-1})\sigma_q^2`,
so the steady-state MSD scales like :math:`\mu^1` without drift and like :math:`\mu^{-1}` when tracking dominates."""

FIG_1B_DRIFT = 0.01
r""":math:`\sigma_q^2` of Fig. 1b, the non-stationary case of §V (the paper's other value is 0)."""

FIG_1B_OPTIMAL_STEP = 0.1
r"""The optimal step :math:`\mu^o` of Fig. 1b (§V: "an optimal step size :math:`\mu^o = 0.1` that achieves the best
MSD"), on the logistic model (29) at :math:`\sigma_q^2` = :data:`FIG_1B_DRIFT`."""

FIG_1_SETTING = {"agents": 20, "active": 7, "batch_range": (10, 20), "local_steps_range": (1, 10),
                 "offset_var": 0.1, "curve_step": 0.01}
r"""§V: K = 20 agents, L = 7 active per iteration, :math:`B_k\in[10, 20]`, :math:`E_k\in[1, 10]`,
:math:`\sigma_c^2 = 0.1` (Figs. 1a, 1d) and :math:`\mu = 0.01` for Figs. 1c-1d."""
