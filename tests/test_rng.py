"""Seeds derived from keys, and the one table of random-stream ids."""
import numpy as np
import pytest

from fedlab._rng import Stream, as_numpy_rng, check_key, derive_seed, numpy_rng, torch_generator


def test_derive_seed_depends_on_every_key_and_their_order():
    assert derive_seed(1, 2, 3) == derive_seed(1, 2, 3)
    assert len({derive_seed(1, 2, 3), derive_seed(1, 3, 2), derive_seed(1, 2), derive_seed(2, 2, 3)}) == 4
    assert 0 <= derive_seed(2 ** 70, -1) < 2 ** 63
    assert numpy_rng(0, 1).random() == numpy_rng(0, 1).random()
    assert torch_generator(0, 1).initial_seed() == derive_seed(0, 1)


def test_as_numpy_rng():
    g = np.random.default_rng(0)
    assert as_numpy_rng(g) is g and isinstance(as_numpy_rng(3), np.random.Generator)
    with pytest.raises(TypeError, match="rng"):
        as_numpy_rng("seed")


def test_stream_ids_are_distinct_within_the_core_and_each_chapter():
    groups = Stream.groups()
    assert set(groups) == {"core", "availability", "fedem", "knnper", "streams", "online", "sfedpo", "markov",
                           "topology"}
    for owner, ids in groups.items():
        assert len(set(ids.values())) == len(ids), f"{owner} reuses a stream id: {ids}"
    assert groups["core"] == {"LOCAL": 0, "SAMPLING": 1, "INIT": 2, "PERSONAL": 3}


def test_check_key():
    assert check_key([0, 3, 1]) == (0, 3, 1) and check_key((np.int64(2),)) == (2,)
    for bad, error, match in [((), TypeError, "key must be a non-empty tuple"), (5, TypeError, "non-empty tuple"),
                              ((0, 1.5), TypeError, r"key\[1\] must be an integer"),
                              ((True,), TypeError, r"key\[0\] must be an integer"),
                              ((-1, 0), ValueError, r"key\[0\] \(the seed\) must be non-negative")]:
        with pytest.raises(error, match=match):
            check_key(bad)
