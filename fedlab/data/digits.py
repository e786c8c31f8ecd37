"""scikit-learn's bundled 8×8 handwritten digits: real data that loads without network.

1,797 images of the UCI "Optical Recognition of Handwritten Digits" set, pixels 0..16, 10 classes
(class counts 178 182 177 183 181 182 181 179 174 180). Used by the kNN-Per notebooks (personalization
spec §10.3) in place of CIFAR/FEMNIST.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from fedlab._validation import check_bool

__all__ = ["load_digits_arrays", "DIGITS_N_CLASSES"]

DIGITS_N_CLASSES = 10


@lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return (bunch.data / 16.0).astype(np.float32), bunch.target.astype(np.int64)


def load_digits_arrays(*, images: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Return the digits as ``(X, y)`` with pixels scaled to [0, 1].

    Parameters
    ----------
    images : bool
        ``False``: ``X`` has shape (1797, 64); ``True``: shape (1797, 1, 8, 8) (N, C, H, W).

    Returns
    -------
    X : np.ndarray, float32
        Pixel intensities divided by 16.
    y : np.ndarray, int64, shape (1797,)
        Digit labels 0..9.
    """
    images = check_bool("images", images)
    x, y = _digits()
    x = x.copy()
    return (x.reshape(-1, 1, 8, 8) if images else x), y.copy()
