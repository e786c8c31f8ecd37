"""The paper's own numbers and statements (Huynh, Egan, Neglia, Gorce, *Streaming Federated Learning with Markovian
Data*; seed text ``markovian_streaming_fl.txt``, spec ``dynamic.md`` part D).

The paper has no numeric result tables: its experiments are figures of gradient-norm curves whose findings are
directions (:data:`FIGURES`), run with the step sizes of §5 (:data:`STEP_SIZES`); its theory gives the noise term
:math:`2\\tau\\sigma^2/(MK)` of Theorems 4.5-4.9, hence the exponents of the noise floor in τ, M and K
(:data:`NOISE_EXPONENTS`), and the bounds on mixing times quoted by the claims (:mod:`fedlab.markovian.claims`).

>>> FIGURES["1"]["mixing_time"], STEP_SIZES["lr_global"]
(100, 0.01)
"""
from __future__ import annotations

__all__ = ["STEP_SIZES", "REG_LAMBDA", "N_SEEDS", "FIGURES", "NOISE_EXPONENTS", "MAIN_TEXT_PRODUCT_BOUND"]

STEP_SIZES = {"lr_global": 0.01, "lr_local": 0.001, "momentum_beta": 0.1}
"""γ, η and β of every experiment (§5 and App. G)."""

REG_LAMBDA = 0.01
"""λ of the non-convex regulariser (§5, captions of Figs. 2, 5, 6)."""

N_SEEDS = 10
"""§5: "we study the average performance over 10 random seeds"."""

FIGURES = {
    "1": {"n_clients": 10, "mixing_time": 100, "n_local": "varied",
          "finding": "Local SGD stalls when K increases; Minibatch SGD and Local SGD-M improve with larger K (§5)"},
    "2": {"n_clients": "varied", "mixing_time": 100, "n_local": 10,
          "finding": "the gradient norm of all three decreases as M increases (§5)"},
    "3": {"n_clients": (10, 100), "mixing_time": 10, "n_local": (10, 100, 1000), "finding": "as Fig. 1 (App. G)"},
    "4": {"n_clients": (10, 100), "mixing_time": 1000, "n_local": (10, 100, 1000), "finding": "as Fig. 1 (App. G)"},
    "5": {"n_clients": "varied", "mixing_time": 100, "n_local": 100, "finding": "as Fig. 2 (App. G)"},
    "6": {"n_clients": (10, 100), "mixing_time": "varied", "n_local": (10, 100, 1000),
          "finding": "the last-iterate gradient norm of all three degrades as the mixing time increases (App. G)"},
    "7": {"n_clients": 100, "mixing_time": 100, "n_local": (10, 100, 1000),
          "finding": "dependent and independent batches perform similarly, for all three algorithms (App. G)"},
}
"""The figures' settings from their captions and App. G ("varied": the figure's axis), and their findings. Fig. 2's
caption says K = 10 where App. G says K = 100 for the same experiment (spec D.5.7)."""

NOISE_EXPONENTS = {"mixing_time": 1.0, "n_clients": -1.0, "n_local": -1.0, "iid_mixing_time": 0.0}
"""Exponents of the noise term :math:`2\\tau\\sigma^2/(MK)` of Theorems 4.5-4.9 in τ, M and K, and of the i.i.d.
lower bound of Table 1 ([Patel et al., 2022], no τ) in the mixing time."""

MAIN_TEXT_PRODUCT_BOUND = "tau <= max_m tau_m * log M"
"""§4.5's worst case for the mixing time of the system chain; App. B's Prop. B.5 proves
(⌈log₄ M⌉ + 1) max_m τ_m instead (spec D.5.5)."""
