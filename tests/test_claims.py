"""Claims as data: kinds, scales, verdicts computed from stated rules (over seeds with their interval), rendering and
storage."""
import json
import re

import pytest

from fedlab.claims import (KINDS, MIME_TYPE, RULES, SCALES, VERDICTS, Claim, ClaimBuilder, claims_table, load_claims,
                           save_claims, show_claims, summary, tally, tally_by_kind)


def claim(**kw):
    base = dict(chapter="00_primer", source="Fig. 1", statement="accuracy (%)", paper=80.0, measured=79.0,
                rule="tolerance", tolerance=2.0, kind="experiment", scale="full")
    return Claim(**{**base, **kw})


@pytest.mark.parametrize("kw, verdict", [
    ({}, "reproduced"),
    ({"measured": 77.9}, "not reproduced"),
    ({"paper": (75.0, 78.0), "measured": 79.9}, "reproduced"),           # range widened by the tolerance
    ({"paper": (None, 0.2), "measured": 1.9, "tolerance": 0.0}, "not reproduced"),
    ({"paper": (None, 0.2), "measured": -3.0, "tolerance": 0.0}, "reproduced"),
    ({"paper": 100.0, "measured": 104.0, "tolerance": 0.05, "relative": True}, "reproduced"),
    ({"paper": 100.0, "measured": 106.0, "tolerance": 0.05, "relative": True}, "not reproduced"),
    ({"rule": "direction", "paper": -14.6, "measured": -6.5}, "direction only"),
    ({"rule": "direction", "paper": -14.6, "measured": -13.0}, "reproduced"),
    ({"rule": "direction", "paper": -14.6, "measured": 0.4}, "not reproduced"),
    ({"rule": "direction", "paper": 1.56, "measured": 0.3, "tolerance": None}, "direction only"),   # no size
    ({"rule": "direction", "paper": 1.9, "measured": 10.3, "tolerance": 1.0}, "direction only"),
    # over seeds: the 95 % interval inside the band, across its edge, outside it
    ({"measured": None, "seeds": (79.0, 79.5, 80.5, 81.0)}, "reproduced"),
    ({"measured": None, "seeds": (76.0, 80.0, 84.0)}, "inconclusive"),
    ({"measured": None, "seeds": (70.0, 70.5, 71.0)}, "not reproduced"),
    ({"measured": None, "seeds": (79.0,)}, "inconclusive"),                          # one seed cannot bound its noise
    ({"rule": "direction", "paper": 2.0, "measured": None, "seeds": (-1.0, 3.0, 4.0), "tolerance": 1.0},
     "inconclusive"),
    ({"rule": "direction", "paper": 2.0, "measured": None, "seeds": (-3.0, -2.5, -2.0)}, "not reproduced"),
    ({"rule": "direction", "paper": -8.2, "measured": None, "seeds": (-9.0, -6.0, 3.0)}, "inconclusive"),
    ({"rule": "direction", "paper": -8.2, "measured": None, "seeds": (-9.0, -8.0, -7.0), "tolerance": None},
     "direction only"),
    ({"rule": "direction", "paper": -8.2, "measured": None, "seeds": (1.0, 2.0, 3.0)}, "not reproduced"),
    ({"rule": "direction", "paper": 2.0, "measured": None, "seeds": (5.0, 5.5, 6.0), "tolerance": 1.0},
     "direction only"),
    ({"rule": "direction", "paper": 2.0, "measured": None, "seeds": (1.9, 2.0, 2.1), "tolerance": 1.0}, "reproduced"),
    ({"rule": "direction", "paper": 4.0, "measured": None, "seeds": (-0.5, 0.2, 1.0), "tolerance": 1.0},
     "not reproduced"),                                        # the sign is undecided but the paper's size excluded
    ({"rule": "direction", "paper": 2.0, "measured": None, "seeds": (2.4, 2.9, 3.4), "tolerance": 1.0},
     "inconclusive"),                                          # the sign holds, the size is undecided
    # kinds name the verdict: a consistency check is never a reproduction, an erratum is confirmed
    ({"kind": "consistency"}, "consistent"),
    ({"kind": "consistency", "measured": 70.0}, "inconsistent"),
    ({"kind": "erratum", "paper": 80.0, "corrected": 60.0, "measured": 60.5}, "erratum confirmed"),
    ({"kind": "erratum", "paper": 80.0, "corrected": 60.0, "measured": 80.0}, "not reproduced"),
    ({"kind": "erratum", "rule": "qualitative", "paper": "x < y", "measured": "x > y", "holds": True},
     "erratum confirmed"),
    ({"rule": "qualitative", "paper": "s=1 is linear", "measured": "smallest regret", "holds": False},
     "not reproduced"),
    ({"measured": None, "why": "CIFAR-10 absent: python -m fedlab data fetch cifar10"}, "not run"),
])
def test_verdicts_follow_the_rule(kw, verdict):
    assert claim(**kw).verdict == verdict
    assert claim(**kw).agrees is {"reproduced": True, "consistent": True, "erratum confirmed": True,
                                  "not reproduced": False, "inconsistent": False}.get(verdict)
    assert set(VERDICTS) >= {verdict} and set(RULES) == {"tolerance", "direction", "qualitative"}
    assert KINDS == ("experiment", "analytic", "consistency", "erratum") and SCALES == ("smoke", "full", "paper")


