"""The claims of notebook 04 (fedlab.knnper.claims): every rule goes both ways, every verdict branch is reached, and
the results are checked at the boundary."""
import copy
import functools

import numpy as np
import pytest

from fedlab.claims import tally_by_kind
from fedlab.knnper.algorithms import PRESETS
from fedlab.knnper.claims import RESULT_KEYS, chapter_claims, paper_claims
from fedlab.knnper.published import PAPER_METHODS, PAPER_TABLE_3_5, PAPER_TABLE_3_6, smallest_gain
from fedlab.knnper.real_data import TABLE_NAMES

SEEDS = 3
N_DIGITS = 600
JITTER = (0.0, 2e-4, -2e-4)
"""Per-seed noise (accuracy): small enough for 3 seeds to decide."""


def _runs(gains: dict, kinds=("average", "bottom_decile"), *, table: str = "3.5", sign: float = 1.0,
          base: float = 0.95) -> list[dict]:
    """One run per seed: kNN-Per at ``base``; each baseline ``sign`` × the thesis' smallest gain below it."""
    runs = []
    for s in range(SEEDS):
        methods = {"knnper": {k: base for k in kinds}}
        for m in gains:
            methods[m] = {k: base - sign * smallest_gain(table, PRESETS[m].label, i)[0] / 100 + JITTER[s]
                          for i, k in enumerate(kinds)}
        runs.append({"methods": methods, "n_test": [30] * 20, "new_clients": [0, 1, 2, 3],
                     "diagnosis": {"clients_all_tied": 1, "validation_sizes": [15] * 6, "shared": 0.95,
                                   "oracle": 0.97}})
    return runs


