"""The dynamic chapter's claims: every rule goes both ways, on small hand-made results."""
import numpy as np
import pytest

from fedlab.dynamic.claims import EXPONENT_TOLERANCE, RESULT_KEYS, chapter_claims

LRS = [0.003, 0.01, 0.03, 0.1, 0.3, 1.0]
DRIFTS = [0.0, 1e-4, 1e-3, 1e-2]
LOG_LRS = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
LOG_DRIFTS = [0.0, 1e-3, 1e-2]
SCALE = np.array([1.0, 1.05, 0.95])[:, None, None]   # three seeds: the same shape at another level


def msd(lrs, drifts, a=0.01):
    """a μ + σ_q²/μ: Theorem 1's two terms (seeds, drifts, lrs)."""
    mu = np.asarray(lrs)[None, :]
    return SCALE * (a * mu + np.asarray(drifts)[:, None] / mu)[None]


def results(true: bool):
    """Results under which every statement holds (``true``) or fails."""
    steady = msd(LRS, DRIFTS) if true else SCALE * np.ones((1, len(DRIFTS), len(LRS)))
    log_rows = [0.0, 1e-3, 1e-4] if true else [0.0, 0.0, 0.0]   # the last row's optimum at μ = 0.1
    log_steady = msd(LOG_LRS, log_rows) if true else SCALE * np.stack(
        [1 / np.asarray(LOG_LRS), np.asarray(LOG_LRS), 1 / np.asarray(LOG_LRS)])[None]
    bias_mu = np.array([0.003, 0.01, 0.03, 0.1])
    normal, plain = (0.015 * bias_mu, np.full(4, 0.02)) if true else (np.full(4, 0.02), 0.0075 * bias_mu)
    rates = {"a": [-1.0, -5.0, -60.0], "c": [-5.0, -5.1, -5.05], "d": [-5.0, -5.05, np.nan]}
    floors = {"a": [-40.0, -30.0, -20.0], "c": [-43.0, -32.0, -26.0], "d": [-32.0, -10.0, -1.0]}
    if not true:
        rates = {"a": [-60.0, -5.0, -1.0], "c": [-5.0, -10.0, -20.0], "d": [-5.0, -10.0, np.nan]}
        floors = {k: v[::-1] for k, v in floors.items()}
    curves = {k: (floors[k], np.array([300.0, 200.0, 100.0]), np.array(rates[k])) for k in "acd"}
    ls_curves = {"lrs": LRS, "a": (list(-40 + 4 * np.arange(6.0)), np.linspace(1000, 2, 6), -np.logspace(0, 2, 6)),
                 "c": (floors["c"], np.ones(3), np.array([-10.0, -10.1, -10.2])),
                 "d": (floors["d"], np.ones(3), np.array([-10.0, -12.0, -9.0]))}
    return {
        "lrs": LRS, "drifts": DRIFTS, "steady": steady, "bound": steady * (1.1 if true else 1 / 1.1),
        "prediction": msd(LRS, DRIFTS) * np.ones((3, 1, 1)),
        "mu_star": np.tile([0.0, 0.05, 0.1, 0.2] if true else [0.0, 0.5, 0.5, 2.0], (3, 1)),
        "mu_pred": np.tile([0.003, 0.07, 0.2, 0.5], (3, 1)),
        "lemma1": {"noise_at_opt": 0.02 if true else 0.05, "sigma_s2": 0.01, "eps2": 0.02},
        "toy": {(0.1, 0.0): (0.0526 * (1.01 if true else 1.2), 0.0002, 0.0526),
                (0.03, 1e-3): (0.0321 * (0.99 if true else 0.8), 0.0003, 0.0321)},
        "ls_curves": ls_curves,
        "bias": {"lrs": list(bias_mu), "simulated": {"normalized": list(normal), "unnormalized": list(plain)},
                 "closed_form": {"normalized": list(normal + (0.0 if true else 1e-3)), "unnormalized": list(plain)}},
        "log_lrs": LOG_LRS, "log_drifts": LOG_DRIFTS, "log_steady": log_steady, "log_curves": curves,
        "log_curvature": [0.05, 0.06, 0.11],
    }


@pytest.mark.parametrize("true", [True, False])
def test_every_claim_goes_both_ways(true):
    claims = chapter_claims(results(true), scale="full")
    assert len(claims) == 20
    assert {c.kind for c in claims} == {"experiment", "analytic", "consistency"}
    wrong = [(c.source, c.statement, c.verdict, c.measured) for c in claims if c.agrees is not true]
    assert not wrong


def test_slopes_are_judged_on_the_seeds_interval():
    res = results(True)
    res["steady"] = res["steady"] * np.array([1.0, 3.0, 0.33])[:, None, None] ** np.log10(np.asarray(LRS))
    claim = chapter_claims(res, scale="smoke")[0]
    assert claim.n_seeds == 3 and claim.tolerance == EXPONENT_TOLERANCE
    assert claim.verdict == "inconclusive" and claim.verdict_text == "inconclusive at smoke scale"


def test_the_bound_ratio_can_be_inconclusive():
    res = results(True)
    res["bound"] = res["steady"] / np.array([0.9, 1.05, 1.0])[:, None, None]
    claim = next(c for c in chapter_claims(res, scale="full") if "approximate bound at the worst" in c.statement)
    assert claim.n_seeds == 3 and claim.verdict == "inconclusive"


def test_fig_1b_is_claimed_only_at_its_own_drift():
    claims = chapter_claims(results(True), scale="full")
    fig_1b = [c for c in claims if c.source.startswith("Fig. 1b")]
    assert [c.source for c in fig_1b] == ["Fig. 1b, σ_q² = 0.01, logistic model (29)"]
    extension = next(c for c in claims if "extension" in c.source)
    assert "0.01" not in extension.measured and "0.0001" in extension.measured


def test_claims_without_their_measurements_are_not_run():
    res = results(True)
    res["log_curves"]["d"] = (res["log_curves"]["d"][0], np.ones(3), np.array([np.nan, -5.0, np.nan]))
    res["log_drifts"], res["log_steady"] = [1e-3, 1e-2], res["log_steady"][:, 1:]
    claims = chapter_claims(res, scale="smoke")
    not_run = [c.statement for c in claims if c.verdict == "not run"]
    assert not_run == ["a larger μ gives a higher steady-state MSD",
                       "the convergence rate does not depend on σ_q²: spread of the transient slopes (% of their mean)"]


@pytest.mark.parametrize("key", sorted(RESULT_KEYS))
def test_a_missing_key_is_named(key):
    res = results(True)
    del res[key]
    with pytest.raises(ValueError, match=f"results\\['{key}'\\] is missing"):
        chapter_claims(res, scale="smoke")


def test_bad_results_are_named():
    res = results(True)
    res["steady"] = res["steady"][:, :2]
    with pytest.raises(ValueError, match=r"results\['steady'\] must have shape"):
        chapter_claims(res, scale="smoke")
    res = results(True)
    res["drifts"], res["steady"] = [0.0, 1e-4], res["steady"][:, :2]
    with pytest.raises(ValueError, match=r"results\['drifts'\] must hold"):
        chapter_claims(res, scale="smoke")
    res = results(True)
    del res["bias"]["simulated"]
    with pytest.raises(ValueError, match=r"results\['bias'\]\['simulated'\] is missing"):
        chapter_claims(res, scale="smoke")
    with pytest.raises(TypeError, match="results"):
        chapter_claims([1], scale="smoke")
    with pytest.raises(ValueError, match="scale"):
        chapter_claims(results(True), scale="huge")