def test_seeds_give_the_mean_its_interval_and_the_seeds_that_would_decide():
    from scipy import stats

    seeds = (76.0, 80.0, 84.0)
    c = claim(measured=None, seeds=seeds)
    half = stats.t.ppf(0.975, 2) * stats.sem(seeds)
    assert c.measured == 80.0 and c.n_seeds == 3 and c.interval == pytest.approx((80 - half, 80 + half))
    # the band is [78, 82]: the mean sits 2 from its edges; with s = 4, n seeds decide once t_{n-1} 4 / sqrt(n) < 2
    assert c.seeds_needed == next(n for n in range(2, 100) if stats.t.ppf(0.975, n - 1) * 4 / n ** 0.5 < 2)
    assert "3 seeds, 95 % CI [" in c.row()[-1] and f"about {c.seeds_needed} seeds would decide" in c.row()[-1]
    assert claim(measured=None, seeds=(79.0, 79.5, 80.5, 81.0)).seeds_needed is None        # decided
    assert claim(measured=None, seeds=(79.0,)).evidence == \
        "1 seed, so no interval: the verdict needs at least two seeds"
    assert claim(paper=(0.0, None), tolerance=0.0).rule_text == "within the range"
    assert claim(paper=80.0, tolerance=0.0).rule_text == "exact"
    assert claim(measured=80.0, seeds=seeds).measured == 80.0                               # the mean may be given
    assert Claim.from_dict(c.to_dict()) == c
    stored = c.to_dict()
    assert stored["n_seeds"] == 3 and stored["interval"] == pytest.approx(list(c.interval))
    assert stored["seeds_needed"] == c.seeds_needed and stored["kind"] == "experiment" and stored["scale"] == "full"


def test_scale_is_on_every_verdict_and_a_smoke_disagreement_says_so():
    assert claim(measured=70.0, scale="smoke").row()[6] == "not reproduced at smoke scale"
    assert claim(measured=70.0, scale="full").row()[6] == "not reproduced"
    assert claim(scale="smoke").row()[6] == "reproduced"


def test_claim_builder_fills_chapter_kind_and_scale():
    build = ClaimBuilder("02_availability", scale="smoke")
    build.experiment("Fig. 2", "gain (pp)", 2.0, 2.1, "tolerance", tolerance=0.5)
    build.analytic("(2.27)", "bound", 1.0, 1.0, "tolerance", tolerance=0.0)
    build.consistency("§2", "batched equals loop", 0.0, 0.0, "tolerance", tolerance=1e-9)
    build.erratum("Prop. D.23", "constant", 4.0, 2.0, "tolerance", tolerance=0.0, corrected=2.0, why="a typo")
    build.experiment("Table 1", "accuracy (%)", 80.0, None, "tolerance", tolerance=1.0, scale="paper", why="absent")
    assert [c.kind for c in build.claims] == ["experiment", "analytic", "consistency", "erratum", "experiment"]
    assert [c.verdict for c in build.claims] == ["reproduced", "reproduced", "consistent", "erratum confirmed",
                                                 "not run"]
    assert {c.chapter for c in build.claims} == {"02_availability"} and build.claims[-1].scale == "paper"
    assert tally_by_kind(build.claims) == {"experiment": {"reproduced": 1, "not run": 1}, "analytic": {"reproduced": 1},
                                           "consistency": {"consistent": 1}, "erratum": {"erratum confirmed": 1}}
    text = summary(build.claims)
    assert "**5 claims** (measured at smoke, paper scale)." in text and "**Errata (1):** 1 erratum confirmed." in text
    with pytest.raises(ValueError, match="scale must be one of"):
        ClaimBuilder("02_availability", scale="huge")


