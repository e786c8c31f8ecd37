"""The availability chapter's published numbers: what thesis §2.2.6 (Rodio, Faticanti, Marfoq, Neglia, Leonardi,
CA-Fed, INFOCOM 2023) and its appendix report, and the one correction the chapter makes to them.

Every value names its source; the claims (:mod:`fedlab.availability.claims`) compare our measurements with them and
paper mode (:mod:`fedlab.availability.real_data`) trains with Table 4's step sizes.
"""
from __future__ import annotations

from fractions import Fraction

__all__ = ["FIG_2_11_GAIN", "FIG_2_12A_GAIN_AT_40", "FIG_2_12A_GAIN_AT_500", "FIG_2_13_GAIN", "FIG_2_15D_GAIN",
           "SLOWEST_HITTING_TIME", "F3AST_K", "TABLE_4_STEP_SIZES", "CHI2_COUNTEREXAMPLE",
           "CHI2_MIDPOINT_EXCESS"]

FIG_2_11_GAIN = {"synthetic": 1.56, "mnist": 0.94, "cifar10": 1.32}
"""CA-Fed(κ̄² = 1) − AdaFed, the second best, in pp of final test accuracy over 10 runs (§2.2.6.2, Fig. 2.11a-c)."""

FIG_2_12A_GAIN_AT_40 = 2.8
"""CA-Fed(κ̄² = 10⁻¹) − Unbiased at round t = 40, pp (§2.2.6.2, Fig. 2.12a; the thesis writes κ̄ for κ̄²)."""

FIG_2_12A_GAIN_AT_500 = 3.8
"""CA-Fed(κ̄² = 10²) − More available at round t = 500, pp (§2.2.6.2, Fig. 2.12a)."""

FIG_2_13_GAIN = {0.25: 1.6, 0.5: 1.2, 0.75: 1.0}
"""Best of CA-Fed(κ̄² = 1), CA-Fed(κ̄² = 10) − Unbiased at T = 200 per γ = δ of Synthetic(γ, δ), pp (Fig. 2.13)."""

FIG_2_15D_GAIN = 0.6
"""CA-Fed − AdaFed under spatial correlation, setting (c), pp (Fig. 2.15d)."""

SLOWEST_HITTING_TIME = 100
r"""The slowest chain's expected hitting time :math:`\max_k 1/((1-\lambda_k)\pi_k)` of the experiments' population
(§2.2.6.2, Fig. 2.14b's discussion)."""

F3AST_K = 45
"""F3AST's clients per round: the mean number of clients CA-Fed includes (§2.2.6)."""

TABLE_4_STEP_SIZES: dict[str, dict[str, tuple[float, float]]] = {
    "mnist": {"unbiased": (0.03, 1.0), "more_available": (0.1, 4.0), "cafed": (0.1, 1.0), "adafed": (0.03, 1.0),
              "f3ast": (0.1, 0.3)},
    "cifar10": {"unbiased": (0.03, 1.0), "more_available": (0.03, 3.0), "cafed": (0.03, 1.0), "adafed": (0.03, 1.0),
                "f3ast": (0.03, 0.3)},
}
"""(local η, server η̄) per data set and method of Fig. 2.11 (Table 4 of the CA-Fed paper's appendix); Less
correlated is not in it."""

CHI2_COUNTEREXAMPLE = {"alpha": (0.9, 0.05, 0.05), "pi": (0.1, 0.1, 0.9), "q1": (0.1, 0.8, 0.1), "q2": (0.2, 0.1, 0.7),
                       "chi2": (Fraction(4349, 320), Fraction(10877, 420), Fraction(3473, 160))}
r"""Prop. D.23 claims :math:`\chi^2(\mathbf q)` convex on :math:`\{\mathbf q>0:\|\mathbf q\|_1=Q\}`; the proof holds
only for equal :math:`\pi_k`. The implementation spec's counterexample (§2.4 and errata item 5), with the exact
values of :math:`\chi^2` at :math:`\mathbf q_1`, :math:`\mathbf q_2` and their midpoint."""

CHI2_MIDPOINT_EXCESS = float(CHI2_COUNTEREXAMPLE["chi2"][2]
                             - (CHI2_COUNTEREXAMPLE["chi2"][0] + CHI2_COUNTEREXAMPLE["chi2"][1]) / 2)
"""χ² at the midpoint minus the mean of its end values in the counterexample (≈ 1.962): a convex function would
give at most 0."""
