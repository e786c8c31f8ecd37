r"""Experiment functions of the FedEM notebook (thesis §3.4–3.5; module level so sweep workers can import them).

Every ``*`` experiment takes keyword arguments and a ``seed`` and returns a JSON-serialisable dict,
so :func:`fedlab.experiments.sweep` can run it over seeds. Data sets and methods are chosen by name
from the dispatch tables :data:`fedlab.fedem.data.DATASETS` and :data:`fedlab.fedem.algorithms.PRESETS`. Scores
follow the shared personalization protocol (:data:`fedlab.algorithms.personalized.PROTOCOL`): test accuracy averaged
over clients with weights = local test sizes, and the bottom decile of client accuracies.
"""
from __future__ import annotations

import itertools
import time
from typing import Any

import networkx as nx
import numpy as np
import torch

from fedlab._rng import Stream, derive_seed
from fedlab._validation import check_array, check_bool, check_choice, check_int, check_real, check_simplex, check_type
from fedlab.algorithms.personalized import FedAvgPlus, FineTuneState, history_scores, protocol_scores
from fedlab.fedem.algorithms import PRESETS
from fedlab.fedem.data import MixtureDataset, make_dataset
from fedlab.engine import LocalSGD, run, solver_from_recipe
from fedlab.models import LinearModel, Model

__all__ = [
    "TRAINING",
    "LABELS",
    "model_for",
    "build_method",
    "train_method",
    "erdos_renyi_mixing",
    "component_cosines",
    "match_components",
    "oracle_accuracy",
    "compare_methods",
    "effect_of_m",
    "unseen_clients",
    "decentralized_vs_server",
    "cluster_recovery",
    "opposite_labels_demo",
    "sampling_rate_effect",
    "clustered_tolerances",
]

# ----------------------------------------------------------------------------------------------
# Configuration

TRAINING = {"rounds": 200, "local_steps": 10, "batch_size": 32, "lr": 0.25}
"""Shared training budget: every method gets the same rounds, local steps, batch size and step size."""

# ----------------------------------------------------------------------------------------------
# Models and methods by name


def model_for(data: MixtureDataset) -> Model:
    """A linear softmax classifier ``d -> C`` for the data set (a logistic model for the synthetic data)."""
    check_type("data", data, MixtureDataset)
    return LinearModel(int(np.asarray(data.train.xs[0]).shape[1]), data.train.n_classes)


LABELS = {name: method.label for name, method in PRESETS.items()}
"""Display names of the chapter's methods (:data:`fedlab.fedem.algorithms.PRESETS`)."""


def build_method(name: str, model: Model, solver: LocalSGD, **options: Any):
    """``PRESETS[name](model, solver, **options)``: a method of the chapter with its Table 3.2 defaults."""
    check_choice("method", name, PRESETS)
    return PRESETS[name](model, solver, **options)


