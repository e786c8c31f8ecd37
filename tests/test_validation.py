"""The shared argument checks: each names the argument, the expectation and the value."""
import numpy as np
import pytest

from fedlab._validation import check_array, check_choice, check_int, check_real, check_simplex


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
