"""The claims of notebook 03 (fedlab.fedem.claims) on hand-made results: every verdict branch, both ways."""
import copy
import re

import numpy as np
import pytest

from fedlab.fedem.claims import GAP_TOLERANCE, TABLE_LABELS, chapter_claims, distance_to_paper, paper_claims
from fedlab.fedem.published import (PAPER_TABLE_3_2, PAPER_TABLE_3_3, PAPER_TABLE_5, PAPER_TABLE_6,
                                    PAPER_TABLE_6_BEST, PAPER_TABLE_7)

SEEDS = 3
OFFSETS = np.array([-0.0005, 0.0, 0.0005])
"""Per-seed offsets shared by every method (fractions): a small spread, and paired gaps without spread."""
JUDGED = ("experiment", "analytic", "erratum", "consistency")
N_CHAPTER = 34
"""Claims of chapter_claims without paper mode: 2 (toy, EM) + 16 (Table 3.2) + 1 (generators) + 1 (digits)
+ 3 (effect of M) + 6 (Table 3.3, E.11) + 3 (Table 5, SLEM) + 2 (sampling)."""
N_PAPER = 133


def _scores(average: float, bottom: float | None = None) -> dict:
    """Per-seed scores around ``average`` (and ``bottom``), in %."""
    bottom = average if bottom is None else bottom
    return {"average": list(average / 100 + OFFSETS), "bottom_decile": list(bottom / 100 + OFFSETS)}


def _table_3_2(shift: float = 0.0, fedem_shift: float = 0.0) -> dict:
    paper = PAPER_TABLE_3_2["Synthetic"]
    out = {m: _scores(paper[label][0] + (fedem_shift if m == "fedem" else shift),
                      paper[label][1] + (fedem_shift if m == "fedem" else shift)) for m, label in TABLE_LABELS.items()}
    out["clustered"]["n_clusters"] = [1] * SEEDS
    return out


def _rows(*values: float) -> list:
    """A (seeds, len(values)) table of accuracies in % (the same row shifted by the seed offsets)."""
    return [list(np.asarray(values) / 100 + o) for o in OFFSETS]


def results(true: bool = True) -> dict:
    """Results under which every statement of the paper holds (``true``), or none does."""
    t5, t33 = PAPER_TABLE_5["Synthetic"], PAPER_TABLE_3_3["Synthetic"]
    return {
        "setting": {"n_clients": 300, "dim": 150, "rounds": 200, "seed": 0},
        "toy": {"Local": {"average": 0.95}, "FedAvg": {"average": 0.5 if true else 0.9},
                "FedEM (M=2)": {"average": 0.97 if true else 0.6}},
        "em": {"centralized_steps": [0.5, 0.0] if true else [0.5, -0.1], "federated_monotone": true},
        "synthetic_bug": _table_3_2() if true else _table_3_2(shift=5.0, fedem_shift=-10.0),
        "synthetic": _table_3_2(shift=10.0, fedem_shift=10.0) if true else _table_3_2(),
        "digits": {"local": _scores(75.0), "fedavg": _scores(70.0), "fedem": _scores(90.0 if true else 60.0)},
        "oracle": {"synthetic": 0.9, "synthetic_bug": 0.8},
        "constant_tail": 0.27,
        "effect_of_m": {"average": _rows(68, 75, 76, 76, 76) if true else _rows(75, 70, 80, 80, 80)},
        "m1_gap": 0.0 if true else 1e-3,
        "unseen": {"FedAvg": {"average": t33["FedAvg"][0] / 100 if true else 0.8},
                   "FedAvg+": {"average": t33["FedAvg+"][0] / 100 if true else 0.8},
                   "FedEM (1 EM step)": {"average": t33["FedEM"][0] / 100 if true else 0.6},
                   "FedEM (50 EM steps)": {"average": 0.75},
                   "pi_entropy": {"seen": 0.3, "unseen": {1: 0.9 if true else 0.1, 50: 0.5}}},
        "decentralized": {"FedEM": {"average": t5["FedEM"] / 100},
                          "D-FedEM (FMMC)": {"average": t5["D-FedEM"] / 100 if true else 0.85,
                                             "consensus": [1.0, 0.1]},
                          "slem": {"fmmc": 0.2 if true else 0.5, "metropolis": 0.4}},
        "clustered": {"tol_2": [1.6, 0.8], "average": _rows(69, 72), "n_clusters": [[1, 2]] * SEEDS,
                      "fedem": list(0.747 + OFFSETS)},
        "sampling": {"rates": [0.2, 0.5, 1.0],
                     "average": {"fedavg+": _rows(60, 65, 70) if true else _rows(65, 68, 70),
                                 "fedem": _rows(65.7, 70, 74.7) if true else _rows(60, 70, 80)}},
        "paper": None,
    }