def train_method(name: str, data, model: Model, *, seed: int, rounds: int, lr: float, local_steps: int,
                 batch_size: int, eval_every: int | None = None, recipe: dict | None = None, **options: Any):
    """Build and run a method on a :class:`~fedlab.engine.FederatedDataset`; returns ``(algorithm, state, history)``.

    ``recipe`` (e.g. :data:`fedlab.fedem.published.AUTHORS_RECIPE`) adds the authors' local solver
    (:func:`fedlab.engine.solver_from_recipe`); without it the solver is plain SGD with ``local_steps`` draws."""
    check_choice("method", name, PRESETS)
    rounds = check_int("rounds", rounds, low=0)
    solver = solver_from_recipe(recipe or {}, lr=lr, local_steps=local_steps, batch_size=batch_size,
                                rounds=max(rounds, 1), method=PRESETS[name].cls)
    if eval_every is not None:
        check_int("eval_every", eval_every, low=1)
    alg = build_method(name, model, solver, **options)
    state, history = run(alg, data, rounds=rounds, seed=seed, eval_every=eval_every or max(1, rounds // 10),
                         progress=False)
    return alg, state, history


def _training(kw: dict) -> dict:
    """The shared budget with the caller's overrides, checked (names and values)."""
    unknown = sorted(set(kw) - set(TRAINING) - {"eval_every", "recipe"})
    if unknown:
        raise TypeError(f"unknown training options {unknown}; the options are {sorted(TRAINING)}, eval_every and "
                        "recipe.")
    cfg = {**TRAINING, **kw}
    check_int("rounds", cfg["rounds"], low=0)
    solver_from_recipe(cfg.get("recipe") or {}, lr=cfg["lr"], local_steps=cfg["local_steps"],
                       batch_size=cfg["batch_size"], rounds=max(cfg["rounds"], 1))
    if cfg.get("eval_every") is not None:
        check_int("eval_every", cfg["eval_every"], low=1)
    return cfg


def _data_kwargs(data_kwargs) -> dict:
    return dict(check_type("data_kwargs", data_kwargs, dict, optional=True) or {})


def _positive_ints(name: str, values) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (tuple, list, np.ndarray)) or len(values) == 0:
        raise TypeError(f"{name} must be a non-empty sequence of integers >= 1, got {values!r}.")
    return [check_int(f"{name}[{i}]", v, low=1) for i, v in enumerate(values)]


# ----------------------------------------------------------------------------------------------
# Helpers


def erdos_renyi_mixing(n: int, p: float = 0.5, seed: int = 0, *, weights: str = "fmmc",
                       self_loops: bool = True, max_tries: int = 100) -> tuple[np.ndarray, nx.Graph]:
    """A connected Erdős–Rényi graph G(n, p) and its mixing matrix (thesis App. E.9: p = 0.5, FMMC).

    The graph is redrawn (seeds derived from ``seed``) until it is connected.

    Parameters
    ----------
    n : int
    p : float in (0, 1]
    seed : int
    weights : {"fmmc", "metropolis", "local_degree"}
        ``fedlab.mixing`` rule.
    self_loops : bool
        FMMC with self-loops (Boyd et al.); ``False`` mimics the reference code.
    max_tries : int

    Returns
    -------
    W : np.ndarray (n, n), graph : networkx.Graph
    """
    from fedlab.mixing import fmmc_weights, local_degree_weights, metropolis_weights

    n = check_int("n", n, low=1)
    p = check_real("p", p, low=0, high=1, low_open=True)
    check_choice("weights", weights, ("fmmc", "metropolis", "local_degree"))
    check_int("seed", seed, low=0)
    self_loops = check_bool("self_loops", self_loops)
    for attempt in range(check_int("max_tries", max_tries, low=1)):
        graph = nx.gnp_random_graph(n, p, seed=derive_seed(seed, attempt) % (2 ** 32))
        if nx.is_connected(graph):
            break
    else:
        raise ValueError(f"no connected G({n}, {p}) in {max_tries} draws; increase p.")
    if weights == "fmmc":
        return fmmc_weights(graph, self_loops=self_loops), graph
    rule = metropolis_weights if weights == "metropolis" else local_degree_weights
    return rule(graph), graph


def component_cosines(params: dict, theta: np.ndarray) -> np.ndarray:
    r"""Cosine between learned and true logistic components, after the best matching permutation.

    A 2-class softmax component with weight rows :math:`w_0, w_1` is the logistic model
    :math:`w_1 - w_0`; its cosine with each true :math:`\theta_m` is computed and components are matched
    by the permutation maximising the total cosine.

    Parameters
    ----------
    params : dict with ``weight`` of shape (M', 2, d)
        Stacked components of a :class:`~fedlab.models.LinearModel` (``M'`` learned components).
    theta : array (M, d)

    Returns
    -------
    np.ndarray (M,)
        Cosine of each true component with its matched learned component (``M' >= M``).
    """
    if not isinstance(params, dict) or not isinstance(params.get("weight"), torch.Tensor):
        raise TypeError(f"params must be a dict with the stacked tensor 'weight' (M, 2, d), got {params!r:.80}.")
    w = params["weight"].detach().to(torch.float64).numpy()
    if w.ndim != 3 or w.shape[1] != 2:
        raise ValueError(f"params['weight'] must have shape (M, 2, d), got {w.shape}.")
    direction = w[:, 1] - w[:, 0]
    theta = check_array("theta", theta, shape=(None, w.shape[2]))
    if theta.shape[0] == 0:
        raise ValueError("theta must hold at least one true component.")
    cos = (theta / np.linalg.norm(theta, axis=1, keepdims=True)) @ \
        (direction / np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-30)).T
    if direction.shape[0] < theta.shape[0]:
        raise ValueError("need at least as many learned components as true ones.")
    best = max(itertools.permutations(range(direction.shape[0]), theta.shape[0]),
               key=lambda perm: sum(cos[m, j] for m, j in enumerate(perm)))
    return np.array([cos[m, j] for m, j in enumerate(best)])


