r"""Paper mode of the topology chapter: DPASGD on every overlay of AWS North America with LEAF's FEMNIST and
Shakespeare (thesis §2.1.4.3 and §2.1.4.5, Fig. 2.8, Figs. C.1–C.2, Table 2.3).

The 22 silos of AWS NA (1 Gbps core, 100 Mbps access links, :math:`s = 1`) each receive a log-normal number of
natural clients — writers or speaking roles — with mean 5 and standard deviation 1.5 (§2.1.4.3; at least one), drawn
without replacement, and pool their train and test samples (:func:`fedlab.data.federated.group_clients`). Every
overlay of :data:`fedlab.topology.experiments.TRAINED_OVERLAYS` trains the paper's model from the same initial point
with :func:`fedlab.topology.experiments.train_overlays`, whose clock is the network's (Algorithm 5, the model size and
computation time of Table 2.4), and the training time is the time to the chapter's target: 95 % of the STAR's final
training accuracy (:data:`fedlab.topology.experiments.TARGET_FRACTION`). The claims of these runs are
:func:`fedlab.topology.claims.paper_claims`.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_choice, check_int, check_real, check_type
from fedlab.engine import FederatedDataset
from fedlab.mixing import local_degree_weights
from fedlab.data.federated import group_clients, load_federated
from fedlab.paper_mode import PaperSetting, check_settings, seconds_per_round, stand_in_data, sweep_settings
from fedlab.topology.algorithms import AveragedDPASGD
from fedlab.topology.delays import preset_params
from fedlab.topology.experiments import TRAINED_OVERLAYS, TRAINING_METRICS, train_overlays
from fedlab.topology.data import connectivity_graph, load_network
from fedlab.topology.overlays import OVERLAYS

__all__ = ["DATASETS", "NETWORK", "ACCESS_BPS", "AUTHORS_RECIPE", "WRITERS_PER_SILO", "SETTINGS", "writers_per_silo",
           "silo_data",
           "topology_paper_run", "run_paper", "expected_seconds"]

DATASETS: tuple[str, ...] = ("femnist", "shakespeare")
NETWORK = "aws_na"
ACCESS_BPS = 1e8
"""Fig. 2.8's access links: 100 Mbps (the core links are 1 Gbps)."""
WRITERS_PER_SILO = (5.0, 1.5)
"""Mean and standard deviation of the log-normal number of natural clients per silo (§2.1.4.3)."""
_COMMON = ("AWS NA (22 silos), 1 Gbps core, 100 Mbps access, s = 1; each silo a log-normal number of LEAF users "
           "(mean 5, std 1.5), 20 % of LEAF's samples, 80/20 split; Adam with lr 0.001 decaying as 1/sqrt(round). Ours: "
           "TFF's users and their train/test split, every sample of a silo's users, the same Adam (each silo keeps "
           "its moments), one seed. ")
AUTHORS_RECIPE = {"optimizer": "adam", "schedule": "sqrt", "keep_state": True}
"""The topology code's local solver: Adam, step size ∝ 1/√round, each silo's optimizer kept across rounds."""

SETTINGS: dict[str, PaperSetting] = {
    "femnist": PaperSetting(
        "femnist", "femnist_cnn", 22, rounds=1000, local_steps=1, batch_size=128, lr=0.001, seeds=1,
        paper=_COMMON + "FEMNIST: a LeNet-like CNN (2 conv, max-pool, 2 FC), batch 128. Ours: the FEMNIST CNN of "
                        "[Red+21], 1000 rounds (the thesis does not state them).", recipe=AUTHORS_RECIPE),
    "shakespeare": PaperSetting(
        "shakespeare", "char_lstm", 22, rounds=1000, local_steps=1, batch_size=512, lr=0.001, seeds=1,
        paper=_COMMON + "Shakespeare: 200-character inputs, 16-d embedding, 2 stacked GRUs of 256 units, batch 512. "
                        "Ours: 80-character windows at every position (LEAF's task), the 2-layer LSTM (256) on 8-d "
                        "embeddings, 1000 rounds.",
        loader={"seq_len": 80, "stride": 1}, recipe=AUTHORS_RECIPE),
}


def _check_setting(setting, name: str = "setting") -> PaperSetting:
    setting = check_type(name, setting, PaperSetting)
    check_choice(f"{name}.dataset", setting.dataset, DATASETS)
    return setting