def paper_results(true: bool = True) -> dict:
    """run_paper's output with the paper's numbers (``true``), or with every number and ordering wrong."""
    def pct(value, shift=0.0):
        return (value + shift) / 100

    names = {"femnist": "FEMNIST", "emnist": "EMNIST", "cifar10": "CIFAR10", "cifar100": "CIFAR100",
             "shakespeare": "Shakespeare"}
    out = {}
    for key, row in names.items():
        fedem = 0.0 if true else -20.0
        other = 0.0 if true else 5.0
        # Table 6's FedEM: below the rest where the paper says it is best, above where it says it is not
        k_over_m = 0.0 if true else (-20.0 if PAPER_TABLE_6_BEST[row] else 20.0)
        methods = {label: {"average": pct(a, fedem if label == "FedEM" else other),
                           "bottom_decile": pct(b, fedem if label == "FedEM" else other),
                           "best_average": pct(PAPER_TABLE_6[row][label][0], other),
                           "best_within_k_over_m": pct(PAPER_TABLE_6[row][label][0], k_over_m)}
                   for label, (a, b) in PAPER_TABLE_3_2[row].items()}
        unseen = {label: {"test": pct(test, (-30.0 if label == "FedEM" else other) if not true else 0.0),
                          "train": pct(train)} for label, (test, train) in PAPER_TABLE_3_3[row].items()}
        out[key] = {"seeds": [0], "mean": {"methods": methods, "unseen": unseen,
                                           "d-fedem": {"average": pct(PAPER_TABLE_5[row]["D-FedEM"], other)}}}
    for key, row in (("cifar10_sampling", "CIFAR10"), ("cifar100_sampling", "CIFAR100")):
        methods = {label: {"average": pct(v, (0.0 if true else (-20.0 if label == "FedEM" else 5.0)))}
                   for label, v in PAPER_TABLE_7[row].items()}
        out[key] = {"seeds": [0, 1, 2], "mean": {"methods": methods}}
    return out


def _verdicts(claims):
    return [(c.source, c.statement, c.kind, c.verdict) for c in claims]


# ------------------------------------------------------------------------------------------------ both ways


@pytest.mark.parametrize("true", [True, False])
def test_every_claim_goes_both_ways(true):
    """Issue 25 item 5: the paper's statements true give agreement for every claim, false give disagreement."""
    claims = chapter_claims(results(true), scale="full")
    assert len(claims) == N_CHAPTER + N_PAPER
    mine = [c for c in claims if c.scale == "full"]
    assert len(mine) == N_CHAPTER and all(c.kind in JUDGED for c in mine)
    wrong = [v for c, v in zip(mine, _verdicts(mine)) if c.agrees is not true]
    assert not wrong, wrong


@pytest.mark.parametrize("true", [True, False])
def test_every_paper_claim_goes_both_ways(true):
    claims = paper_claims(paper_results(true))
    assert len(claims) == N_PAPER and all(c.scale == "paper" and c.kind == "experiment" for c in claims)
    expected = "reproduced" if true else "not reproduced"
    wrong = [v for v in _verdicts(claims) if v[3] != expected]
    assert not wrong, wrong


def test_kinds_and_scale():
    claims = chapter_claims(results(), scale="smoke")
    kinds = {}
    for c in claims:
        kinds.setdefault(c.kind, set()).add(c.scale)
    assert kinds == {"experiment": {"smoke", "paper"}, "consistency": {"smoke"}}
    consistency = {c.source for c in claims if c.kind == "consistency"}
    assert consistency == {"Prop. 3.5.2 (EM)", "spec §10.1 (the reference generator's bug)", "Algorithm 7 with M = 1",
                           "App. E.9 (FMMC, Assumption 15)"}
    assert all(c.why for c in claims)  # the why of every claim, reproduced ones too


def test_one_claim_per_table_cell_on_the_papers_generator():
    """Table 3.2's Synthetic cells are judged once, on the reference generator; the corrected one is a note."""
    claims = [c for c in chapter_claims(results(), scale="full") if c.source.startswith("Table 3.2, Synthetic")]
    assert len(claims) == 14 and len({(c.source, c.statement) for c in claims}) == 14
    fedem = next(c for c in claims if c.source.endswith("FedEM") and c.statement.startswith("average"))
    assert fedem.paper == 74.7 and fedem.n_seeds == SEEDS and "corrected generator: 84.7" in fedem.why
    clustered = next(c for c in claims if c.source.endswith("Clustered FL") and c.statement.startswith("average"))
    assert "first splits at tol_2 = 0.8" in clustered.why and "reaches 72.0 %" in clustered.why


# ------------------------------------------------------------------------------------------------ branches


