"""kNN-Per (fedlab.knnper.algorithms): representations, kNN kernel, interpolation, datastores, personalization."""
import numpy as np
import pytest
import torch

from fedlab.knnper.algorithms import (KERNELS, KNN_BACKENDS, LAMBDA_GRID, TIE_RULES, UPDATE_STRATEGIES,
                                      ClientFeatures, Datastore, KNNPer, KNNPerModel, accuracy_grid,
                                      build_datastores, capacity_size, client_features, embed,
                                      embed_and_proba, embedding_dim, interpolate, kernel_weights, knn_proba,
                                      knn_search, lambda_accuracies, personalize, select_lambda)
from fedlab.knnper.algorithms import check_grid, cost_table, param_count
from fedlab.engine import ClientData, FederatedDataset, LocalSGD, run
from fedlab.models import MLP, LinearModel, SmallCNN

from helpers import make_clients

torch.set_num_threads(1)
MODEL = MLP(5, (8, 4), 3)


def _params(seed=0, model=MODEL):
    return model.init(torch.Generator().manual_seed(seed))


def _split(seed=0):
    xs, ys = make_clients(n_clients=5, dim=5, n_classes=3, sizes=[20, 15, 12, 25, 9], seed=seed)
    rng = np.random.default_rng(seed)
    parts = []
    for x, y in zip(xs, ys):
        p = rng.permutation(len(y))
        parts.append((x[p], y[p]))
    cut = lambda a, b: ClientData.from_arrays([x[int(a * len(x)):int(b * len(x))] for x, _ in parts],  # noqa: E731
                                              [y[int(a * len(y)):int(b * len(y))] for _, y in parts])
    return cut(0.0, 0.6), cut(0.6, 0.8), cut(0.8, 1.0)


@pytest.fixture(scope="module")
def split():
    return _split()


# ---------------------------------------------------------------- representations


def test_embedding_dim_and_embed_shapes():
    assert embedding_dim(MODEL) == 4
    assert embedding_dim(SmallCNN(1, 8, 10, channels=(4, 6))) == 6 * 4
    x = torch.randn(7, 5)
    e = embed(MODEL, _params(), x)
    assert e.shape == (7, 4) and bool((e >= 0).all())  # post-ReLU


def test_embed_and_proba_matches_model_forward_exactly():
    params, x = _params(), torch.randn(11, 5)
    _, proba = embed_and_proba(MODEL, params, x)
    assert torch.equal(proba, torch.softmax(MODEL.forward(params, x), -1))
    cnn = SmallCNN(1, 8, 10, channels=(4, 6))
    pc, xc = cnn.init(torch.Generator().manual_seed(1)), torch.rand(3, 64)
    emb, pr = embed_and_proba(cnn, pc, xc)
    assert emb.shape == (3, 24) and torch.allclose(pr, torch.softmax(cnn.forward(pc, xc), -1))


def test_embed_stacked_agrees_with_single():
    rows = [_params(s) for s in range(3)]
    stacked = {k: torch.stack([r[k] for r in rows]) for k in rows[0]}
    x = torch.randn(3, 6, 5)
    e = embed(MODEL, stacked, x, stacked=True)
    for r in range(3):
        assert torch.allclose(e[r], embed(MODEL, rows[r], x[r]), atol=1e-6)


def test_embedding_errors():
    with pytest.raises(TypeError, match="hidden representation"):
        embedding_dim(LinearModel(5, 3))
    with pytest.raises(ValueError, match="without hidden"):
        embedding_dim(MLP(5, (), 3))
    with pytest.raises(ValueError, match="must hold the parameters"):
        embed(MODEL, {"w0": torch.zeros(5, 8)}, torch.zeros(2, 5))
    with pytest.raises(ValueError, match="have shapes"):
        embed(MODEL, {**_params(), "w0": torch.zeros(4, 8)}, torch.zeros(2, 5))
    with pytest.raises(ValueError, match="stacked x"):
        embed(MODEL, {k: v.unsqueeze(0) for k, v in _params().items()}, torch.zeros(2, 5), stacked=True)