def match_components(pi_learned, pi_true) -> tuple[int, ...]:
    """The permutation ``perm`` of learned components minimising ``sum |pi_learned[:, perm] - pi_true|``."""
    a, b = check_simplex("pi_learned", pi_learned, ndim=2), check_simplex("pi_true", pi_true, ndim=2)
    if a.shape != b.shape:
        raise ValueError(f"pi_learned and pi_true must have the same shape, got {a.shape} and {b.shape}.")
    return min(itertools.permutations(range(a.shape[1])), key=lambda perm: np.abs(a[:, list(perm)] - b).sum())


def oracle_accuracy(data: MixtureDataset) -> dict:
    r"""Test accuracy of the Bayes predictor that knows :math:`\Pi^*` and the true components (a ceiling).

    It predicts :math:`\arg\max_y \sum_m \pi^*_{tm} 1\{h^*_m(x) = y\}` with the noise-free component
    labels :math:`h^*_m` (synthetic: :math:`1\{x^\top\theta_m > 0\}`; permuted digits: :math:`\sigma_m(\text{digit})`),
    i.e. eq. (3.5) with perfect components. Per-sample latent components are unknown at test time, so
    with mixed weights even this predictor errs. Label-group digits share :math:`p(y|x)`: the ceiling is 1.

    Returns
    -------
    dict
        ``average`` and ``bottom_decile`` (protocol of :data:`~fedlab.algorithms.personalized.PROTOCOL`) and
        per-client ``accuracy``.
    """
    check_type("data", data, MixtureDataset)
    acc = []
    gen = data.meta.get("generator")
    for t in range(data.n_clients):
        x, y, z = np.asarray(data.test.xs[t], dtype=float), data.test.ys[t], data.z_test[t]
        if len(y) == 0:
            acc.append(np.nan)
            continue
        if gen == "synthetic_mixture":
            votes = (x @ data.meta["theta"].T > 0).astype(float) @ data.pi[t]  # weight of label 1
            pred = (votes > 0.5).astype(int)
        elif gen == "digits_mixture" and data.meta["mode"] == "permutation":
            perms = data.meta["permutations"]
            inverse = np.argsort(perms, axis=1)
            digit = inverse[np.maximum(z, 0), y]
            score = np.zeros((len(y), perms.shape[1]))
            for m in range(perms.shape[0]):
                score[np.arange(len(y)), perms[m, digit]] += data.pi[t, m]
            pred = score.argmax(1)
        else:
            pred = y
        acc.append(float(np.mean(pred == y)))
    acc = np.asarray(acc)
    return {**protocol_scores({"test_accuracy": acc}, data.test.sizes), "accuracy": acc.tolist()}


def _scores(history) -> dict:
    rounds, avg = history.curve("test_accuracy", "weighted")
    _, bottom = history.curve("test_accuracy", "bottom_decile")
    _, train = history.curve("train_accuracy", "weighted")
    return {**history_scores(history), "train_average": float(train[-1]), "rounds": rounds.tolist(),
            "curve": avg.tolist(), "bottom_curve": bottom.tolist()}


# ----------------------------------------------------------------------------------------------
# Experiments (module-level, JSON results)


