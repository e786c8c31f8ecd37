"""Headline numbers: construction, display, and the comparison the notebook tests rely on."""
from dataclasses import replace

import numpy as np
import pytest

from fedlab.headlines import (MIME_TYPE, Headline, accuracy, compare_headlines, computed, exact, last_digit,
                              percentile_flip, show_headlines)


def records(*headlines):
    return [h.to_dict() for h in headlines]


def test_values_are_plain_and_shown_rounded():
    h = Headline("gain_pp", np.float32(1.23456), digits=2)
    assert type(h.value) is float and h.text() == "gain_pp: 1.23"
    assert Headline("seq", np.array([0.291, 0.118]), digits=2).text() == "seq: 0.29, 0.12"
    assert Headline("argmin", 0.1, digits=None).text() == "argmin: 0.1"
    assert Headline("count", np.int64(74)).text() == "count: 74"
    assert Headline("flag", np.bool_(True)).text() == "flag: True"
    assert Headline.from_dict(Headline("seq", [1, 2]).to_dict()) == Headline("seq", (1, 2))


@pytest.mark.parametrize("kwargs, match", [
    (dict(name="", value=1.0), "name"),
    (dict(name="a: b", value=1.0), "name"),
    (dict(name="a", value=float("nan")), "finite"),
    (dict(name="a", value=[1.0, "x"]), "numbers only"),
    (dict(name="a", value=1.0, tolerance=-1), "tolerance"),
    (dict(name="a", value=1.0, tolerance=0.1), "why must say"),
    (dict(name="a", value=True, tolerance=0.1, why="noise"), "compared exactly"),
    (dict(name="a", value=1.0, digits=-1), "digits"),
])
def test_bad_headlines_are_rejected_naming_the_field(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        Headline(**kwargs)


def test_numbers_compare_within_their_tolerance_both_ways():
    acc = Headline("acc", 0.945, tolerance=0.001, why="one test sample of 1,000")
    assert compare_headlines(records(acc), records(replace(acc, value=0.944))) == []
    assert compare_headlines(records(acc), records(replace(acc, value=0.946))) == []
    [problem] = compare_headlines(records(acc), records(replace(acc, value=0.943)))
    assert problem == ("acc: measured 0.943, stored 0.945: differs by 0.002, beyond the tolerance 0.001 "
                       "(one test sample of 1,000)")


def test_relative_tolerance_scales_with_the_stored_value():
    bound = Headline("bound", 1000.0, tolerance=1e-9, relative=True, why="a closed form")
    assert compare_headlines(records(bound), records(replace(bound, value=1000.0000005))) == []
    [problem] = compare_headlines(records(bound), records(replace(bound, value=1000.01)))
    assert "beyond the tolerance 1e-09 relative (a closed form)" in problem


def test_exact_values_and_sequences():
    flag, seq = Headline("ok", True), Headline("seq", [0.29, 0.12], tolerance=0.01, why="noise")
    stored = records(flag, seq)
    assert compare_headlines(stored, records(flag, replace(seq, value=[0.295, 0.115]))) == []
    problems = compare_headlines(stored, records(replace(flag, value=False), replace(seq, value=[0.29, 0.2])))
    assert problems[0] == "ok: measured False, stored True: must be equal"
    assert problems[1].startswith("seq: measured (0.29, 0.2), stored (0.29, 0.12): differs by 0.08")
    assert "not comparable" in compare_headlines(stored, records(flag, replace(seq, value=[0.29])))[0]


def test_missing_and_new_names_are_reported():
    a, b = Headline("a", 1), Headline("b", 2)
    assert compare_headlines(records(a, b), records(a)) == ["b: stored, but no longer measured"]
    assert compare_headlines(records(a), records(a, b)) == ["b: measured 2, but not stored"]


def test_show_headlines_displays_text_and_full_precision(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw: shown.append(obj))
    show_headlines([Headline("acc", 0.94449, digits=3), Headline("ok", True)])
    assert shown[0]["text/plain"] == "acc: 0.944\nok: True"
    assert shown[0][MIME_TYPE][0]["value"] == 0.94449
    with pytest.raises(ValueError, match="distinct names"):
        show_headlines([Headline("a", 1), Headline("a", 2)])
    with pytest.raises(TypeError, match="Headline objects"):
        show_headlines(["a: 1"])


def test_percentile_flip_is_the_largest_move_of_one_flipped_sample():
    acc, n = [0.5, 0.9, 1.0, np.nan], [2, 10, 4, 0]
    moves = []
    for t in range(3):
        for d in (1, -1):
            flipped = np.array(acc, dtype=float)
            flipped[t] = np.clip(flipped[t] + d / n[t], 0, 1)
            moves.append(abs(np.nanpercentile(flipped, 10) - np.nanpercentile(acc, 10)))
    assert percentile_flip(acc, n) == pytest.approx(max(moves)) and max(moves) > 0
    assert percentile_flip([0.8, 0.8], [5, 5], q=50) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="n_test"):
        percentile_flip([0.5], [1.5])
    with pytest.raises(ValueError, match="q"):
        percentile_flip([0.5], [2], q=101)


def test_constructors_state_their_tolerance():
    assert exact("k", 74).tolerance == 0 and exact("ok", True).text() == "ok: True"
    c = computed("bound", 43.352055, digits=6)
    assert c.relative and c.tolerance == 1e-9 and "closed form" in c.why
    a = accuracy("gain_pp", 1.5, 271, samples=2, unit=100, digits=1)
    assert a.tolerance == pytest.approx(200 / 271) and a.why == "2 test samples of 271"
    assert accuracy("acc", 0.9, 1000).why == "1 test sample of 1,000"
    with pytest.raises(ValueError, match="n_test"):
        accuracy("acc", 0.9, 0)


def test_last_digit_allows_one_unit_of_the_printed_digit():
    h = last_digit("slope", 0.2213, digits=2, source="float64 simulation")
    assert h.tolerance == pytest.approx(0.01) and h.text() == "slope: 0.22"
    assert h.why.startswith("float64 simulation: unchanged across four CPU dispatch settings")