def test_client_features_removes_padding(split):
    train, _, _ = split
    f = client_features(MODEL, _params(), train)
    assert f.n_clients == 5 and f.n_classes == 3
    assert f.sizes.tolist() == train.n.tolist()
    for k in range(5):
        x, y, _ = train.client(k)
        e, p = embed_and_proba(MODEL, _params(), x)
        assert np.allclose(f.keys[k], e.numpy()) and np.allclose(f.proba[k], p.numpy())
        assert np.array_equal(f.labels[k], y.numpy())
        assert np.allclose(f.proba[k].sum(1), 1)


def test_client_features_concat_and_errors(split):
    train, val, _ = split
    a, b = client_features(MODEL, _params(), train), client_features(MODEL, _params(), val)
    c = a.concat(b)
    assert c.sizes.tolist() == (train.n + val.n).tolist()
    with pytest.raises(ValueError, match="clients"):
        a.concat(ClientFeatures(a.keys[:2], a.proba[:2], a.labels[:2]))
    with pytest.raises(TypeError, match="ClientData"):
        client_features(MODEL, _params(), np.zeros((3, 5)))
    reg = ClientData.from_arrays([np.zeros((2, 5))], [np.zeros(2, np.float32)])
    with pytest.raises(ValueError, match="integer labels"):
        client_features(MODEL, _params(), reg)


# ---------------------------------------------------------------- kNN and kernel


def test_knn_search_backends_agree_and_cap_k():
    rng = np.random.default_rng(0)
    keys, q = rng.random((30, 4)), rng.random((7, 4))
    results = {b: knn_search(q, keys, 5, backend=b) for b in KNN_BACKENDS}
    (d1, i1), (d2, i2) = results["sklearn"], results["torch"]
    assert np.allclose(d1, d2, atol=1e-6) and np.array_equal(i1, i2)
    assert np.all(np.diff(d1, axis=1) >= -1e-12)
    brute = np.linalg.norm(q[:, None] - keys[None], axis=2)
    assert np.allclose(np.sort(brute, 1)[:, :5], d1, atol=1e-6)
    d, i = knn_search(q, keys[:3], 10)
    assert d.shape == (7, 3)  # k_eff = min(k, m)
    d0, _ = knn_search(np.zeros((0, 4)), keys, 3)
    assert d0.shape == (0, 3)


def test_knn_search_breaks_ties_by_index_whatever_the_float_noise():
    rng = np.random.default_rng(1)
    base = rng.random((6, 4))
    keys = np.concatenate([base, base[::-1], base])           # every key three times: exact ties
    q = rng.random((9, 4))
    d, i = knn_search(q, keys, 7)
    brute = np.linalg.norm(q[:, None] - keys[None], axis=2)
    expected = np.lexsort((np.broadcast_to(np.arange(len(keys)), brute.shape), brute), axis=1)[:, :7]
    assert np.array_equal(i, expected) and np.allclose(d, np.take_along_axis(brute, expected, 1), rtol=0, atol=1e-12)
    # noise in the last bits (another CPU's kernels) leaves the neighbours and their order unchanged
    noisy = keys * (1 + 1e-15 * rng.standard_normal(keys.shape))
    assert np.array_equal(knn_search(q, noisy, 7)[1], i)
    # equidistant keys around the query: ranked by index
    ring = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    assert knn_search(np.zeros((1, 2)), ring, 4)[1].tolist() == [[0, 1, 2, 3]]


def test_knn_search_errors():
    with pytest.raises(ValueError, match="k must be"):
        knn_search(np.zeros((1, 2)), np.zeros((3, 2)), 0)
    with pytest.raises(ValueError, match="empty"):
        knn_search(np.zeros((1, 2)), np.zeros((0, 2)), 1)
    with pytest.raises(ValueError, match="dimension"):
        knn_search(np.zeros((1, 2)), np.zeros((3, 3)), 1)
    with pytest.raises(ValueError, match="backend"):
        knn_search(np.zeros((1, 2)), np.zeros((3, 2)), 1, backend="faiss")