def compare_methods(*, dataset: str = "synthetic", methods=("local", "fedavg", "fedem"), seed: int = 0,
                    data_kwargs: dict | None = None, method_kwargs: dict | None = None, eval_every: int | None = None,
                    **training: Any) -> dict:
    """Train several methods on the same data and seed; return their protocol scores and curves.

    Parameters
    ----------
    dataset : key of :data:`fedlab.fedem.data.DATASETS`
    methods : sequence of keys of :data:`fedlab.fedem.algorithms.PRESETS`
    seed : int
        Data and training seed.
    data_kwargs : dict, optional
        Overrides of the data configuration.
    method_kwargs : dict, optional
        ``{method: options}`` overriding the presets' defaults.
    **training :
        Overrides of :data:`TRAINING` (``rounds``, ``local_steps``, ``batch_size``, ``lr``).

    Returns
    -------
    dict
        ``{method: {"average", "bottom_decile", "train_average", "rounds", "curve", "bottom_curve",
        "seconds"}}`` (accuracies in [0, 1]); FedEM entries add the learned ``pi`` (clients × components),
        ``cosines`` (synthetic) and ``pi_error``.
    """
    methods = [check_choice("methods", name, PRESETS) for name in check_type("methods", methods, (tuple, list))]
    if not methods:
        raise ValueError("methods must name at least one method.")
    method_kwargs = check_type("method_kwargs", method_kwargs, dict, optional=True)
    for name, opts in (method_kwargs or {}).items():
        check_type(f"method_kwargs[{name!r}]", opts, dict)
    if eval_every is not None:
        check_int("eval_every", eval_every, low=1)
    cfg = _training(training)
    data = make_dataset(dataset, seed, **_data_kwargs(data_kwargs))
    fed = data.federated()
    model = model_for(data)
    out = {}
    for name in methods:
        opts = dict((method_kwargs or {}).get(name, {}))
        if name == "d-fedem" and "mixing_matrix" not in opts:
            opts["mixing_matrix"] = erdos_renyi_mixing(data.n_clients, 0.5, seed)[0]
        start = time.perf_counter()
        alg, state, history = train_method(name, fed, model, seed=seed, eval_every=eval_every, **cfg, **opts)
        res = {**_scores(history), "seconds": time.perf_counter() - start}
        if name == "fedem":
            res.update(_mixture_recovery(state, data))
        if name == "clustered":
            res["n_clusters"] = int(max(state.clusters)) + 1
        out[name] = res
    return out


def _mixture_recovery(state, data: MixtureDataset) -> dict:
    """How well FedEM recovered Θ* and Π* (synthetic data: cosines; any mixture data: π error after matching)."""
    m_true, m = data.n_components, state.pi.shape[1]
    pi = state.pi.numpy()
    res = {"pi": pi.tolist()}
    if "theta" in data.meta and m >= m_true:
        res["cosines"] = component_cosines(state.params, data.meta["theta"]).tolist()
    if m == m_true:
        best = list(match_components(pi, data.pi))
        res["pi_error"] = float(np.abs(pi[:, best] - data.pi).mean())
    return res


def effect_of_m(*, dataset: str = "synthetic", m_values=(1, 2, 3, 4, 5), seed: int = 0,
                data_kwargs: dict | None = None, eval_every: int | None = None, **training: Any) -> dict:
    """FedEM with ``M`` components for each ``M`` in ``m_values`` (thesis Fig. 3.1, right).

    Returns ``{"M": [...], "average": [...], "bottom_decile": [...], "curves": [...], "rounds": [...]}``.
    """
    m_values = _positive_ints("m_values", m_values)
    if eval_every is not None:
        check_int("eval_every", eval_every, low=1)
    cfg = _training(training)
    data = make_dataset(dataset, seed, **_data_kwargs(data_kwargs))
    fed, model = data.federated(), model_for(data)
    out = {"M": [], "average": [], "bottom_decile": [], "curves": [], "rounds": []}
    for m in m_values:
        _, _, history = train_method("fedem", fed, model, seed=seed, n_components=int(m), eval_every=eval_every,
                                     **cfg)
        s = _scores(history)
        out["M"].append(int(m))
        out["average"].append(s["average"])
        out["bottom_decile"].append(s["bottom_decile"])
        out["curves"].append(s["curve"])
        out["rounds"] = s["rounds"]
    return out


