"""The chapter's claims (fedlab.online.claims) from small hand-made results: every rule goes both ways."""
import math

import numpy as np
import pytest

from fedlab.claims import tally_by_kind
from fedlab.online.claims import CHAPTER, chapter_claims, paper_claims
from fedlab.online.experiments import LINEAR_RATIO, late_regret_ratio
from fedlab.online.published import FIG49_C, FIG49_N, FIG49_S, THESIS_FIG49

T = 200
t = np.arange(1, T + 1, dtype=float)
LINEAR = 5.0 + 0.5 * t                       # rho = 1
SQRT = 3.0 * np.sqrt(t)                      # rho = 0.65
N_CLAIMS = 14


def power(p):
    """A regret curve t^p: rho = (7/3)^(p - 1)."""
    return t ** p


def thesis(linear_ok: bool, seeds: int = 3, *, override=None):
    """Fig. 4.9 at the thesis's setting, d = 2 and 10: the paper's shapes when ``linear_ok``, the opposite otherwise."""
    c, s, n = THESIS_FIG49["n_clients"], THESIS_FIG49["spread"], THESIS_FIG49["n_samples"]
    keys = {}
    for v in FIG49_N["linear"] + FIG49_N["sublinear"]:
        keys[(v, c, s)] = v in FIG49_N["linear"]
    for v in FIG49_C["linear"] + FIG49_C["sublinear"]:
        keys[(1, v, s)] = v in FIG49_C["linear"]
    for v in FIG49_S["linear"] + FIG49_S["sublinear"]:
        keys[(n, c, float(v))] = v in FIG49_S["linear"]
    out = {}
    for d in (2, 10):
        for k, linear in keys.items():
            curve = LINEAR if linear == linear_ok else SQRT
            runs = [(curve * (1 + 0.1 * i)).tolist() for i in range(seeds)]
            if override and k in override:
                runs = [np.asarray(r, float).tolist() for r in override[k]]
            out[(d, *k)] = {"t": t.tolist(), "runs": runs, "min_separation": 3.0}
    return out


def digits_entry(fem, fed):
    return {"t": t[:100].tolist(), "comparator_accuracy": 0.9, "n_test": 500,
            "fem_omd": {"regret": list(fem), "mean_accuracy": 0.5},
            "fedomd": {"regret": list(fed), "mean_accuracy": 0.8}}


def paper_entry(fem, fed):
    return {"seeds": [0, 1], "mean": {"t": t.tolist(), "comparator_accuracy": 0.95,
                                      "fem_omd": {"regret": list(fem), "mean_accuracy": 0.8},
                                      "fedomd": {"regret": list(fed), "mean_accuracy": 0.7}}}


def results(true: bool = True, *, seeds: int = 3, paper: bool = True, **changes):
    flat = np.minimum(t, 5.0)                # stops growing: sub-linear from t = 6
    fem, fed = (flat, 0.3 * t) if true else (0.3 * t, flat)
    circle_run = {"mean_regret": SQRT.tolist(), "regret_per_step": float(SQRT[-1] / T)}
    out = {
        "thesis": thesis(true, seeds),
        "circle": {"n": {1: [circle_run]}, "C": {5: [circle_run], 100: [circle_run]}, "s": {1.0: [circle_run]}},
        "fixed_across": {"C": {5: 0.66, 100: 0.30}, "s": {1.0: 0.38, 4.0: 0.37}},
        "separated_limit": [{"ratio": 0.03 if true else 1.5, "valid": True}, {"ratio": 0.01, "valid": True}],
        "bound_442_ratio": (np.full(T, 0.5) if true else np.linspace(1.5, 0.3, T)).tolist(),
        "bound_443_ratio": 0.01 if true else 1.2,
        "grad_error": {"mean": 0.3, "median": 0.2, "share_above": 0.01, "share_of_total": 0.2 if true else 0.99,
                       "max_true_norm": 12.0, "mean_below": 0.25},
        "digits": {"iid": [digits_entry(fem[:100], fed[:100])], "fixed": [digits_entry(flat[:100], flat[:100])]},
        "paper": ({"mnist": paper_entry(fem, fed), "cifar10": paper_entry(0.3 * t, 0.2 * t) if true
                   else paper_entry(flat, 0.2 * t)} if paper else None),
    }
    out.update(changes)
    return out


def test_the_ratio_reads_linear_and_square_root_curves():
    assert late_regret_ratio(LINEAR) == pytest.approx(1.0)
    assert late_regret_ratio(SQRT) == pytest.approx(0.65, abs=0.01)
    assert late_regret_ratio(power(1.0)) == pytest.approx(1.0)
    assert late_regret_ratio(power(0.5)) < LINEAR_RATIO < late_regret_ratio(power(0.9))
    assert math.isnan(late_regret_ratio(-t))                                 # regret falling: undefined


@pytest.mark.parametrize("true, expected", [(True, {"reproduced", "consistent"}),
                                            (False, {"not reproduced", "inconsistent"})])
def test_every_rule_goes_both_ways(true, expected):
    claims = chapter_claims(results(true), scale="full")
    assert len(claims) == N_CLAIMS
    assert {c.kind for c in claims} == {"experiment", "analytic", "consistency"}
    for c in claims:
        assert c.verdict in expected, (c.source, c.statement, c.measured, c.verdict)
        assert c.chapter == CHAPTER and c.why