def test_kernel_weights_follow_exp_minus_d_over_sigma():
    d = np.array([[0.3, 1.1]])
    for sigma in (0.5, 1.0, 4.0):
        w = kernel_weights(d, sigma=sigma)
        e = np.exp(-d / sigma)
        assert np.allclose(w, e / e.sum())
    w = kernel_weights(d, sigma=2.0, kernel="exp_sqdist_over_dim", dim=4)
    e = np.exp(-d ** 2 / (4 * 2.0))
    assert np.allclose(w, e / e.sum())


def test_every_kernel_gives_normalised_weights():
    d = np.abs(np.random.default_rng(1).normal(size=(4, 6)))
    for name in KERNELS:
        w = kernel_weights(d, kernel=name, dim=3)
        assert np.allclose(w.sum(1), 1) and np.all(w > 0)


def test_kernel_weights_stable_for_huge_distances():
    w = kernel_weights(np.array([[900.0, 901.0], [5e4, 5e4]]), sigma=1.0)
    assert np.all(np.isfinite(w))
    assert np.allclose(w[0], np.array([1, np.exp(-1)]) / (1 + np.exp(-1)))
    assert np.allclose(w[1], 0.5)


def test_kernel_weights_errors():
    with pytest.raises(ValueError, match="sigma"):
        kernel_weights(np.ones((1, 2)), sigma=0)
    with pytest.raises(ValueError, match="non-negative"):
        kernel_weights(-np.ones((1, 2)))
    with pytest.raises(ValueError, match="kernel"):
        kernel_weights(np.ones((1, 2)), kernel="gauss")
    with pytest.raises(ValueError, match="at least one"):
        kernel_weights(np.ones((1, 0)))


def test_knn_proba_rows_in_simplex_and_two_neighbour_formula():
    rng = np.random.default_rng(0)
    keys, vals, q = rng.random((40, 3)), rng.integers(0, 4, 40), rng.random((9, 3))
    p = knn_proba(q, keys, vals, k=7, n_classes=4)
    assert p.shape == (9, 4) and np.all(p >= 0) and np.allclose(p.sum(1), 1)
    keys2, vals2 = np.array([[0.0], [1.0], [5.0]]), np.array([0, 1, 1])
    p2 = knn_proba(np.array([[0.2]]), keys2, vals2, k=2, n_classes=2, sigma=0.7)
    e = np.exp(-np.array([0.2, 0.8]) / 0.7)
    assert np.allclose(p2[0], e / e.sum())


def test_knn_proba_k1_is_one_hot_and_stored_keys_return_their_label():
    rng = np.random.default_rng(2)
    keys, vals = rng.random((25, 5)), rng.integers(0, 3, 25)
    p = knn_proba(keys, keys, vals, k=1, n_classes=3)
    assert np.array_equal(p, np.eye(3)[vals])


def test_sigma_limits_majority_vote_and_one_nn():
    keys = np.array([[0.0], [1.0], [1.1], [1.2]])
    vals = np.array([0, 1, 1, 1])
    q = np.array([[0.05]])
    big = knn_proba(q, keys, vals, k=4, n_classes=2, sigma=1e8)
    assert np.allclose(big[0], [0.25, 0.75])  # uniform weights: majority vote
    small = knn_proba(q, keys, vals, k=4, n_classes=2, sigma=1e-4)
    assert np.allclose(small[0], [1.0, 0.0])  # nearest neighbour