def unseen_clients(*, dataset: str = "synthetic", train_fraction: float = 0.8, n_iter=(1, 50), seed: int = 0,
                   data_kwargs: dict | None = None, **training: Any) -> dict:
    """Clients unseen at training (thesis Table 3.3): train on the first 80 % of clients, serve the rest.

    FedAvg serves its global model; FedAvg+ fine-tunes it for one local epoch; FedEM fits only the
    new clients' weights π with the components frozen, with ``n_iter[0]`` (the thesis' one E-step) and
    ``n_iter[1]`` EM iterations.

    Returns
    -------
    dict
        ``{label: {"average", "bottom_decile", "train_average", "n_test"}}`` on the unseen clients (``n_test``:
        their test-set size), plus
        ``"seen_fedem"`` (FedEM on the training clients) and ``"pi_entropy"`` (mean entropy of π, seen vs
        unseen, thesis App. E.11).
    """
    n_iter = _positive_ints("n_iter", n_iter)
    check_real("train_fraction", train_fraction, low=0, high=1, low_open=True, high_open=True)
    cfg = _training(training)
    data = make_dataset(dataset, seed, **_data_kwargs(data_kwargs))
    seen, unseen = data.split_clients(train_fraction)
    fed_seen, fed_new = seen.federated(), unseen.federated()
    model = model_for(data)
    n_test = fed_new.test.n.numpy()
    out: dict[str, Any] = {}

    def pack(metrics):
        scores = protocol_scores(metrics, n_test)
        tr = protocol_scores({"test_accuracy": metrics["train_accuracy"]}, fed_new.train.n.numpy())["average"]
        return {**scores, "train_average": tr, "n_test": int(n_test.sum())}

    fedavg, state, _ = train_method("fedavg", fed_seen, model, seed=seed, **cfg)
    out["FedAvg"] = pack(fedavg.evaluate(state, fed_new))
    plus = FedAvgPlus(model, fedavg.solver)
    out["FedAvg+"] = pack(plus.adapt(FineTuneState.from_fedavg(state, seed), fed_new, seed=seed)[1])
    fedem, estate, ehist = train_method("fedem", fed_seen, model, seed=seed, **cfg)
    out["seen_fedem"] = history_scores(ehist)
    entropies = {}
    for it in n_iter:
        pi, metrics = fedem.adapt(estate, fed_new, seed=seed, n_iter=int(it))
        out[f"FedEM ({int(it)} EM step{'s' if it > 1 else ''})"] = pack(metrics)
        entropies[int(it)] = float(np.mean(-(pi * np.log(np.maximum(pi, 1e-12))).sum(1)))
    seen_pi = estate.pi.numpy()
    out["pi_entropy"] = {"seen": float(np.mean(-(seen_pi * np.log(np.maximum(seen_pi, 1e-12))).sum(1))),
                         "unseen": entropies}
    return out


