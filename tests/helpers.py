"""Small data sets shared by the tests."""
import numpy as np


def make_clients(n_clients=6, dim=5, n_classes=3, sizes=None, seed=0, regression=False):
    """Small heterogeneous classification (or regression) clients with unequal sizes."""
    rng = np.random.default_rng(seed)
    sizes = sizes or [int(s) for s in rng.integers(5, 30, size=n_clients)]
    w = rng.normal(size=(dim, n_classes))
    xs, ys = [], []
    for k, n in enumerate(sizes):
        x = (rng.normal(size=(n, dim)) + 0.5 * k).astype(np.float32)
        if regression:
            ys.append((x @ w[:, 0] + 0.1 * rng.normal(size=n)).astype(np.float32))
        else:
            ys.append(np.argmax(x @ w + rng.normal(size=(n, n_classes)), axis=1))
        xs.append(x)
    return xs, ys