def test_knn_proba_errors():
    with pytest.raises(ValueError, match="values"):
        knn_proba(np.zeros((1, 2)), np.zeros((3, 2)), np.array([0, 1]), k=1, n_classes=2)
    with pytest.raises(ValueError, match="integer labels"):
        knn_proba(np.zeros((1, 2)), np.zeros((2, 2)), np.array([0, 5]), k=1, n_classes=2)
    with pytest.raises(ValueError, match="k must be"):
        knn_proba(np.zeros((1, 2)), np.zeros((2, 2)), np.array([0, 1]), k=0, n_classes=2)
    with pytest.raises(ValueError, match="empty"):
        knn_proba(np.zeros((1, 2)), np.zeros((0, 2)), np.zeros(0, np.int64), k=1, n_classes=2)


# ---------------------------------------------------------------- interpolation and λ


def test_interpolate_endpoints_exact_and_mixture():
    rng = np.random.default_rng(0)
    q, g = rng.dirichlet(np.ones(4), 6), rng.dirichlet(np.ones(4), 6)
    assert np.array_equal(interpolate(q, g, 0.0), g)
    assert np.array_equal(interpolate(q, g, 1.0), q)
    assert np.allclose(interpolate(q, g, 0.3), 0.3 * q + 0.7 * g)
    lam = np.array([0, 1, 0.5, 0.5, 0.2, 0])
    mixed = interpolate(q, g, lam)
    assert np.array_equal(mixed[0], g[0]) and np.array_equal(mixed[1], q[1])
    assert np.allclose(mixed.sum(1), 1)
    t = interpolate(torch.from_numpy(q), torch.from_numpy(g), 0.0)
    assert isinstance(t, torch.Tensor) and torch.equal(t, torch.from_numpy(g))


def test_interpolate_errors():
    q = np.full((2, 3), 1 / 3)
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="lam"):
            interpolate(q, q, bad)
    with pytest.raises(ValueError, match="lam"):
        interpolate(q, q, np.array([0.2, 2.0]))
    with pytest.raises(ValueError, match="same shape"):
        interpolate(q, q[:, :2], 0.5)


def test_cross_entropy_is_convex_in_the_prediction():  # Assumption 20, used in (F.633)
    rng = np.random.default_rng(3)
    p1, p2 = rng.dirichlet(np.ones(5), 200), rng.dirichlet(np.ones(5), 200)
    y = rng.integers(0, 5, 200)
    ce = lambda p: -np.log(p[np.arange(200), y])  # noqa: E731
    for lam in (0.1, 0.5, 0.9):
        assert np.all(ce(interpolate(p1, p2, lam)) <= lam * ce(p1) + (1 - lam) * ce(p2) + 1e-12)


def test_lambda_accuracies_and_select_lambda():
    g = np.array([[0.6, 0.4], [0.6, 0.4], [0.2, 0.8]])
    q = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    y = np.array([1, 1, 1])
    acc = lambda_accuracies(q, g, y)
    assert acc[0] == pytest.approx(1 / 3) and acc[-1] == 1.0
    assert select_lambda(q, g, y) in LAMBDA_GRID
    assert select_lambda(q, g, y) == 0.3  # first λ where 0.4(1-λ) + λ > 0.6(1-λ)
    assert np.all(np.isnan(lambda_accuracies(q[:0], g[:0], y[:0])))


def test_select_lambda_tie_rules():
    g = np.array([[0.9, 0.1]])
    q = np.array([[1.0, 0.0]])
    y = np.array([0])  # every λ is right
    for tie in TIE_RULES:
        expected = min(LAMBDA_GRID) if tie == "smallest" else max(LAMBDA_GRID)
        assert select_lambda(q, g, y, tie=tie) == expected
    assert select_lambda(q[:0], g[:0], y[:0]) == 0.0  # empty validation: global model
    with pytest.raises(ValueError, match="tie"):
        select_lambda(q, g, y, tie="random")
    with pytest.raises(ValueError, match="grid"):
        select_lambda(q, g, y, grid=(0.5, 1.5))


# ---------------------------------------------------------------- datastores