def decentralized_vs_server(*, dataset: str = "synthetic", p: float = 0.5, seed: int = 0,
                            data_kwargs: dict | None = None, server: bool = True, train_with=("fmmc", "metropolis"),
                            eval_every: int | None = None, **training: Any) -> dict:
    """FedEM (server) vs D-FedEM on an Erdős–Rényi(p) graph with FMMC and Metropolis weights (thesis Table 5).

    Returns scores of each method (``"FedEM"`` only when ``server``; it is the same run as
    ``compare_methods(methods=["fedem"])`` with the same arguments), the SLEM of both matrices, D-FedEM's
    consensus distance per round, and the graph's edge count. ``train_with`` lists the matrices D-FedEM
    is trained with (the SLEM of both is always reported).
    """
    from fedlab.mixing import second_largest_eigenvalue_modulus

    train_with = [check_choice("train_with", m, ("fmmc", "metropolis"))
                  for m in check_type("train_with", train_with, (tuple, list))]
    server = check_bool("server", server)
    check_real("p", p, low=0, high=1, low_open=True)
    if eval_every is not None:
        check_int("eval_every", eval_every, low=1)
    cfg = _training(training)
    data = make_dataset(dataset, seed, **_data_kwargs(data_kwargs))
    fed, model = data.federated(), model_for(data)
    w_fmmc, graph = erdos_renyi_mixing(data.n_clients, p, seed, weights="fmmc")
    w_metro = erdos_renyi_mixing(data.n_clients, p, seed, weights="metropolis")[0]
    out: dict[str, Any] = {"slem": {"fmmc": second_largest_eigenvalue_modulus(w_fmmc),
                                    "metropolis": second_largest_eigenvalue_modulus(w_metro)},
                           "edges": graph.number_of_edges()}
    if server:
        _, _, h = train_method("fedem", fed, model, seed=seed, eval_every=eval_every, **cfg)
        out["FedEM"] = _scores(h)
    for key, label, w in (("fmmc", "D-FedEM (FMMC)", w_fmmc), ("metropolis", "D-FedEM (Metropolis)", w_metro)):
        if key not in train_with:
            continue
        _, _, h = train_method("d-fedem", fed, model, seed=seed, mixing_matrix=w, eval_every=eval_every, **cfg)
        out[label] = {**_scores(h), "consensus": [e["consensus"] for e in h.log]}
    return out


def cluster_recovery(*, n_components: int = 2, seed: int = 0, data_kwargs: dict | None = None,
                     **training: Any) -> dict:
    """FedEM on clustered data (one-hot π*, thesis App. E.12): cluster accuracy and component cosines."""
    cfg = _training(training)
    data = make_dataset("synthetic", seed, **{"n_components": n_components, "one_hot_weights": True,
                                               **_data_kwargs(data_kwargs)})
    fed, model = data.federated(), model_for(data)
    _, state, h = train_method("fedem", fed, model, seed=seed, n_components=n_components, **cfg)
    truth, learned = data.pi.argmax(1), state.pi.numpy().argmax(1)
    acc = max(np.mean(np.asarray(perm)[learned] == truth) for perm in itertools.permutations(range(n_components)))
    return {"cluster_accuracy": float(acc), "cosines": component_cosines(state.params, data.meta["theta"]).tolist(),
            **history_scores(h)}


def opposite_labels_demo(*, n_clients: int = 10, n_samples: int = 100, dim: int = 5, seed: int = 0,
                         **training: Any) -> dict:
    r"""The impossibility argument in miniature (thesis §3.4): same :math:`p(x)`, contradicting :math:`p(y|x)`.

    Half the clients label :math:`x \sim \mathcal N(0, I_d)` with :math:`y = 1\{w^\top x > 0\}`, the other half
    with the opposite rule. Other clients' labels carry no usable information for a single shared model:
    FedAvg ends near chance, Local learns each rule alone; FedEM with M = 2 (the mixture assumption
    holds: two components) recovers both rules.

    Returns
    -------
    dict
        ``{"Local", "FedAvg", "FedEM (M=2)"}`` -> protocol scores and ``n_test`` (the test-set size).
    """
    from fedlab.engine import FederatedDataset

    n_clients, n_samples = check_int("n_clients", n_clients, low=2), check_int("n_samples", n_samples, low=2)
    dim = check_int("dim", dim, low=1)
    cfg = _training({"rounds": 50, **training})
    rng = np.random.default_rng(derive_seed(seed, Stream.FEDEM_NEW_CLIENTS))
    w = rng.standard_normal(dim)
    xs, ys = [], []
    for k in range(n_clients):
        x = rng.standard_normal((n_samples, dim)).astype(np.float32)
        y = (x @ w > 0).astype(np.int64)
        xs.append(x)
        ys.append(y if k % 2 == 0 else 1 - y)
    fed = FederatedDataset.from_client_arrays(xs, ys, test_fraction=0.5, n_classes=2, seed=seed)
    model = LinearModel(dim, 2)
    out = {}
    for label, name, opts in (("Local", "local", {}), ("FedAvg", "fedavg", {}),
                              ("FedEM (M=2)", "fedem", {"n_components": 2})):
        _, _, h = train_method(name, fed, model, seed=seed, **cfg, **opts)
        out[label] = {**history_scores(h), "n_test": int(fed.test.n.sum())}
    return out