def test_kinds_scales_and_seeds():
    claims = chapter_claims(results(), scale="smoke")
    counts = tally_by_kind(claims)
    assert sum(counts["experiment"].values()) == 10 and sum(counts["analytic"].values()) == 2
    assert sum(counts["consistency"].values()) == 2 and counts["erratum"] == {}
    by_scale = {c.scale for c in claims if "Fig. 4.9" in c.source}
    assert by_scale == {"smoke"}
    assert {c.scale for c in claims if "Fig. 4.10" in c.source} == {"paper"}   # the real data, when given
    shapes = [c for c in claims if "regret (ρ" in c.statement]
    assert len(shapes) == 6 and all(c.n_seeds == 3 and c.interval is not None for c in shapes)
    assert all("d = 10" in c.why and "circle" in c.why for c in shapes)
    paper_scale = chapter_claims(results(), scale="paper")
    assert {c.scale for c in paper_scale if "Fig. 4.9" in c.source} == {"full"}


def test_one_seed_is_a_single_measurement_and_smoke_disagreement_says_so():
    claims = chapter_claims(results(False, seeds=1), scale="smoke")
    shapes = [c for c in claims if "regret (ρ" in c.statement]
    assert all(c.seeds is None and c.measured is not None for c in shapes)
    assert all(c.verdict_text == "not reproduced at smoke scale" for c in shapes)


def test_a_spread_across_the_threshold_is_inconclusive():
    c, s = THESIS_FIG49["n_clients"], THESIS_FIG49["spread"]
    spread = [power(0.6), power(0.95), power(0.7), power(1.0)]              # rho 0.71 .. 1.0 around 0.8
    claims = chapter_claims(results(seeds=4, thesis=thesis(True, 4, override={(1, c, s): spread})), scale="full")
    n1 = next(x for x in claims if x.statement.startswith("n = 1"))
    assert n1.verdict == "inconclusive" and n1.n_seeds == 4
    assert "seeds would decide" in n1.evidence or "would not decide" in n1.evidence


def test_an_undefined_ratio_drops_the_seed_and_no_seed_left_is_not_run():
    c, s = THESIS_FIG49["n_clients"], THESIS_FIG49["spread"]
    falling = [(-t).tolist()] * 3
    claims = chapter_claims(results(thesis=thesis(True, override={(1, 100, s): falling})), scale="full")
    c100 = next(x for x in claims if x.statement.startswith("C = 100"))
    assert c100.verdict == "not run" and "undefined" in c100.why
    mixed = [LINEAR.tolist(), (-t).tolist(), LINEAR.tolist()]
    claims = chapter_claims(results(thesis=thesis(True, override={(1, c, s): mixed})), scale="full")
    n1 = next(x for x in claims if x.statement.startswith("n = 1"))
    assert n1.n_seeds == 2 and "1 dropped" in n1.why and n1.verdict == "reproduced"


def test_outside_paper_mode_fig410_is_not_run_and_the_digits_are_a_note():
    claims = chapter_claims(results(paper=False), scale="smoke")
    assert len(claims) == N_CLAIMS
    fig410 = [c for c in claims if "Fig. 4.10" in c.source]
    assert len(fig410) == 3 and all(c.verdict == "not run" and c.scale == "paper" for c in fig410)
    assert all("fetch mnist" in c.why and "digits" in c.why and "not the paper's experiment" in c.why
               for c in fig410 if "MNIST" in c.source)
    assert "fetch cifar10" in fig410[-1].why and "digits" not in fig410[-1].why
    assert "FEM-OMD sub-linear from t = 6" in fig410[0].why                 # what the digits stand-in showed


def test_paper_claims_alone():
    claims = paper_claims(results()["paper"])
    assert [c.verdict for c in claims] == ["reproduced"] * 3 and {c.scale for c in claims} == {"paper"}
    absent = paper_claims(None)
    assert [c.verdict for c in absent] == ["not run"] * 3
    assert "mnist" in absent[0].why and "cifar10" in absent[-1].why
    only_mnist = paper_claims({"mnist": results()["paper"]["mnist"]})
    assert [c.verdict for c in only_mnist] == ["reproduced", "reproduced", "not run"]


@pytest.mark.parametrize("key", ["thesis", "circle", "fixed_across", "separated_limit", "bound_442_ratio",
                                 "bound_443_ratio", "grad_error", "digits", "paper"])
def test_a_missing_key_is_named(key):
    bad = results()
    del bad[key]
    with pytest.raises(ValueError, match=repr(key)):
        chapter_claims(bad, scale="smoke")


def test_bad_results_are_named():
    with pytest.raises(TypeError, match="results"):
        chapter_claims([1], scale="smoke")
    with pytest.raises(ValueError, match="scale"):
        chapter_claims(results(), scale="huge")
    partial = results()
    partial["thesis"] = {k: v for k, v in partial["thesis"].items() if k[2] != 100}
    with pytest.raises(ValueError, match=r"\(2, 1, 100, 5.0\)"):
        chapter_claims(partial, scale="smoke")
    with pytest.raises(ValueError, match="separated_limit"):
        chapter_claims(results(separated_limit=[]), scale="smoke")
    with pytest.raises(ValueError, match="bound_442_ratio"):
        chapter_claims(results(bound_442_ratio=[]), scale="smoke")
    with pytest.raises(TypeError, match="results"):
        paper_claims([1])
    with pytest.raises(ValueError, match="digits"):
        chapter_claims(results(digits={"iid": [], "fixed": []}), scale="smoke")
    with pytest.raises(ValueError, match="fixed"):
        chapter_claims(results(digits={"iid": []}), scale="smoke")