def test_capacity_size():
    assert capacity_size(10, 0.0) == 0 and capacity_size(10, 1.0) == 10
    assert capacity_size(10, 0.35) == 3 and capacity_size(7, 0.3) == 2
    for bad in (-0.1, 1.1):
        with pytest.raises(ValueError, match="capacity"):
            capacity_size(10, bad)


def test_datastore_build_keeps_random_nested_subsets():
    rng = np.random.default_rng(0)
    keys, vals = rng.random((20, 3)), rng.integers(0, 4, 20)
    full = Datastore.build(keys, vals, 4)
    assert len(full) == 20 and full.dim == 3 and full.nbytes == 20 * 3 * 4 + 20 * 8
    small = Datastore.build(keys, vals, 4, capacity=0.25, rng=5)
    big = Datastore.build(keys, vals, 4, capacity=0.5, rng=5)
    assert len(small) == 5 and len(big) == 10
    as_set = lambda s: {tuple(r) for r in s.keys.round(6)}  # noqa: E731
    assert as_set(small) <= as_set(big) <= as_set(full)
    assert len(Datastore.build(keys, vals, 4, capacity=0.0)) == 0


def test_datastore_update_strategies():
    keys, vals = np.arange(8, dtype=float).reshape(4, 2), np.array([0, 1, 0, 1])
    store = Datastore(keys, vals, 2)
    new_k, new_v = np.full((3, 2), 9.0), np.array([1, 1, 1])
    out = {s: store.update(new_k, new_v, strategy=s) for s in UPDATE_STRATEGIES}
    assert len(out["fifo"]) == 4 and np.array_equal(out["fifo"].keys[-3:], new_k)
    assert np.array_equal(out["fifo"].keys[0], keys[-1])  # the newest old entry survives
    assert len(out["concat"]) == 7 and np.array_equal(out["concat"].keys[:4], keys)
    assert np.array_equal(out["fixed"].keys, keys)
    huge = store.update(np.zeros((10, 2)), np.zeros(10, np.int64), strategy="fifo")
    assert len(huge) == 4 and np.all(huge.keys == 0)
    with pytest.raises(ValueError, match="strategy"):
        store.update(new_k, new_v, strategy="lru")
    with pytest.raises(ValueError, match="dimension"):
        store.update(np.zeros((1, 3)), np.array([0]))


def test_datastore_proba_and_errors():
    store = Datastore(np.eye(3), np.array([0, 1, 2]), 3)
    assert np.array_equal(store.proba(np.eye(3), k=1), np.eye(3))
    empty = Datastore(np.zeros((0, 3)), np.zeros(0, np.int64), 3)
    with pytest.raises(ValueError, match="empty"):
        empty.proba(np.eye(3))
    with pytest.raises(ValueError, match="values"):
        Datastore(np.eye(3), np.array([0, 1]), 3)
    with pytest.raises(ValueError, match="integer labels"):
        Datastore(np.eye(3), np.array([0, 1, 3]), 3)


def test_build_datastores_per_client(split):
    train, _, _ = split
    f = client_features(MODEL, _params(), train)
    stores = build_datastores(f, capacity=0.5, seed=1)
    assert [len(s) for s in stores] == [capacity_size(int(n), 0.5) for n in train.n]
    again = build_datastores(f, capacity=0.5, seed=1)
    assert all(np.array_equal(a.keys, b.keys) for a, b in zip(stores, again))
    with pytest.raises(ValueError, match="capacity"):
        build_datastores(f, capacity=2.0)


# ---------------------------------------------------------------- personalization


