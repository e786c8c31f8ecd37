"""The availability chapter's claims: every rule goes both ways, on small hand-made results."""
import numpy as np
import pytest

from fedlab.availability.claims import RESULT_KEYS, TOLERANCE_PP, chapter_claims, paper_claims
from fedlab.availability.published import CHI2_MIDPOINT_EXCESS, FIG_2_11_GAIN, FIG_2_13_GAIN
from fedlab.availability.real_data import TABLE_METHODS

SEEDS = (0, 1, 2, 3)
KAPPA2 = (0.01, 0.1, 1.0, 10.0, 100.0)
JITTER = np.array([-0.001, 0.0005, 0.0, 0.0005])   # a small spread over the seeds (accuracy units)


def cafed(k):
    return f"CA-Fed (κ̄²={k:g})"


def run(final, *, at=None, included=10.0, fast=False, seed=0):
    """One run_availability result: a curve rising to ``final`` (quickly when ``fast``)."""
    rounds = list(range(0, 101, 10))
    curve = [final * (1 - np.exp(-(r + 1) / (3 if fast else 30))) for r in rounds]
    curve[-1] = final
    return {"final_accuracy": final + JITTER[seed], "accuracy_at": (curve[4] if at is None else at) + JITTER[seed],
            "at": 40, "rounds": rounds, "accuracy": curve, "mean_included": included}


def runs(final, **kw):
    return {s: run(final, seed=s, **kw) for s in SEEDS}


def curves(values_by_label, x):
    """curves_by's output: {label: (x, runs (seeds, len(x)))} with the seed spread of JITTER."""
    return {label: (np.array(x, float), np.array([np.asarray(v, float) + JITTER[s] for s in range(len(SEEDS))]))
            for label, v in values_by_label.items()}


def results(true: bool):
    """Results under which every statement of the paper holds (``true``) or fails."""
    sign = 1 if true else -1
    g = 0.01 * FIG_2_11_GAIN["synthetic"] if true else -0.02     # a gap in accuracy units
    comparison = {}
    included = [6.0, 7.0, 8.0, 9.0, 12.0] if true else [12.0, 11.0, 10.0, 9.0, 8.0]
    for dataset in ("leaf", "digits"):
        base = 0.7
        unbiased = runs(base, included=12.0, fast=not true)
        labels = {"Unbiased": unbiased, "AdaFed": runs(base), "Less correlated": runs(base - 0.02),
                  "F3AST": runs(base - 0.01), "Unbiased (ν=0)": runs(base + 0.01),
                  "More available": runs(base - 0.038 if true else base + 0.05, fast=true, included=6.0)}
        for k, n in zip(KAPPA2, included):
            labels[cafed(k)] = runs(base, included=n)
        labels[cafed(1)] = runs(base + (0.0094 if dataset == "digits" and true else g), included=included[2])
        labels[cafed(0.1)] = runs(base, at=unbiased[0]["accuracy_at"] + sign * 0.028, included=included[1])
        labels[cafed(100)] = unbiased if true else runs(base - 0.1, included=included[4])
        comparison[dataset] = labels
    decide = {"CA-Fed (κ̄²=1)": {"best": (0.01, 0.1), "runs": runs(0.7 - g)},   # the grid's seeds do not decide
              "AdaFed": {"best": (0.03, 0.3), "runs": runs(0.7)}}
    h = [0.0, 0.25, 0.5, 0.75, 1.0]
    gains = [0.0] + [0.01 * FIG_2_13_GAIN[v] for v in (0.25, 0.5, 0.75)] + [0.0]
    het = {"Unbiased": [0.60, 0.6, 0.6, 0.6, 0.70 if true else 0.5],
           "More available": [0.70 if true else 0.5, 0.5, 0.5, 0.5, 0.55 if true else 0.8],
           cafed(0.01): [0.65, 0.5, 0.5, 0.5, 0.5], cafed(100): [0.6, 0.6, 0.6, 0.6, 0.65],
           cafed(1): [0.62] + [0.6 + sign * v for v in gains[1:4]] + [0.6],
           cafed(10): [0.61] + [0.59 + sign * v for v in gains[1:4]] + [0.6]}
    if not true:
        het["Unbiased"][0] = 0.9
    priors = [10, 100, 1000]
    est = {"Unbiased": [0.5, 0.5, 0.5], "AdaFed": [0.5, 0.5, 0.5],
           "CA-Fed (κ̄²=1)": [0.4, 0.52, 0.55] if true else [0.6, 0.48, 0.55]}
    a = np.array([0.0] * 6 + [0.5, 0.6, 0.7, 0.8]) if true else np.array([0.9, 0.8, 0.7, 0.6] + [0.0] * 6)
    b = np.array([0.0] * 6 + [0.5, 0.6, 0.2, 0.8]) if true else np.array([0.0] * 6 + [0.5, 0.6, 0.9, 0.8])
    return {
        "runs": comparison, "kappa2_grid": list(KAPPA2), "n_clients": 24, "rounds": 100,
        "estimator_errors": {"priors": priors, "pi_error": [[0.1, 0.03, 0.01]] * 2,
                             "lambda_error": [[0.3, 0.1, 0.05] if true else [0.05, 0.1, 0.3]] * 2},
        "hitting_time": 100.0 if true else 50.0,
        "mixing": {"joint": 0.9 if true else 0.95, "clients": [0.5, 0.9, 0.35]},
        "chi2": {"q1": 13.590625, "q2": 25.897619047619047,
                 "midpoint": 13.590625 / 2 + 25.897619047619047 / 2 + (CHI2_MIDPOINT_EXCESS if true else -0.5)},
        "decide": decide, "decide_clients": 24, "decide_rounds": 60,
        "decide_held_out": {"CA-Fed (κ̄²=1)": runs(0.75 + g), "AdaFed": runs(0.75)},
        "heterogeneity": curves(het, h), "het_rounds": 60, "estimated": curves(est, priors),
        "spatial_exclusion": {"a": a, "b": b, "c": np.zeros(10)},
        "spatial_runs": {"CA-Fed (κ̄²=1)": runs(0.706 if true else 0.68), "AdaFed": runs(0.7)},
    }