def _sensitivity(spread: float) -> dict:
    k_values, sigma_values = list(range(1, 21)), [0.1, 1.0, 10.0, 100.0, 1000.0]
    return {"k_values": k_values, "best_by_k": [0.93 + spread * (k % 2) for k in k_values],
            "sigma_values": sigma_values, "best_by_sigma": [0.93 + spread * (i % 2) for i in range(5)],
            "n_test": N_DIGITS // SEEDS, "store_sizes": [250, 260, 270], "global_accuracy": 0.9}


def make_results(true: bool) -> dict:
    """Results under which every statement of the thesis holds (``true``) or fails."""
    sign = 1.0 if true else -1.0
    baselines = {m: None for m in ("local", "fedavg", "fedavg+", "ditto", "fedrep", "apfl")}
    caps = [0.0, 0.1, 0.3, 1.0]
    curves = ({0.1: [0.5, 0.8, 0.85, 0.9], 0.3: [0.8, 0.86, 0.88, 0.9], 1.0: [0.9, 0.91, 0.92, 0.92]} if true else
              {0.1: [0.9, 0.85, 0.8, 0.5], 0.3: [0.9, 0.91, 0.91, 0.95], 1.0: [0.5, 0.5, 0.5, 0.95]})
    glob = {0.1: 0.8, 0.3: 0.85, 1.0: 0.9} if true else {0.1: 0.9, 0.3: 0.85, 1.0: 0.8}
    fig37 = {a: {"global": np.array([[0.5, g]]), "knnper": np.array([[0.5, g + sign * 0.05]])} for a, g in glob.items()}
    steps = 20
    fifo = [0.9] * 10 + ([0.5, 0.7, 0.85, 0.9] + [0.9] * 6 if true else [0.5] * 10)
    concat = [0.9] * 10 + ([0.5, 0.6, 0.7, 0.8, 0.9] + [0.9] * 5 if true else [0.5, 0.9] + [0.9] * 8)
    fixed = [0.9] * 10 + ([0.4] * 10 if true else [0.9] * 10)
    return {
        "alpha": 0.3, "n_clients": 20, "n_large": 6, "k": 10,
        "main_runs": _runs(baselines, sign=sign),
        "new_runs": _runs({m: None for m in ("fedavg", "fedavg+", "ditto", "fedrep")}, ("average",), table="3.6",
                          sign=sign),
        "decide_runs": _runs({"ditto": None, "fedavg": None}, sign=sign),
        "sensitivity": [_sensitivity(0.0 if true else 0.05)] * SEEDS,
        "sensitivity_small": _sensitivity(0.0 if true else 0.05),
        "capacity_curves": {"capacities": caps, "accuracy": curves},
        "fig_3_7": {"capacities": [0.5, 1.0], "accuracy": fig37},
        "fig_3_11": {"capacities": [0.5, 1.0],
                     "accuracy": {"knnper": [[0.9, 0.95]], "ditto": [[0.9 - sign * 0.05, 0.95 - sign * 0.05]]}},
        "lambda_opt": {"sizes": [10, 20, 30], "lambda_opt": [0.1, 0.3, 0.5], "correlation": sign * 0.9},
        "quality": {"rounds": [1, 2, 3, 4], "global": [0.2, 0.4, 0.6, 0.8],
                    "knn_only": [0.3, 0.5, 0.7, 0.9] if true else [0.3, 0.9, 0.2, 0.8]},
        "system": {"delta_c": [0.0, 0.2, 0.45], "all": [0.95, 0.94, 0.95 - sign * 0.05], "weak": [0.9] * 3,
                   "strong": [1.0] * 3},
        "shift": {"steps": list(range(steps)), "k0": 10, "global": [0.9] * steps, "n_test": [200] * steps,
                  "accuracy": {"fixed": fixed, "fifo": fifo, "concat": concat}},
        "bound": {"L_star": 0.05 if true else 1.0, "disc": 0.3 if true else 0.0, "n": 1e4, "d_H": 10, "gamma1": 0.5,
                  "gamma2": 0.5},
        "cost": {"fedavg": {"upload_bytes": 100}, "knnper": {"upload_bytes": 100},
                 "fedem": {"upload_bytes": 300 if true else 200}},
        "new_clients_test_digits": 160,
    }


def _paper_results(true: bool) -> dict:
    """Paper-mode results on every data set, each number at the thesis' value (``true``) or 10 pp off it (kNN-Per
    below, the others above)."""
    out = {}
    for dataset, row in TABLE_NAMES.items():
        def value(label, cell):
            return cell / 100 + (0.0 if true else 0.1) * (-1 if label == "kNN-Per" else 1)

        methods = {label: {"average": value(label, cell[0]), "bottom_decile": value(label, cell[1])}
                   for label, cell in zip(PAPER_METHODS, PAPER_TABLE_3_5[row]) if cell is not None}
        unseen = {label: {"average": value(label, cell[0])}
                  for label, cell in zip(PAPER_METHODS[1:], PAPER_TABLE_3_6[row]) if cell is not None}
        if dataset == "cifar10" and not true:
            methods["Local"]["average"] = 0.95
        out[dataset] = {"seeds": [0], "mean": {"methods": methods, "unseen": unseen}}
    return out


@functools.cache
def _all(true: bool, scale: str = "full") -> tuple:
    return tuple(chapter_claims(make_results(true), scale=scale) + paper_claims(_paper_results(true)))


N_DIGITS_CLAIMS = 12 + 4 + 2 + 2 + 2 + 3 + 1 + 3 + 2
N_PAPER_CLAIMS = len(paper_claims(None))


@pytest.mark.parametrize("i", range(N_DIGITS_CLAIMS + N_PAPER_CLAIMS))
def test_every_rule_goes_both_ways(i):
    """Results under which the thesis' statements hold reproduce every claim; results under which they fail do not."""
    good, bad = _all(True)[i], _all(False)[i]
    assert (good.source, good.statement) == (bad.source, bad.statement)
    assert good.agrees is True, (good.source, good.statement, good.verdict, good.measured, good.why)
    assert bad.agrees is False, (bad.source, bad.statement, bad.verdict, bad.measured, bad.why)


def test_the_claims_count_and_kinds():
    claims = chapter_claims(make_results(True), scale="smoke")
    assert len(claims) == N_DIGITS_CLAIMS
    assert len(_all(True)) == N_DIGITS_CLAIMS + N_PAPER_CLAIMS
    assert tally_by_kind(claims) == {"experiment": {"reproduced": N_DIGITS_CLAIMS - 2}, "analytic": {"reproduced": 1},
                                     "consistency": {"consistent": 1}, "erratum": {}}
    assert {c.scale for c in claims} == {"smoke"} and {c.scale for c in paper_claims(None)} == {"paper"}
    assert all(c.why for c in claims)
    gains = [c for c in claims if c.statement.startswith("kNN-Per − ")]
    assert len(gains) == 16 and all(c.n_seeds == SEEDS and c.rule == "direction" and c.relative for c in gains)
    assert any(" 6 clients" in c.source and "Ditto, average" in c.statement for c in gains)


def test_gains_across_zero_are_inconclusive_and_say_how_many_seeds_would_decide():
    results = make_results(True)
    for s, run in enumerate(results["main_runs"]):
        run["methods"]["fedavg"]["average"] = 0.95 - (0.02, -0.005, 0.01)[s]
    claim = next(c for c in chapter_claims(results, scale="smoke") if c.statement.startswith("kNN-Per − FedAvg, av"))
    assert claim.verdict == "inconclusive" and claim.verdict_text == "inconclusive at smoke scale"
    assert claim.seeds_needed is not None and "seeds would decide" in claim.row()[-1]


def test_a_gain_beyond_twice_the_thesis_is_direction_only():
    results = make_results(True)
    for run in results["main_runs"]:
        run["methods"]["fedavg"]["average"] = 0.95 - 0.3
    claim = next(c for c in chapter_claims(results, scale="full") if c.statement.startswith("kNN-Per − FedAvg, av"))
    assert claim.verdict == "direction only"


def test_the_table_3_5_ditto_gain_is_read_on_the_deciding_runs():
    results = make_results(True)
    for run in results["main_runs"]:
        run["methods"]["ditto"]["average"] = 0.99
    claim = next(c for c in chapter_claims(results, scale="full") if c.statement.startswith("kNN-Per − Ditto, av"))
    assert claim.verdict == "reproduced" and "with 20 clients (section 7)" in claim.why


def test_a_missing_baseline_gives_no_claim():
    results = make_results(True)
    for run in results["main_runs"]:
        del run["methods"]["apfl"]
    assert not any("APFL" in c.statement for c in chapter_claims(results, scale="full"))


def test_not_run_paper_claims_say_how_to_fetch_the_data():
    claims = paper_claims(None)
    assert claims and all(c.verdict == "not run" and "python -m fedlab data fetch" in c.why for c in claims)


@pytest.mark.parametrize("key", sorted(RESULT_KEYS))
def test_a_missing_key_is_named(key):
    results = make_results(True)
    del results[key]
    with pytest.raises(ValueError, match=key):
        chapter_claims(results, scale="full")


def test_bad_results_are_named():
    with pytest.raises(TypeError, match="results"):
        chapter_claims([1], scale="full")
    with pytest.raises(ValueError, match="scale"):
        chapter_claims(make_results(True), scale="paper")
    results = make_results(True)
    results["main_runs"] = []
    with pytest.raises(ValueError, match="main_runs"):
        chapter_claims(results, scale="full")
    results = make_results(True)
    del results["decide_runs"][1]["methods"]["ditto"]
    with pytest.raises(ValueError, match=r"decide_runs.*\[1\].*ditto"):
        chapter_claims(results, scale="full")
    results = copy.deepcopy(make_results(True))
    results["fig_3_7"]["capacities"] = [1.0, 0.5]
    with pytest.raises(ValueError, match="fig_3_7"):
        chapter_claims(results, scale="full")
    with pytest.raises(TypeError, match="results"):
        paper_claims("results")


def test_the_baselines_labels_are_the_thesis_columns():
    from fedlab.knnper.real_data import BASELINES

    assert all(PRESETS[m].label in PAPER_METHODS for m in BASELINES)
