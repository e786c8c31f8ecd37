r"""What the thesis states about its online-mixture experiments (§4.4.5): settings and results, with their source.

§4.4 has no numeric table: its results are curves (Figs. 4.9 and 4.10) and the sentences that read them, quoted
below. The claims of the chapter (:mod:`fedlab.online.claims`) take the paper's side from here.
"""
from __future__ import annotations

__all__ = ["THESIS_FIG49", "FIG49_N", "FIG49_C", "FIG49_S", "FIG410_T0", "FIG410_HORIZON", "ASSUMPTION27_C1"]

THESIS_FIG49 = {"centers": "paper", "spread": 5.0, "alpha": 0.1, "n_clients": 50, "n_samples": 30}
r"""§4.4.5.1, the setting of Fig. 4.9: centres :math:`\mu^*_j\sim\mathcal N(0, sI_d)` with s = 5, weights
Dir(0.1), C = 50 and n = 30 unless varied. It does not give d, m, T, K, the step or the initialisation."""

FIG49_N = {"linear": (1,), "sublinear": (10, 30)}
"""§4.4.5.1, Fig. 4.9 left (C = 50, s = 5): "the regret is sub-linear for n ≥ 10 and linear for n = 1, in
accordance with Theorem 4.4.2" (the curves with n ≥ 10 that we run: 10 and 30)."""

FIG49_C = {"linear": (5, 10, 50), "sublinear": (100,)}
"""§4.4.5.1, Fig. 4.9 centre (n = 1, s = 5): "the regret of FEM-OMD improves with larger values of C. More
precisely, larger values of C (= 100) lead to a sub-linear regret, while smaller values lead to a linear regret"
(the smaller values we run: 5, 10 and 50)."""

FIG49_S = {"linear": (1.0,), "sublinear": (2.5, 5.0)}
"""§4.4.5.1, Fig. 4.9 right (C = 50, n = 30): "the regret is sub-linear for large s ≥ 2.5 and linear for
s = 1.0. This result demonstrates the necessity of the separation assumption (Assumption 27)"."""

FIG410_T0 = 200
"""§4.4.5.2, Fig. 4.10, MNIST: "our proposed method (FED-OMD) achieves a sub-linear regret before reaching time-step
t_0 = 200, whereas FedOMD takes longer to enter the sub-linear regime"."""

FIG410_HORIZON = 1000
"""§4.4.5.2, Fig. 4.10: T = 1,000 steps; on CIFAR-10 "neither FedOMD nor FED-OMD achieves sub-linear regret with
T = 1,000 time-steps"."""

ASSUMPTION27_C1 = 128.0
r"""Assumption 27 (4.29): centres at least :math:`C'\sqrt{\log(m/\min_{l,t}\pi^*_{t,l})}` apart with
:math:`C' \ge 128`."""