def paper_results(true: bool):
    finals = {m: [0.5 + 0.001 * s for s in SEEDS] for m in TABLE_METHODS}
    finals["adafed"] = [0.6 + 0.001 * s + (0.0002 if s % 2 else -0.0002) for s in SEEDS]
    gain = 0.01 * FIG_2_11_GAIN["mnist"] if true else -0.02
    finals["cafed"] = [v + gain for v in finals["adafed"]]
    if not true:
        finals["unbiased"] = [0.7] * len(SEEDS)
    return {"mnist": {m: {"final_accuracy": v, "time_avg_accuracy": v, "mean_included": [1.0] * len(SEEDS)}
                      for m, v in finals.items()}}


def test_claims_reproduce_when_the_paper_is_right():
    claims = chapter_claims(results(True), scale="full")
    assert len(claims) == 21
    assert {c.kind for c in claims} == {"experiment", "analytic", "erratum"}
    wrong = [(c.source, c.statement, c.verdict, c.measured) for c in claims if c.agrees is not True]
    assert not wrong


def test_claims_fail_when_the_paper_is_wrong():
    claims = chapter_claims(results(False), scale="full")
    assert len(claims) == 21
    wrong = [(c.source, c.statement, c.verdict, c.measured) for c in claims if c.verdict != "not reproduced"]
    assert not wrong


def test_gaps_are_judged_over_seeds_and_may_be_inconclusive():
    res = results(True)
    res["spatial_runs"]["CA-Fed (κ̄²=1)"] = {s: dict(r, final_accuracy=0.7 + (0.03 if s % 2 else -0.02))
                                            for s, r in res["spatial_runs"]["CA-Fed (κ̄²=1)"].items()}
    claim = next(c for c in chapter_claims(res, scale="smoke") if c.source.startswith("Fig. 2.15d"))
    assert claim.n_seeds == len(SEEDS) and claim.tolerance == TOLERANCE_PP
    assert claim.verdict == "inconclusive" and claim.verdict_text == "inconclusive at smoke scale"


def test_a_gap_with_the_right_sign_but_another_size_is_direction_only():
    res = results(True)
    res["decide_held_out"]["CA-Fed (κ̄²=1)"] = runs(0.75 + 0.05)
    claim = chapter_claims(res, scale="full")[0]
    assert claim.source.startswith("Fig. 2.11a") and claim.verdict == "direction only"


def test_heterogeneity_levels_not_run_say_so():
    res = results(True)
    res["heterogeneity"] = {k: (x[[0, 2, 4]], r[:, [0, 2, 4]]) for k, (x, r) in res["heterogeneity"].items()}
    claims = [c for c in chapter_claims(res, scale="smoke") if c.source.startswith("Fig. 2.13")]
    assert [c.verdict for c in claims] == ["not run", "reproduced", "not run", "reproduced", "reproduced"]
    assert all("full mode only" in c.why for c in claims if c.verdict == "not run")


@pytest.mark.parametrize("key", sorted(RESULT_KEYS))
def test_a_missing_key_is_named(key):
    res = results(True)
    del res[key]
    with pytest.raises(ValueError, match=f"results\\['{key}'\\] is missing"):
        chapter_claims(res, scale="smoke")


def test_a_missing_method_is_named():
    res = results(True)
    del res["runs"]["leaf"]["AdaFed"]
    with pytest.raises(ValueError, match=r"results\['runs'\]\['leaf'\]\['AdaFed'\] is missing"):
        chapter_claims(res, scale="smoke")


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="results"):
        chapter_claims([1], scale="smoke")
    with pytest.raises(ValueError, match="scale"):
        chapter_claims(results(True), scale="huge")
    with pytest.raises(TypeError, match="results"):
        paper_claims([1])


@pytest.mark.parametrize("true, verdict", [(True, "reproduced"), (False, "not reproduced")])
def test_paper_claims_go_both_ways(true, verdict):
    claims = paper_claims(paper_results(true))
    mnist = [c for c in claims if "MNIST" in c.source]
    assert len(claims) == 6 and len(mnist) == 3 and all(c.scale == "paper" for c in claims)
    assert [c.verdict for c in mnist] == [verdict] * 3
    assert all(c.verdict == "not run" and "python -m fedlab data fetch" in c.why for c in claims
               if "CIFAR" in c.source)


def test_paper_claims_without_results_say_how_to_fetch():
    claims = paper_claims(None)
    assert len(claims) == 6 and all(c.verdict == "not run" for c in claims)
    assert all("python -m fedlab data fetch" in c.why for c in claims)
