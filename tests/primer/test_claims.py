"""The primer's claims (fedlab.primer.claims): every rule goes both ways, the statistics and the input checks."""
import math

import pytest

from fedlab.primer.claims import RESULT_KEYS, chapter_claims, example_results

N_CLAIMS = 12
JUDGED = ("experiment", "analytic", "erratum", "consistency")


@pytest.mark.parametrize("index", range(N_CLAIMS))
@pytest.mark.parametrize("holds", [True, False])
def test_every_claim_goes_both_ways(holds, index):
    """Results under which the statements are true reproduce every claim, results under which they are false fail it."""
    claims = chapter_claims(example_results(holds=holds), scale="full")
    assert len(claims) == N_CLAIMS
    claim = claims[index]
    assert claim.kind in JUDGED and claim.scale == "full" and claim.why
    assert claim.agrees is holds, claim.row()


def test_kinds_and_seed_statistics():
    claims = chapter_claims(example_results(n_seeds=4), scale="smoke")
    kinds = [c.kind for c in claims]
    assert kinds.count("experiment") == 7 and kinds.count("analytic") == 1 and kinds.count("consistency") == 4
    over_seeds = [c for c in claims if c.seeds is not None]
    assert len(over_seeds) == 8 and all(c.n_seeds == 4 for c in over_seeds)
    assert all(c.paper != c.measured for c in over_seeds if c.kind == "experiment")     # the paper's side, not ours


def _results(changes):
    """The example results with ``{(key, run): per-seed values}`` replaced."""
    results = example_results(n_seeds=3)
    for (key, sub), value in changes.items():
        results[key] = {**results[key], sub: value}
    return results


def _claim(claims, text):
    (claim,) = [c for c in claims if text in c.statement]
    return claim


def test_a_gap_that_straddles_zero_is_inconclusive_and_says_how_many_seeds_would_decide():
    results = _results({("final_accuracy", ("local", 0.1, 5)): [0.80, 0.95, 0.88]})
    claim = _claim(chapter_claims(results, scale="smoke"), "Local − FedAvg")
    assert claim.verdict == "inconclusive" and claim.verdict_text == "inconclusive at smoke scale"
    assert claim.seeds_needed is None or claim.seeds_needed > 3
    assert "3 seeds, 95 % CI" in claim.row()[-1]


def test_rounds_never_reached_count_as_the_horizon_plus_one():
    inf = math.inf
    results = _results({("rounds_to_target", ("fedavg", 100.0, 1)): [inf, inf, inf],
                          ("rounds_to_target", ("fedavg", 100.0, 20)): [3.0, 4.0, 5.0]})
    claim = _claim(chapter_claims(results, scale="full"), "(α = 100)")
    assert claim.seeds == (38.0, 37.0, 36.0) and claim.verdict == "reproduced"
    results = _results({("rounds_to_target", ("fedavg", 0.1, 1)): [inf] * 3,
                          ("rounds_to_target", ("fedavg", 0.1, 20)): [inf] * 3})
    assert _claim(chapter_claims(results, scale="full"), "(α = 0.1)").verdict == "not reproduced"


def test_fedavg_against_centralized_is_judged_on_a_one_point_band():
    central = example_results()["final_accuracy"][("centralized", 100.0, 5)]
    inside = _results({("final_accuracy", ("centralized", 100.0, 5)): [v + 0.005 for v in central]})
    outside = _results({("final_accuracy", ("centralized", 100.0, 5)): [v + 0.02 for v in central]})
    assert _claim(chapter_claims(inside, scale="full"), "Centralized").verdict == "consistent"
    assert _claim(chapter_claims(outside, scale="full"), "Centralized").verdict == "inconsistent"


@pytest.mark.parametrize("key", RESULT_KEYS)
def test_a_missing_key_is_named(key):
    results = example_results()
    del results[key]
    with pytest.raises(ValueError, match=f"results lacks the keys \\['{key}'\\]"):
        chapter_claims(results, scale="smoke")


def test_a_missing_run_or_uneven_seeds_are_named():
    results = example_results()
    del results["final_accuracy"][("local", 0.1, 5)]
    with pytest.raises(ValueError, match=r"results\['final_accuracy'\] lacks the entries \[\('local', 0.1, 5\)\]"):
        chapter_claims(results, scale="smoke")
    results = _results({("bottom_decile", ("fedavg", 0.1, 5)): [0.5]})
    with pytest.raises(ValueError, match="one value per seed"):
        chapter_claims(results, scale="smoke")
    with pytest.raises(TypeError, match="results"):
        chapter_claims([], scale="smoke")
    with pytest.raises(ValueError, match="scale"):
        chapter_claims(example_results(), scale="paper-ish")
