"""Theory calculators: pure numpy/cvxpy functions, one module per chapter, equations numbered as in the thesis.

- ``availability``: ε̄_opt, ε̄_bias, Γ and the total-error objective (2.22)–(2.28) of CA-Fed;
- ``knnper``: Theorem 3.6.1 (corrected) for kNN-Per;
- ``streams``: ψ of Corollary 4.3.5, its minimiser, N_eff and the ĉ2/ĉ1 estimator;
- ``online``: regret bounds of Theorems 4.4.2–4.4.5 (FEM-OMD);
- ``sfedpo``: Theorems 1–2 of the SFedPO paper;
- ``dynamic``: the tracking bound and optimal step size of dynamic FL;
- ``markovian``: sample/communication complexities of streaming FL with Markovian data.
"""
from . import availability, dynamic, knnper, markovian, online, sfedpo, streams

__all__ = ["availability", "dynamic", "knnper", "markovian", "online", "sfedpo", "streams"]
