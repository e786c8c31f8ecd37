"""The claims of notebook 09 (fedlab.markovian.claims): every rule goes both ways, the statistics, the settings not
run and the input checks."""
import math

import pytest

from fedlab.markovian.claims import RESULT_KEYS, chapter_claims, example_results

N_CLAIMS = 45


@pytest.mark.parametrize("index", range(N_CLAIMS))
@pytest.mark.parametrize("holds", [True, False])
def test_every_claim_goes_both_ways(holds, index):
    """Results under which the paper's statements are true reproduce every claim, false ones fail every claim."""
    claims = chapter_claims(example_results(holds=holds), scale="full")
    assert len(claims) == N_CLAIMS
    claim = claims[index]
    assert claim.why and claim.agrees is holds, claim.row()


def test_kinds_scales_and_seeds():
    claims = chapter_claims(example_results(n_seeds=4), scale="smoke")
    kinds = [c.kind for c in claims]
    assert (kinds.count("consistency"), kinds.count("erratum"), kinds.count("analytic")) == (1, 1, 7)
    assert kinds.count("experiment") == 36
    exact = [c for c in claims if c.kind != "experiment"]
    assert all(c.scale == "full" and c.seeds is None for c in exact)            # the same numbers in every mode
    simulated = [c for c in claims if c.kind == "experiment"]
    assert all(c.scale == "smoke" and c.n_seeds == 4 for c in simulated)
    erratum = next(c for c in claims if c.kind == "erratum")
    assert erratum.paper == (None, pytest.approx(69 * math.log(2))) and erratum.corrected == (None, 138.0)


def test_one_claim_per_statement_and_the_fig1_attribution():
    claims = chapter_claims(example_results(), scale="full")
    keys = [(c.source, c.statement) for c in claims]
    assert len(set(keys)) == len(keys)
    fig1 = [c for c in claims if c.source.startswith("Fig. 1")]
    assert len(fig1) == 3 and all("τ_m = 100" in c.source for c in fig1)         # the caption's mixing time
    assert not any("τ_m = 30" in c.source for c in claims)                        # measured there, not the paper's
    fig7 = [c for c in claims if "Fig. 7" in c.source]
    assert len(fig7) == 9 and len({c.source for c in fig7}) == 3                 # K = 10, 100, 1000


def _fig7_claim(results, k=100, alg="Minibatch SGD"):
    claims = chapter_claims(results, scale="smoke")
    return next(c for c in claims if f"K = {k})" in c.source and c.statement.startswith(alg))


def test_fig7_is_judged_over_replicas_and_can_be_inconclusive():
    results = example_results()
    results["fig7"]["ratios"][100]["minibatch"] = [0.26, 0.96, 0.39, 0.5, 0.7]    # the spread of the stream seed
    claim = _fig7_claim(results)
    assert claim.n_seeds == 5 and claim.verdict == "inconclusive"
    assert claim.verdict_text == "inconclusive at smoke scale"
    assert claim.seeds_needed is None or claim.seeds_needed > 5
    results["fig7"]["ratios"][100]["minibatch"] = [0.9, 1.1, 1.2, 0.8, 1.0]
    assert _fig7_claim(results).verdict == "reproduced"
    results["fig7"]["ratios"][100]["minibatch"] = [0.1, 0.12, 0.15, 0.2, 0.1]
    assert _fig7_claim(results).verdict == "not reproduced"


def test_settings_not_run_at_this_scale_are_said_so():
    results = example_results()
    del results["fig7"]["ratios"][1000]
    results["fig34"]["ends"] = {key: v for key, v in results["fig34"]["ends"].items() if key[1] == 10}
    claims = chapter_claims(results, scale="smoke")
    not_run = [c for c in claims if c.verdict == "not run"]
    assert len(claims) == N_CLAIMS and len(not_run) == 3 + 6
    assert all("runs in full mode" in c.why for c in not_run)


@pytest.mark.parametrize("key", RESULT_KEYS)
def test_a_missing_key_is_named(key):
    results = example_results()
    del results[key]
    with pytest.raises(ValueError, match=f"results lacks the keys \\['{key}'\\]"):
        chapter_claims(results, scale="smoke")


def test_missing_entries_and_bad_inputs_are_named():
    results = example_results()
    del results["fig1"]["contraction"]
    with pytest.raises(ValueError, match=r"results\['fig1'\] lacks the keys \['contraction'\]"):
        chapter_claims(results, scale="smoke")
    results = example_results()
    del results["exponents"][("M", "local")]
    with pytest.raises(ValueError, match=r"results\['exponents'\] lacks the entries \[\('M', 'local'\)\]"):
        chapter_claims(results, scale="smoke")
    results = example_results()
    results["product"]["n_clients"] = [1, 3, 4]
    with pytest.raises(ValueError, match="M = 2"):
        chapter_claims(results, scale="smoke")
    with pytest.raises(TypeError, match="results"):
        chapter_claims([1], scale="smoke")
    with pytest.raises(ValueError, match="scale"):
        chapter_claims(example_results(), scale="tiny")