def sampling_rate_effect(*, dataset: str = "synthetic", rates=(0.1, 0.2, 0.5, 1.0), methods=("fedavg+", "fedem"),
                         seed: int = 0, data_kwargs: dict | None = None, eval_every: int | None = None,
                         **training: Any) -> dict:
    """Client sampling (thesis Fig. 3.1, left): each method with a fraction ``rate`` of the clients drawn uniformly
    without replacement every round, for each rate (the rest of the budget as in :func:`compare_methods`).

    Returns ``{"rates": [...], "average": {method: [...]}, "bottom_decile": {method: [...]}}``.
    """
    if isinstance(rates, (str, bytes)) or not isinstance(rates, (tuple, list, np.ndarray)) or len(rates) == 0:
        raise TypeError(f"rates must be a non-empty sequence of sampling rates in (0, 1], got {rates!r}.")
    rates = [check_real(f"rates[{i}]", r, low=0, high=1, low_open=True) for i, r in enumerate(rates)]
    methods = [check_choice("methods", m, PRESETS) for m in check_type("methods", methods, (tuple, list))]
    if not methods:
        raise ValueError("methods must name at least one method.")
    out = {"rates": rates, "average": {m: [] for m in methods}, "bottom_decile": {m: [] for m in methods}}
    for rate in rates:
        res = compare_methods(dataset=dataset, methods=methods, seed=seed, data_kwargs=data_kwargs,
                              method_kwargs={m: {"participation": rate} for m in methods}, eval_every=eval_every,
                              **training)
        for m in methods:
            out["average"][m].append(res[m]["average"])
            out["bottom_decile"][m].append(res[m]["bottom_decile"])
    return out


def clustered_tolerances(*, dataset: str = "synthetic", tol_2_values=(1.6, 0.8, 0.4), tol_1: float = 0.4,
                         seed: int = 0, data_kwargs: dict | None = None, eval_every: int | None = None,
                         **training: Any) -> dict:
    r"""Clustered FL for each split tolerance :math:`\text{tol}_2` in ``tol_2_values`` (``tol_1`` fixed): a cluster splits
    when its mean update norm is below ``tol_1`` and its largest client update norm above :math:`\text{tol}_2`
    (the reference code uses (0.4, 1.6)).

    Returns ``{"tol_1", "tol_2": [...], "n_clusters": [...], "average": [...], "bottom_decile": [...]}``.
    """
    if isinstance(tol_2_values, (str, bytes)) or not isinstance(tol_2_values, (tuple, list, np.ndarray)) \
            or len(tol_2_values) == 0:
        raise TypeError(f"tol_2_values must be a non-empty sequence of tolerances >= 0, got {tol_2_values!r}.")
    tols = [check_real(f"tol_2_values[{i}]", v, low=0) for i, v in enumerate(tol_2_values)]
    tol_1 = check_real("tol_1", tol_1, low=0)
    out = {"tol_1": tol_1, "tol_2": tols, "n_clusters": [], "average": [], "bottom_decile": []}
    for tol_2 in tols:
        res = compare_methods(dataset=dataset, methods=["clustered"], seed=seed, data_kwargs=data_kwargs,
                              method_kwargs={"clustered": {"tol_1": tol_1, "tol_2": tol_2}}, eval_every=eval_every,
                              **training)["clustered"]
        for key in ("n_clusters", "average", "bottom_decile"):
            out[key].append(res[key])
    return out