def test_lambda_zero_is_the_global_model_and_lambda_one_is_pure_knn(split):
    train, _, test = split
    params = _params()
    glob = personalize(MODEL, params, train, lam=0.0)
    proba = glob.predict_proba(test)
    for k in range(test.n_clients):
        x, _, _ = test.client(k)
        ref = torch.softmax(MODEL.forward(params, x), -1).double()
        assert torch.equal(proba[k, : len(x)], ref)
        assert torch.equal(glob.predict(test)[k, : len(x)], MODEL.forward(params, x).argmax(-1))
    knn = personalize(MODEL, params, train, lam=1.0, k=3)
    proba1 = knn.predict_proba(test)
    qf = client_features(MODEL, params, test)
    for k, store in enumerate(knn.datastores):
        expected = knn_proba(qf.keys[k], store.keys, store.values, k=3, n_classes=3)
        assert np.array_equal(proba1[k, : len(expected)].numpy(), expected)


def test_capacity_zero_falls_back_to_the_global_model(split):
    train, val, test = split
    params = _params()
    knn = personalize(MODEL, params, train, validation=val, capacity=0.0)
    assert np.all(knn.lambdas == 0) and all(len(s) == 0 for s in knn.datastores)
    glob = personalize(MODEL, params, train, lam=0.0)
    assert torch.equal(knn.predict_proba(test), glob.predict_proba(test))
    with pytest.raises(ValueError, match="empty datastore"):
        personalize(MODEL, params, train, lam=0.5, capacity=0.0)


def test_personalize_selects_lambda_on_validation(split):
    train, val, test = split
    knn = personalize(MODEL, _params(), train, validation=val)
    assert set(knn.lambdas) <= set(LAMBDA_GRID)
    shared = personalize(MODEL, _params(), train, validation=val, lambda_selection="shared")
    assert len(set(shared.lambdas)) == 1
    inc = personalize(MODEL, _params(), train, validation=val, include_validation=True)
    assert [len(s) for s in inc.datastores] == (train.n + val.n).tolist()
    assert np.array_equal(inc.lambdas, knn.lambdas)
    fixed_inc = personalize(MODEL, _params(), train, validation=val, lam=0.5, include_validation=True)
    assert [len(s) for s in fixed_inc.datastores] == (train.n + val.n).tolist()
    metrics = knn.evaluate(test)
    assert set(metrics) == {"test_loss", "test_accuracy"} and metrics["test_accuracy"].shape == (5,)


def test_personalize_is_deterministic(split):
    train, val, test = split
    a = personalize(MODEL, _params(), train, validation=val, capacity=0.6, seed=3)
    b = personalize(MODEL, _params(), train, validation=val, capacity=0.6, seed=3)
    assert np.array_equal(a.lambdas, b.lambdas)
    assert torch.equal(a.predict_proba(test), b.predict_proba(test))
    c = personalize(MODEL, _params(), train, lam=1.0, capacity=0.6, seed=4)
    assert any(not np.array_equal(x.keys, y.keys) for x, y in zip(a.datastores, c.datastores))


def test_personalize_bad_inputs(split):
    train, val, _ = split
    p = _params()
    with pytest.raises(ValueError, match="k must be"):
        personalize(MODEL, p, train, lam=0.5, k=0)
    for bad in (-0.2, 1.2):
        with pytest.raises(ValueError, match="lam"):
            personalize(MODEL, p, train, lam=bad)
        with pytest.raises(ValueError, match="capacity"):
            personalize(MODEL, p, train, lam=0.5, capacity=bad)
    with pytest.raises(ValueError, match="validation"):
        personalize(MODEL, p, train)
    with pytest.raises(ValueError, match="validation must have"):
        personalize(MODEL, p, train, validation=val.select([0, 1]))
    with pytest.raises(ValueError, match="lambda_selection"):
        personalize(MODEL, p, train, validation=val, lambda_selection="global")
    with pytest.raises(ValueError, match="include_validation"):
        personalize(MODEL, p, train, lam=0.5, include_validation=True)
    with pytest.raises(ValueError, match="sigma"):
        personalize(MODEL, p, train, lam=0.5, sigma=-1.0)


