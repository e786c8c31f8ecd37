"""The shared argument checks: each names the argument, the expectation and the value."""
import numpy as np
import pytest

from pathlib import Path

from fedlab._validation import (check_array, check_bool, check_callable, check_choice, check_int, check_path,
                                check_real, check_sequence, check_simplex, check_type)


def test_check_simplex_accepts_probability_vectors_along_the_last_axis():
    assert check_simplex("p", [0.25, 0.75]).tolist() == [0.25, 0.75]
    assert check_simplex("pi", np.full((3, 4), 0.25), shape=(3, 4)).shape == (3, 4)
    assert check_simplex("pi", [[1.0, 0.0]], ndim=(1, 2), size=2).shape == (1, 2)


@pytest.mark.parametrize("value, kwargs, match", [
    ([0.5, 0.6], {}, r"p must sum to 1 along its last axis .* got sums \[1.1\]"),
    ([1.5, -0.5], {}, r"p must be non-negative .* -0.5"),
    ([0.5, 0.5], {"size": 3}, r"p must have 3 entries on its last axis"),
    ([[0.5, 0.5]], {"ndim": 1}, r"p must be probability vectors with 1 dimension"),
    (0.5, {}, r"p must be probability vectors"),
    ([np.nan, 1.0], {}, r"p must contain only finite values"),
    ([[0.5, 0.5]], {"shape": (2, 2)}, r"p must have shape \(2, 2\)"),
])
def test_check_simplex_errors_name_the_argument(value, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_simplex("p", value, **kwargs)


def test_scalar_and_choice_checks():
    assert check_int("k", 3, low=1) == 3 and check_real("lr", 0.5, low=0, low_open=True) == 0.5
    with pytest.raises(TypeError, match="k must be an integer"):
        check_int("k", 1.5)
    with pytest.raises(ValueError, match=r"lr must be a finite number in \(0"):
        check_real("lr", 0.0, low=0, low_open=True)
    with pytest.raises(ValueError, match="mode must be one of"):
        check_choice("mode", "fast", ("smoke", "full"))
    with pytest.raises(TypeError, match="x must be array-like"):
        check_array("x", ["a", None])


def test_check_choice_handles_unhashable_values():
    with pytest.raises(ValueError, match=r"mode must be one of \['a', 'b'\], got \['a'\]"):
        check_choice("mode", ["a"], {"a": 1, "b": 2})


def test_check_array_rejects_text_and_truncated_integers():
    with pytest.raises(TypeError, match="m_fresh must be array-like of numbers, got text '3'"):
        check_array("m_fresh", "3")
    with pytest.raises(TypeError, match="x must be array-like of numbers, got text"):
        check_array("x", np.array(["1", "2"]))
    assert check_array("idx", [1.0, 2.0], dtype=np.int64).tolist() == [1, 2]
    for bad in ([0.5, 1.0], [np.nan], np.array([1.5])):
        with pytest.raises(ValueError, match="idx must hold integers"):
            check_array("idx", bad, dtype=np.int64)


def test_check_bool_type_callable_and_path():
    assert check_bool("flag", np.bool_(True)) is True
    for bad in ("yes", 1, None):
        with pytest.raises(TypeError, match="flag must be True or False"):
            check_bool("flag", bad)
    assert check_type("data", 3, (int, float)) == 3 and check_type("data", None, int, optional=True) is None
    with pytest.raises(TypeError, match="data must be a int or float, got 'x' of type str"):
        check_type("data", "x", (int, float))
    assert check_callable("fn", len) is len and check_callable("fn", None, optional=True) is None
    with pytest.raises(TypeError, match="fn must be callable, got 3"):
        check_callable("fn", 3)
    assert check_path("path", "a/b") == Path("a/b")
    for bad in (3, True, None):
        with pytest.raises(TypeError, match="path must be a file path"):
            check_path("path", bad)


def test_check_sequence():
    assert check_sequence("xs", [1, 2], size=2) == [1, 2] and len(check_sequence("xs", np.zeros(3))) == 3
    for bad in ("ab", 3, {"a": 1}, None):
        with pytest.raises(TypeError, match="xs must be a sequence"):
            check_sequence("xs", bad)
    with pytest.raises(ValueError, match="xs must have 3 entries, got 2"):
        check_sequence("xs", (1, 2), size=3)
    with pytest.raises(ValueError, match="xs must not be empty"):
        check_sequence("xs", [], nonempty=True)


def test_all_finite_finds_nan_and_infinity_in_one_pass():
    import torch

    from fedlab._validation import all_finite

    x = torch.zeros(3, 4)
    assert all_finite(x) and all_finite(torch.zeros(0))
    for bad in (float("nan"), float("inf"), -float("inf")):
        y = x.clone()
        y[1, 2] = bad
        assert not all_finite(y)
