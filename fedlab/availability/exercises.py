r"""Exercises of notebook 02 (client availability, CA-Fed), each checking the reader's answer (see
:mod:`fedlab.exercises`).

- 2.1 (compute): the mean active and inactive runs of a rare, correlated client's availability chain (D.226);
- 2.2 (compute): the bias term $\bar\epsilon_{bias}=\chi^2_{\alpha\|p}$ (2.24) of aggregation weights that ignore
  availability;
- 2.3 (compute): the $\bar\kappa^2$ at which CA-Fed stops excluding client 2 of the toy instance (2.33);
- 2.4 (implement): CA-Fed's proxy of the total error, eqs. (2.31)-(2.33);
- 2.5 (predict): Guideline A applied fully: More available against Unbiased at the end of training.

The reference answers are computed with the package's own functions (``mean_sojourn_times``, ``eps_bias``,
``cafed_weights``, ``cafed_proxy``).
"""
from __future__ import annotations

import numpy as np

from fedlab.availability.algorithms.cafed import cafed_proxy, cafed_weights
from fedlab.availability.bounds import eps_bias
from fedlab.availability.data import mean_sojourn_times
from fedlab.exercises import FunctionExercise, Mistake, NumberExercise, PredictionExercise

__all__ = ["EXERCISES"]

# Exercise 2.1: the rare, correlated client of the experiments
RARE_PI, RARE_LAMBDA = 0.1, 0.9
# Exercise 2.2: two clients of equal importance, one often available, aggregated with q = alpha
BIAS_ALPHA, BIAS_PI, BIAS_Q = np.array([0.5, 0.5]), np.array([0.8, 0.2]), np.array([0.5, 0.5])
# Exercise 2.3: the toy instance of section 4
TOY = dict(alpha=np.full(6, 1 / 6), pi=np.array([0.9, 0.9, 0.1, 0.1, 0.1, 0.1]),
           lam=np.array([0.0, 0.0, 0.9, 0.8, 0.0, 0.0]), gap=np.array([0.05, 0.07, 0.60, 0.40, 0.30, 0.20]))


def _sojourns() -> np.ndarray:
    return np.array(mean_sojourn_times(RARE_PI, RARE_LAMBDA), dtype=float)


def _chi2_variants() -> dict[str, float]:
    p_raw = BIAS_PI * BIAS_Q
    p = p_raw / p_raw.sum()
    a = BIAS_ALPHA
    return {"reversed": float((p ** 2 / a).sum() - 1), "tv": float(0.5 * np.abs(a - p).sum()),
            "tv2": float((0.5 * np.abs(a - p).sum()) ** 2), "no_minus_one": float((a ** 2 / p).sum()),
            "unnormalised": float((a ** 2 / p_raw).sum() - 1)}


def _reentry_threshold(lo: float = 1e-3, hi: float = 1e3) -> float:
    """The smallest kappa2 at which CA-Fed excludes nobody on the toy instance (bisection on cafed_weights)."""
    if cafed_weights(**TOY, kappa2=lo).excluded == [] or cafed_weights(**TOY, kappa2=hi).excluded != []:
        raise RuntimeError("the toy instance must exclude somebody at small kappa2 and nobody at large kappa2.")
    for _ in range(60):
        mid = np.sqrt(lo * hi)
        lo, hi = (lo, mid) if cafed_weights(**TOY, kappa2=mid).excluded == [] else (mid, hi)
    return float(hi)


def _threshold_variants() -> dict[str, float]:
    """The threshold computed with the anticipated slips: gain of excluding client 2 over the bias it adds."""
    a, g, keep = TOY["alpha"], TOY["gap"], np.arange(6) != 2
    gamma, tv = float(g.max()), float(a[2])                  # excluding client 2: d_TV = 1 - alpha(S) = alpha_2
    gain = float(a @ g - a[keep] @ g[keep] / a[keep].sum())
    return {"no_four": gain / (tv ** 2 * gamma), "tv_not_squared": gain / (4 * tv * gamma),
            "no_gamma": gain / (4 * tv ** 2), "not_renormalised": float(a @ g - a[keep] @ g[keep]) / (4 * tv ** 2 * gamma)}


def proxy(q: np.ndarray, alpha: np.ndarray, pi: np.ndarray, gap: np.ndarray, kappa2: float) -> float:
    """CA-Fed's estimate of the total error, (2.33), with the default Gamma' = max(gap) of (2.32)."""
    return cafed_proxy(q, alpha, pi, gap, kappa2=kappa2)[0]


