"""Claims as data: verdicts computed from stated rules, rendering and storage."""
import json
import re

import pytest

from fedlab.claims import MIME_TYPE, RULES, VERDICTS, Claim, claims_table, load_claims, save_claims, show_claims, tally


def claim(**kw):
    base = dict(chapter="00_primer", source="Fig. 1", statement="accuracy (%)", paper=80.0, measured=79.0,
                rule="tolerance", tolerance=2.0)
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
    ({"rule": "direction", "paper": 1.56, "measured": 0.3, "tolerance": None}, "reproduced"),
    ({"rule": "qualitative", "paper": "s=1 is linear", "measured": "smallest regret", "holds": False},
     "not reproduced"),
    ({"measured": None, "why": "CIFAR-10 absent: python -m fedlab data fetch cifar10"}, "not run"),
])
def test_verdicts_follow_the_rule(kw, verdict):
    assert claim(**kw).verdict == verdict
    assert set(VERDICTS) >= {verdict} and set(RULES) == {"tolerance", "direction", "qualitative"}


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
    ({"paper": (10.0, 5.0)}, r"paper must be a range \(low, high\) with low <= high, got \(10.0, 5.0\)"),
    ({"paper": (10, 5), "measured": None, "why": "not run"}, "low <= high"),        # checked even when not run
    ({"paper": 0.0, "relative": True}, r"relative=True .* non-zero paper value, got paper=0.0"),
    ({"paper": (0.0, None), "relative": True}, r"non-zero paper value, got paper=\(0.0, None\)"),
    ({"paper": (None, 0), "relative": True, "measured": None, "why": "not run"}, "non-zero paper value"),
])
def test_bad_claims_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        claim(**kw)


def test_rendering_and_tally():
    claims = [claim(), claim(measured=70.0, why="smaller model"), claim(measured=None, why="data absent")]
    table = claims_table(claims)
    rows = table.splitlines()
    assert len(rows) == 5 and len({r.count(" | ") for r in rows if not r.startswith("|---")}) == 1
    assert "| Fig. 1 | accuracy (%) | 80.00 | 79.00 | within ± 2 | reproduced |  |" in table
    assert tally(claims) == {"reproduced": 1, "direction only": 0, "not reproduced": 1, "not run": 1}
    assert claim(paper=(None, 0.2), digits=1).row()[2] == "≤ 0.2"
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
    assert "1 claims:** 1 reproduced" in shown[0]["text/markdown"]
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