@pytest.mark.parametrize("kw, match", [
    ({"rule": "exact"}, "rule must be one of"),
    ({"tolerance": None}, "needs a tolerance"),
    ({"tolerance": -1.0}, "tolerance must be"),
    ({"measured": float("nan")}, "measured must be a finite number"),
    ({"paper": "about 80"}, "paper must be a number"),
    ({"rule": "direction", "paper": 0.0}, "non-zero paper number"),
    ({"rule": "qualitative", "paper": "x"}, "holds"),
    ({"measured": None}, "why must say why"),
    ({"source": " "}, "source must be a non-empty string"),
    ({"kind": "reproduction"}, "kind must be one of"),
    ({"scale": "medium"}, "scale must be one of"),
    ({"kind": "erratum"}, "kind 'erratum' needs the corrected value"),
    ({"corrected": 70.0}, "corrected is for kind 'erratum' only"),
    ({"measured": 79.0, "seeds": (70.0, 72.0)}, r"measured must be None or the mean 71.0 of seeds"),
    ({"measured": None, "seeds": ()}, "seeds must hold at least one value"),
    ({"measured": None, "seeds": (1.0, float("nan"))}, r"seeds\[1\] must be a finite number"),
    ({"paper": (10.0, 5.0)}, r"paper must be a range \(low, high\) with low <= high, got \(10.0, 5.0\)"),
    ({"paper": (10, 5), "measured": None, "why": "not run"}, "low <= high"),        # checked even when not run
    ({"paper": 0.0, "relative": True}, r"relative=True .* non-zero paper value, got paper=0.0"),
    ({"paper": (0.0, None), "relative": True}, r"non-zero paper value, got paper=\(0.0, None\)"),
    ({"paper": (None, 0), "relative": True, "measured": None, "why": "not run"}, "non-zero paper value"),
])
def test_bad_claims_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        claim(**kw)
    with pytest.raises(TypeError, match="seeds must be a sequence of per-seed numbers"):
        claim(rule="qualitative", paper="x", measured="y", holds=True, seeds=(1.0, 2.0))


def test_rendering_and_tally():
    claims = [claim(), claim(measured=70.0, why="smaller model"), claim(measured=None, why="data absent")]
    table = claims_table(claims)
    rows = table.splitlines()
    assert len(rows) == 5 and len({r.count(" | ") for r in rows if not r.startswith("|---")}) == 1
    assert "| Fig. 1 | accuracy (%) | experiment | 80.00 | 79.00 | within ± 2 | reproduced |  |" in table
    assert tally(claims) == {**dict.fromkeys(VERDICTS, 0), "reproduced": 1, "not reproduced": 1, "not run": 1}
    assert claim(paper=(None, 0.2), digits=1).row()[3] == "≤ 0.2"
    assert claim(rule="direction", paper=-1.0, measured=-2.0, tolerance=0.5).rule_text == "same sign, within ± 0.5"


def test_round_trip_and_atomic_file(tmp_path):
    claims = [claim(paper=(1.0, 2.0), measured=1.5),
              claim(rule="qualitative", statement="a statement", paper="p", measured="m", holds=True)]
    path = save_claims(claims, tmp_path / "c.json")
    assert load_claims(path) == claims
    assert json.loads(path.read_text())[0]["verdict"] == "reproduced"
    assert (path.stat().st_mode & 0o777) == 0o644 and list(tmp_path.iterdir()) == [path]
    path.write_text("{not json")
    with pytest.raises(ValueError, match="is not a claims file"):
        load_claims(path)


def test_show_claims_attaches_json(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    show_claims([claim()])
    assert shown[0][MIME_TYPE][0]["verdict"] == "reproduced"
    assert "**Experiments (1):** 1 reproduced." in shown[0]["text/markdown"]
    with pytest.raises(TypeError, match="Claim"):
        show_claims([{"source": "x"}])


def test_a_statement_has_one_paper_value():
    same = [claim(paper=80.0), claim(paper=80, measured=None, why="data absent"), claim(statement="loss", paper=1.0)]
    assert tally(same)["reproduced"] == 1 and "| Fig. 1 | loss |" in claims_table(same)
    ranged = claim(paper=(1.0, 2.0), measured=1.5)
    assert tally([ranged, Claim.from_dict(ranged.to_dict()), claim(paper=[1.0, 2.0], measured=5.0)])["reproduced"] == 2
    conflicting = [claim(paper=80.0), claim(paper=75.0, measured=76.0)]
    message = "claims must give one paper value per statement, got 80.0 and 75.0 for 'accuracy (%)' (00_primer, Fig. 1)"
    for check in (tally, claims_table, show_claims, lambda c: save_claims(c, "unused.json")):
        with pytest.raises(ValueError, match=re.escape(message)):
            check(conflicting)
    assert tally([claim(paper=80.0), claim(chapter="01_topology", paper=75.0, measured=76.0)])["reproduced"] == 2


def test_check_results_names_the_missing_key_and_what_it_holds():
    from fedlab.claims import check_results

    results = {"runs": {}}
    assert check_results(results, {"runs": "the runs"}) is results
    with pytest.raises(ValueError, match=r"results\['lrs'\] is missing: the step grid"):
        check_results(results, {"runs": "the runs", "lrs": "the step grid"})
    with pytest.raises(TypeError, match="results"):
        check_results([("runs", 1)], {"runs": "the runs"})