def _proxy_inputs(rng: np.random.Generator) -> tuple:
    n = int(rng.integers(3, 9))
    q = rng.random(n)
    q[rng.random(n) < 0.3] = 0.0
    q[rng.integers(n)] = 1.0
    return (q, rng.dirichlet(np.ones(n)), rng.uniform(0.05, 1.0, n), rng.random(n), float(10 ** rng.uniform(-2, 2)))


def _proxy_with(q, alpha, pi, gap, kappa2, *, normalise=True, power=2, four=4.0, half=0.5, opt_weights=None):
    p = pi * q / ((pi * q).sum() if normalise else 1.0)
    opt = float(gap @ (p if opt_weights is None else opt_weights))
    return opt + four * kappa2 * (half * np.abs(alpha - p).sum()) ** power * float(gap.max())


def _unnormalised(q, alpha, pi, gap, kappa2):
    return _proxy_with(q, alpha, pi, gap, kappa2, normalise=False)


def _not_squared(q, alpha, pi, gap, kappa2):
    return _proxy_with(q, alpha, pi, gap, kappa2, power=1)


def _no_four(q, alpha, pi, gap, kappa2):
    return _proxy_with(q, alpha, pi, gap, kappa2, four=1.0)


def _l1(q, alpha, pi, gap, kappa2):
    return _proxy_with(q, alpha, pi, gap, kappa2, half=1.0)


def _opt_with_alpha(q, alpha, pi, gap, kappa2):
    return _proxy_with(q, alpha, pi, gap, kappa2, opt_weights=alpha)


_CHI2 = _chi2_variants()
_KAPPA = _threshold_variants()