def writers_per_silo(n_silos: int, seed: int = 0, mean: float = WRITERS_PER_SILO[0],
                     std: float = WRITERS_PER_SILO[1]) -> np.ndarray:
    r"""Natural clients per silo: :math:`\max(1, \mathrm{round}(X))` with :math:`X` log-normal of the given mean and
    standard deviation (:math:`\sigma^2 = \ln(1 + \mathrm{std}^2/\mathrm{mean}^2)`,
    :math:`\mu = \ln \mathrm{mean} - \sigma^2/2`)."""
    n_silos, seed = check_int("n_silos", n_silos, low=1), check_int("seed", seed, low=0)
    mean, std = check_real("mean", mean, low=0, low_open=True), check_real("std", std, low=0)
    sigma2 = np.log1p((std / mean) ** 2)
    draws = numpy_rng(seed, Stream.TOPOLOGY_DATA, 2).lognormal(np.log(mean) - sigma2 / 2, np.sqrt(sigma2), n_silos)
    return np.maximum(1, np.rint(draws)).astype(np.int64)


def silo_data(setting: PaperSetting, n_silos: int, seed: int = 0) -> FederatedDataset:
    """The real data set's natural clients pooled into ``n_silos`` silos (:func:`writers_per_silo` each, drawn at
    random without replacement with ``seed``); stops with the fetch command when the files are absent."""
    setting = _check_setting(setting)
    counts = writers_per_silo(n_silos, seed)
    users = load_federated(setting.dataset, n_clients=int(counts.sum()), seed=seed, **setting.loader)
    order = numpy_rng(seed, Stream.TOPOLOGY_DATA, 3).permutation(users.n_clients)
    return group_clients(users, [order[a:b].tolist() for a, b in zip(np.r_[0, np.cumsum(counts)[:-1]],
                                                                    np.cumsum(counts))])


def _connectivity():
    return connectivity_graph(load_network(NETWORK))


def topology_paper_run(*, setting: Mapping, seed: int = 0, device=None) -> dict:
    """Every trained overlay on one seed of a real data set (``setting`` as ``dataclasses.asdict``).

    Returns :func:`~fedlab.topology.experiments.train_overlays`'s ``tau_ms`` and ``curves`` (evaluated every
    ``rounds // 50`` rounds) and ``silo_samples`` (train + test samples of each silo).
    """
    check_type("setting", setting, Mapping)
    setting = _check_setting(PaperSetting(**setting))
    seed = check_int("seed", seed, low=0)
    conn = _connectivity()
    data = silo_data(setting, conn.n, seed)
    params = preset_params(setting.dataset, access_bps=ACCESS_BPS, local_steps=setting.local_steps)
    out = train_overlays(conn, params, data, rounds=setting.rounds, lr=setting.lr, batch_size=setting.batch_size,
                         seed=seed, eval_every=max(1, setting.rounds // 50), model=setting.build_model(),
                         backend="auto", device=device, recipe=setting.recipe)
    out["silo_samples"] = (data.train.n + data.test.n).tolist()
    return out


def run_paper(*, seeds: int | None = None, device=None, datasets=DATASETS, settings: Mapping | None = None,
              store=None) -> dict:
    """:func:`topology_paper_run` on every setting and ``seeds`` seeds (default the setting's), stored with
    :func:`fedlab.experiments.sweep` (resumable).

    Returns
    -------
    dict
        ``{dataset: {"tau_ms", "curves" (averaged over the seeds, metric by metric and clock), "silo_samples" (every
        seed's silos), "seeds"}}``.
    """
    runs = sweep_settings(topology_paper_run, SETTINGS if settings is None else settings, datasets, [{}],
                          seeds=seeds, device=device, store=store)
    return {name: _average_runs([r["result"] for r in records]) for name, records in runs.items()}


def _average_runs(results: list[dict]) -> dict:
    first = results[0]
    averaged = (*TRAINING_METRICS, "time_s")            # MATCHA+'s clock depends on the seed's random matchings
    curves = {o: {**c, **{m: np.mean([r["curves"][o][m] for r in results], axis=0).tolist() for m in averaged}}
              for o, c in first["curves"].items()}
    return {"tau_ms": first["tau_ms"], "curves": curves, "seeds": len(results),
            "silo_samples": [n for r in results for n in r["silo_samples"]]}


def expected_seconds(device=None, settings: Mapping | None = None) -> dict[str, float]:
    """Expected total run time (s) per setting on this machine: :func:`fedlab.paper_mode.seconds_per_round` of DPASGD on
    the RING with :func:`fedlab.paper_mode.stand_in_data` for the 22 silos (evaluated every round), times the rounds,
    the trained overlays and the seeds."""
    conn, out = _connectivity(), {}
    for name, setting in check_settings(settings, SETTINGS, _check_setting).items():
        params = preset_params(setting.dataset, access_bps=ACCESS_BPS)
        mixing = local_degree_weights(OVERLAYS["ring"](conn, params))
        algorithm = AveragedDPASGD(setting.build_model(), setting.solver(), mixing)
        per_round = seconds_per_round(algorithm, stand_in_data(setting, n_clients=conn.n), device=device)
        out[name] = per_round * setting.rounds * len(TRAINED_OVERLAYS) * setting.seeds
    return out