def test_knnper_model_checks_and_memory(split):
    train, _, test = split
    knn = personalize(MODEL, _params(), train, lam=0.5)
    mem = knn.memory_bytes()
    n_params = sum(v.numel() for v in _params().values())
    assert np.array_equal(mem, np.array([s.nbytes for s in knn.datastores]) + 4 * n_params)
    assert np.array_equal(knn.memory_bytes(include_model=False), mem - 4 * n_params)
    probs = knn.knn_proba(client_features(MODEL, _params(), test))
    assert all(np.allclose(p.sum(1), 1) for p in probs if len(p))
    empty = Datastore(np.zeros((0, 4)), np.zeros(0, np.int64), 3)
    with pytest.raises(ValueError, match="empty datastore"):
        KNNPerModel(MODEL, _params(), (empty,), np.array([0.3]))
    with pytest.raises(ValueError, match="lambdas"):
        KNNPerModel(MODEL, _params(), knn.datastores, np.full(5, 1.5))
    with pytest.raises(ValueError, match="expected data for 5"):
        knn.predict_proba(test.select([0, 1]))


def test_accuracy_grid_endpoints(split):
    train, _, test = split
    p = _params()
    store, query = client_features(MODEL, p, train), client_features(MODEL, p, test)
    acc = accuracy_grid(store, query, capacities=[0.0, 1.0], lambdas=[0.0, 1.0], k=3)
    assert acc.shape == (2, 2, 5)
    glob = personalize(MODEL, p, train, lam=0.0).evaluate(test)["test_accuracy"]
    knn1 = personalize(MODEL, p, train, lam=1.0, k=3).evaluate(test)["test_accuracy"]
    assert np.allclose(acc[0, 0], glob) and np.allclose(acc[0, 1], glob)  # capacity 0: global for every λ
    assert np.allclose(acc[1, 0], glob) and np.allclose(acc[1, 1], knn1)
    with pytest.raises(ValueError, match="capacities"):
        accuracy_grid(store, query, capacities=[1.5], lambdas=[0.0])
    with pytest.raises(ValueError, match="same clients"):
        accuracy_grid(store, ClientFeatures(query.keys[:2], query.proba[:2], query.labels[:2]), capacities=[1.0],
                      lambdas=[0.0])


# ---------------------------------------------------------------- the engine algorithm


def test_knnper_algorithm_runs_and_is_deterministic(split):
    train, val, test = split
    data = FederatedDataset(train, test, 3)
    alg = KNNPer(MODEL, LocalSGD(lr=0.1, local_steps=2, batch_size=4), validation=val, k=3)
    _, h1 = run(alg, data, rounds=3, seed=1, progress=False)
    state, h2 = run(alg, data, rounds=3, seed=1, progress=False)
    for name in h1.clients:
        assert np.allclose(np.array(h1.clients[name]), np.array(h2.clients[name]), equal_nan=True)
    assert {"test_accuracy", "train_accuracy", "test_global_accuracy", "lambda"} <= set(h1.clients)
    knn = alg.personalize(state, train)
    assert np.array_equal(knn.evaluate(test)["test_accuracy"], h1.per_client("test_accuracy"))
    zero = KNNPer(MODEL, LocalSGD(lr=0.1, local_steps=2, batch_size=4), lam=0.0)
    m = zero.evaluate(state, data)
    assert np.allclose(m["test_accuracy"], m["test_global_accuracy"], equal_nan=True)


def test_knnper_adapt_new_clients(split):
    train, val, test = split
    old = FederatedDataset(train.select([0, 1, 2]), test.select([0, 1, 2]), 3)
    new = FederatedDataset(train.select([3, 4]), test.select([3, 4]), 3)
    alg = KNNPer(MODEL, LocalSGD(lr=0.1, local_steps=2, batch_size=4), validation=val.select([0, 1, 2]))
    state, _ = run(alg, old, rounds=2, seed=0, progress=False)
    knn, metrics = alg.adapt(state, new, seed=0, validation=val.select([3, 4]))
    assert knn.n_clients == 2
    assert all(isinstance(v, np.ndarray) and v.shape == (2,) for v in metrics.values())
    assert {"train_accuracy", "test_accuracy", "train_loss", "test_loss"} <= set(metrics)
    with pytest.raises(ValueError, match="validation"):
        alg.adapt(state, new, seed=0)
    with pytest.raises(ValueError, match="seed"):
        alg.adapt(state, new, seed=-1, validation=val.select([3, 4]))