EXERCISES = {
    "2.1": NumberExercise(
        "2.1", "Active and inactive runs of a rare, correlated client",
        "In the chain (D.226) the client leaves the active state with probability $(1-\\lambda)(1-\\pi)$ and the "
        "inactive one with probability $(1-\\lambda)\\pi$; a run lasts a geometric number of rounds, of mean one over "
        "the probability of leaving (section 2).",
        [Mistake(_sojourns()[::-1], "You swapped the two runs: a client available a tenth of the time has short active "
                                    "runs and long inactive ones."),
         Mistake([1 / (1 - RARE_PI), 1 / RARE_PI], "Those are the runs of an uncorrelated client ($\\lambda = 0$): "
                                                   "the correlation $\\lambda$ makes every run $1/(1-\\lambda)$ times "
                                                   "longer."),
         Mistake([1 / (1 - RARE_LAMBDA)] * 2, "Both runs depend on $\\pi$ as well: the leaving probabilities are "
                                              "$(1-\\lambda)(1-\\pi)$ (active) and $(1-\\lambda)\\pi$ (inactive)."),
         Mistake([1 - (1 - RARE_LAMBDA) * (1 - RARE_PI), 1 - (1 - RARE_LAMBDA) * RARE_PI],
                 "Those are the probabilities of staying, $p_{11}$ and $p_{00}$; a run's mean length is "
                 "$1/(1 - p_{\\text{stay}})$.")],
        answer=_sojourns(), rtol=2e-3),
    "2.2": NumberExercise(
        "2.2", "The bias of weights that ignore availability",
        "With weights $\\mathbf q$ training minimises $F_B$ with $p_k = \\pi_kq_k/\\sum_h\\pi_hq_h$ (2.17), and "
        "$\\bar\\epsilon_{bias} = \\chi^2_{\\alpha\\|p} = \\sum_k(\\alpha_k-p_k)^2/p_k$ (2.24).",
        [Mistake(_CHI2["reversed"], "The divergence is $\\chi^2_{\\alpha\\|p}$, with $p$ in the denominator: "
                                    "$\\sum_k\\alpha_k^2/p_k - 1$, not $\\sum_k p_k^2/\\alpha_k - 1$."),
         Mistake(_CHI2["tv"], "That is the total-variation distance of Thm 2.2.4; (2.24) uses the $\\chi^2$ "
                              "divergence $\\sum_k(\\alpha_k-p_k)^2/p_k$."),
         Mistake(_CHI2["tv2"], "That is $d_{TV}^2$, the bias term of the alternative bound (2.28); (2.24) uses the "
                               "$\\chi^2$ divergence."),
         Mistake(_CHI2["no_minus_one"], "$\\sum_k\\alpha_k^2/p_k$ is $1 + \\chi^2_{\\alpha\\|p}$: subtract one."),
         Mistake(_CHI2["unnormalised"], "Normalise the biased importance: $p_k = \\pi_kq_k/\\sum_h\\pi_hq_h$ sums to "
                                        "one (2.17).")],
        answer=float(eps_bias(BIAS_ALPHA, pi=BIAS_PI, q=BIAS_Q)), rtol=2e-3),
    "2.3": NumberExercise(
        "2.3", "When does CA-Fed take client 2 back?",
        "Compare CA-Fed's proxy (2.33) with and without client 2: with $\\mathbf q = \\alpha/\\pi$ on the included "
        "set $S$, $\\langle\\hat F - \\hat F^*, \\tilde p\\rangle = \\sum_S\\alpha_kg_k/\\alpha(S)$ and "
        "$d_{TV}(\\alpha, \\tilde p) = 1 - \\alpha(S)$, with $\\hat\\Gamma' = \\max_k g_k$ (2.32).",
        [Mistake(_KAPPA["no_four"], "The bias term of (2.33) is $4\\bar\\kappa^2 d_{TV}^2\\hat\\Gamma'$: keep the "
                                    "factor 4."),
         Mistake(_KAPPA["tv_not_squared"], "The bias term uses $d_{TV}^2$, the square of $1 - \\alpha(S)$."),
         Mistake(_KAPPA["no_gamma"], "The bias term is scaled by $\\hat\\Gamma' = \\max_k(\\hat F_k - \\hat F_k^*)$ "
                                     "(2.32), the largest loss gap of the toy instance."),
         Mistake(_KAPPA["not_renormalised"], "$\\tilde p$ sums to one: on $S$ it is $\\alpha_k/\\alpha(S)$, so the "
                                             "optimisation term divides by $\\alpha(S)$.")],
        answer=_reentry_threshold(), rtol=2e-3),
    "2.4": FunctionExercise(
        "2.4", "CA-Fed's proxy of the total error",
        "Eqs. (2.31)-(2.33): $\\tilde p_k = \\pi_kq_k/\\sum_h\\pi_hq_h$, and the proxy is "
        "$\\langle\\mathbf g, \\tilde p\\rangle + 4\\bar\\kappa^2 d_{TV}^2(\\alpha, \\tilde p)\\hat\\Gamma'$ with "
        "$d_{TV} = \\frac12\\sum_k|\\alpha_k - \\tilde p_k|$ and $\\hat\\Gamma' = \\max_k g_k$.",
        [Mistake(_unnormalised, "Normalise $\\tilde p_k = \\pi_kq_k / \\sum_h\\pi_hq_h$: Algorithm 6 (lines 18 and "
                                "21) prints $\\pi_kq_k$ without the sum, which is not a distribution (an erratum)."),
         Mistake(_not_squared, "The bias term uses $d_{TV}^2$, not $d_{TV}$."),
         Mistake(_no_four, "The bias term is $4\\bar\\kappa^2 d_{TV}^2\\hat\\Gamma'$: keep the factor 4."),
         Mistake(_l1, "$d_{TV}$ is half the L1 distance: $\\frac12\\sum_k|\\alpha_k - \\tilde p_k|$."),
         Mistake(_opt_with_alpha, "The optimisation term weighs the loss gaps by the biased importance $\\tilde p$ "
                                  "the training actually follows, not by the target $\\alpha$.")],
        solution=proxy, make_inputs=_proxy_inputs),
    "2.5": PredictionExercise(
        "2.5", "Guideline A applied fully",
        "Thm 2.2.2: the error is bounded by $2\\kappa^2(\\epsilon_{opt} + \\epsilon_{bias})$; excluding clients lowers "
        "the first term and raises the second, and on LEAF every client has its own labelling function.",
        [Mistake("More available", "Excluding the rare clients makes training fast but biased: $F_B$ ignores half of "
                                   "the importance $\\alpha$, and on LEAF a client the model does not train on is a "
                                   "client it gets wrong. The bias does not vanish with more rounds."),
         Mistake("a tie (within 1 pp)", "The two methods minimise different objectives: More available converges to "
                                        "$F_B$, which drops the rare clients, Unbiased to the target $F$.")],
        choices=("Unbiased", "More available", "a tie (within 1 pp)"), predicted="Unbiased"),
}
"""The chapter's exercises by label."""
