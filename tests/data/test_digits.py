import numpy as np

from fedlab.data import DIGITS_N_CLASSES, load_digits_arrays


def test_digits_arrays():
    x, y = load_digits_arrays()
    assert x.shape == (1797, 64) and x.dtype == np.float32
    assert y.shape == (1797,) and y.dtype == np.int64
    assert x.min() == 0.0 and x.max() == 1.0
    assert np.array_equal(np.bincount(y), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180])
    assert DIGITS_N_CLASSES == 10


def test_digits_image_variant_and_copies():
    x, _ = load_digits_arrays()
    img, _ = load_digits_arrays(images=True)
    assert img.shape == (1797, 1, 8, 8) and np.array_equal(img.reshape(1797, 64), x)
    x[:] = -1.0
    assert load_digits_arrays()[0].min() == 0.0