def test_knnper_adapt_equal_seeds_give_equal_datastores(split):
    train, _, test = split
    old = FederatedDataset(train.select([0, 1, 2]), test.select([0, 1, 2]), 3)
    new = FederatedDataset(train.select([3, 4]), test.select([3, 4]), 3)
    alg = KNNPer(MODEL, LocalSGD(lr=0.1, local_steps=2, batch_size=4), lam=0.5, capacity=0.5)
    state, _ = run(alg, old, rounds=2, seed=0, progress=False)
    (a, ma), (b, mb) = alg.adapt(state, new, seed=3), alg.adapt(state, new, seed=3)
    assert all(np.array_equal(x.keys, y.keys) for x, y in zip(a.datastores, b.datastores))
    assert all(np.array_equal(ma[k], mb[k], equal_nan=True) for k in ma)
    c, _ = alg.adapt(state, new, seed=4)
    assert any(not np.array_equal(x.keys, y.keys) for x, y in zip(a.datastores, c.datastores))


def test_knnper_algorithm_bad_inputs(split):
    solver = LocalSGD(lr=0.1)
    with pytest.raises(ValueError, match="validation"):
        KNNPer(MODEL, solver)
    with pytest.raises(ValueError, match="lam"):
        KNNPer(MODEL, solver, lam=2.0)
    with pytest.raises(ValueError, match="k must be"):
        KNNPer(MODEL, solver, lam=0.5, k=0)
    with pytest.raises(ValueError, match="capacity"):
        KNNPer(MODEL, solver, lam=0.5, capacity=-0.5)
    with pytest.raises(TypeError, match="hidden"):
        KNNPer(LinearModel(5, 3), solver, lam=0.5)
    with pytest.raises(TypeError, match="ClientData"):
        KNNPer(MODEL, solver, validation=np.zeros(3))


def test_check_grid():
    assert check_grid("lambdas", (0.0, 0.5, 1.0)).tolist() == [0.0, 0.5, 1.0]
    for bad in ((), (1.5,), (-0.1, 0.5)):
        with pytest.raises(ValueError, match=r"lambdas must be a non-empty sequence of numbers in \[0, 1\]"):
            check_grid("lambdas", bad)
    with pytest.raises(ValueError, match="lambdas must contain only finite values"):
        check_grid("lambdas", (float("nan"),))


# ---------------------------------------------------------------- cost and memory (§3.7)


def test_cost_table():
    model = MLP(64, (32, 16), 10)   # the chapter's digits model
    n_params = sum(v.numel() for v in model.init(torch.Generator().manual_seed(0)).values())
    assert param_count(model) == n_params
    n = [10, 20]
    fedavg, fedem = cost_table("fedavg", model, n), cost_table("fedem", model, n, n_components=3)
    assert fedavg["upload_bytes"] == 4 * n_params and fedem["upload_bytes"] == 3 * 4 * n_params
    knn = cost_table("knnper", model, n)
    assert knn["upload_bytes"] == fedavg["upload_bytes"]
    assert knn["memory_bytes"] == [4 * n_params + m * (16 * 4 + 8) for m in n]
    assert cost_table("local", model, n)["upload_bytes"] == 0
    assert cost_table("fedrep", model, n)["upload_bytes"] == 4 * (n_params - (16 * 10 + 10))
    assert cost_table("ditto", model, n)["memory_bytes"] == [8 * n_params] * 2
    with pytest.raises(ValueError, match="method"):
        cost_table("pfedgp", model, n)