def test_single_seed_is_judged_by_its_value():
    res = results()
    for method in res["synthetic_bug"].values():
        for key in ("average", "bottom_decile"):
            method[key] = method[key][1:2]
    res["synthetic_bug"]["clustered"]["n_clusters"] = [1]
    claims = [c for c in chapter_claims(res, scale="smoke") if c.source.startswith("Table 3.2, Synthetic")]
    assert all(c.n_seeds is None and c.verdict == "reproduced" for c in claims)
    assert all("1 seed (no interval)" in c.why for c in claims)


def test_spread_seeds_are_inconclusive_and_say_how_many_would_decide():
    res = results()
    res["digits"]["fedem"]["average"] = [0.70, 0.78, 0.86]  # FedEM − Local: -5, +3, +11 pp
    claim = next(c for c in chapter_claims(res, scale="smoke") if "digits" in c.source)
    assert claim.verdict == "inconclusive" and claim.verdict_text == "inconclusive at smoke scale"
    assert claim.seeds_needed > SEEDS and "seeds would decide" in claim.row()[-1]


def test_a_gap_of_the_right_sign_and_wrong_size_is_direction_only():
    res = results()
    res["sampling"]["average"]["fedem"] = _rows(61.0, 70, 71.0)  # FedEM − FedAvg+ at 20 %: +1.0 pp, paper +5.7
    claim = next(c for c in chapter_claims(res, scale="smoke") if c.source.startswith("Table 7"))
    assert claim.rule == "direction" and claim.tolerance == GAP_TOLERANCE
    assert claim.verdict == "direction only" and claim.verdict_text == "direction only at smoke scale"


def test_smoke_scale_disagreement_reads_as_such():
    claims = chapter_claims(results(False), scale="smoke")
    assert {c.verdict_text for c in claims if c.scale == "smoke"} == {"not reproduced at smoke scale",
                                                                       "inconsistent at smoke scale"}


def test_table_7_without_the_20_percent_rate_is_not_run():
    res = results()
    res["sampling"] = {"rates": [0.5, 1.0], "average": {"fedavg+": _rows(65, 70), "fedem": _rows(70, 74.7)}}
    claim = next(c for c in chapter_claims(res, scale="smoke") if c.source.startswith("Table 7"))
    assert claim.verdict == "not run" and "do not include 0.2" in claim.why


def test_clustered_fl_that_never_splits_says_so():
    res = results()
    res["clustered"]["n_clusters"] = [[1, 1]] * SEEDS
    claim = next(c for c in chapter_claims(res, scale="smoke") if c.source == "Table 3.2, Synthetic, Clustered FL")
    assert "no tested tol_2" in claim.why


def test_paper_claims_without_results_are_not_run_with_the_command():
    claims = paper_claims(None)
    assert len(claims) == N_PAPER
    assert all(c.verdict == "not run" and "python -m fedlab data fetch" in c.why for c in claims)
    paper = {(c.source, c.statement): c.paper for c in claims}
    assert paper[("Table 3.2, FEMNIST, FedEM", "average test accuracy (%)")] == 79.9
    assert paper[("Table 6 (App. E.13), CIFAR10, FedEM", "best test accuracy within K/M rounds (%)")] == 82.5


def test_distance_to_paper():
    assert distance_to_paper(_table_3_2()) == pytest.approx(0.0, abs=1e-9)
    assert distance_to_paper(_table_3_2(shift=2.0, fedem_shift=2.0)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="scores must be a mapping with the key 'fedem'"):
        distance_to_paper({m: v for m, v in _table_3_2().items() if m != "fedem"})


# ------------------------------------------------------------------------------------------------ bad results


@pytest.mark.parametrize("path", [("toy",), ("unseen", "FedAvg+"), ("synthetic_bug", "fedem"),
                                  ("decentralized", "slem"), ("sampling", "rates")])
def test_a_missing_key_names_it(path):
    res = copy.deepcopy(results())
    parent = res
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    with pytest.raises(ValueError, match=r"results.* the key " + re.escape(repr(path[-1]))):
        chapter_claims(res, scale="smoke")


def test_bad_values_are_rejected():
    with pytest.raises(TypeError, match="results"):
        chapter_claims([1], scale="smoke")
    with pytest.raises(ValueError, match="scale"):
        chapter_claims(results(), scale="huge")
    res = results()
    res["digits"]["fedem"]["average"] = [0.9, float("nan"), 0.9]
    with pytest.raises(ValueError, match=r"results\['digits'\]\['fedem'\]\['average'\]"):
        chapter_claims(res, scale="smoke")
    res = results()
    res["digits"]["fedem"]["average"] = [0.9]
    with pytest.raises(ValueError, match="same seeds"):
        chapter_claims(res, scale="smoke")
    res = results()
    res["effect_of_m"]["average"] = _rows(68, 75)
    with pytest.raises(ValueError, match="effect_of_m"):
        chapter_claims(res, scale="smoke")
    with pytest.raises(TypeError, match="results"):
        paper_claims([1])
