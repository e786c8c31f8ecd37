r"""Paper mode of the topology chapter: DPASGD on every overlay of AWS North America with LEAF's FEMNIST and
Shakespeare (thesis §2.1.4.3 and §2.1.4.5, Fig. 2.8, Figs. C.1–C.2, Table 2.3).

The 22 silos of AWS NA (1 Gbps core, 100 Mbps access links, :math:`s = 1`) each receive a log-normal number of
natural clients — writers or speaking roles — with mean 5 and standard deviation 1.5 (§2.1.4.3; at least one), drawn
without replacement, and pool their train and test samples (:func:`fedlab.paper.group_clients`). Every overlay of
:data:`fedlab.topology.experiments.TRAINED_OVERLAYS` trains the paper's model from the same initial point with
:func:`fedlab.topology.experiments.train_overlays`, whose clock is the network's (Algorithm 5, the model size and
computation time of Table 2.4), and the training time is the time to the chapter's target: 95 % of the STAR's final
training accuracy.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from fedlab._rng import Stream, numpy_rng
from fedlab._validation import check_choice, check_int, check_real, check_type
from fedlab.claims import Claim
from fedlab.data.fetch import fetch_command
from fedlab.engine import FederatedDataset, LocalSGD
from fedlab.mixing import local_degree_weights
from fedlab.paper import PaperSetting, group_clients, load_federated, seconds_per_round, stand_in_data, sweep_settings
from fedlab.topology.algorithms import AveragedDPASGD
from fedlab.topology.delays import preset_params
from fedlab.topology.experiments import TRAINED_OVERLAYS, TRAINING_METRICS, time_to_target, train_overlays
from fedlab.topology.networks import connectivity_graph, load_network
from fedlab.topology.overlays import OVERLAYS

__all__ = ["DATASETS", "NETWORK", "ACCESS_BPS", "WRITERS_PER_SILO", "TARGET_FRACTION", "TABLE_2_3", "SETTINGS",
           "writers_per_silo", "silo_data", "topology_paper_run", "run_paper", "paper_claims", "expected_seconds"]

CHAPTER = "01_topology"
DATASETS: tuple[str, ...] = ("femnist", "shakespeare")
NETWORK = "aws_na"
ACCESS_BPS = 1e8
"""Fig. 2.8's access links: 100 Mbps (the core links are 1 Gbps)."""
WRITERS_PER_SILO = (5.0, 1.5)
"""Mean and standard deviation of the log-normal number of natural clients per silo (§2.1.4.3)."""
TARGET_FRACTION = 0.95
"""The training target: this fraction of the STAR's final training accuracy (the notebook's rule)."""
TABLE_2_3 = {"femnist": {"mean": 6847, "stdev": 7473}, "shakespeare": {"mean": 36359, "stdev": 6837}}
"""Table 2.3: samples per silo on AWS NA."""
_NAMES = {"femnist": "FEMNIST", "shakespeare": "Shakespeare"}
_FIGURES = {"femnist": "Fig. 2.8 and Fig. C.2", "shakespeare": "Fig. 2.8 and Fig. C.1"}
_COMMON = ("AWS NA (22 silos), 1 Gbps core, 100 Mbps access, s = 1; each silo a log-normal number of LEAF users "
           "(mean 5, std 1.5), 20 % of LEAF's samples, 80/20 split; Adam with lr 0.001 decaying as 1/sqrt(round). Ours: "
           "TFF's users and their train/test split, every sample of a silo's users, plain SGD with a constant step "
           "(the engine has no Adam), one seed. ")

SETTINGS: dict[str, PaperSetting] = {
    "femnist": PaperSetting(
        "femnist", "femnist_cnn", 22, rounds=1000, local_steps=1, batch_size=128, lr=0.05, seeds=1,
        paper=_COMMON + "FEMNIST: a LeNet-like CNN (2 conv, max-pool, 2 FC), batch 128. Ours: the FEMNIST CNN of "
                        "[Red+21], SGD step 0.05 (as LEAF's CNN runs), 1000 rounds (the thesis does not state them)."),
    "shakespeare": PaperSetting(
        "shakespeare", "char_lstm", 22, rounds=1000, local_steps=1, batch_size=512, lr=0.8, seeds=1,
        paper=_COMMON + "Shakespeare: 200-character inputs, 16-d embedding, 2 stacked GRUs of 256 units, batch 512. "
                        "Ours: 80-character windows at every position (LEAF's task), the 2-layer LSTM (256) on 8-d "
                        "embeddings, SGD step 0.8 (LEAF's), 1000 rounds.",
        loader={"seq_len": 80, "stride": 1}),
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
                         backend="auto", device=device)
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


def _claims_for(name: str, result: dict | None) -> list[Claim]:
    src = f"{_FIGURES[name]} text, AWS NA, 100 Mbps, {_NAMES[name]}"
    why = "" if result is not None else f"needs the real data set (MODE='paper'): {fetch_command(name)}"
    if result is None:
        first = spread = samples = None
    else:
        target = TARGET_FRACTION * result["curves"]["star"]["train_accuracy"][-1]
        hits = {o: h["time_s"] for o, h in time_to_target(result, target).items() if h["time_s"] is not None}
        first = min(hits, key=hits.get) if hits else "none"
        final = {o: c["train_loss"][-1] for o, c in result["curves"].items()}
        spread = max(final.values()) / min(final.values()) - 1
        samples = np.asarray(result["silo_samples"], dtype=float)
    table = f"Table 2.3, {_NAMES[name]}"
    return [
        Claim(CHAPTER, src, "RING reaches the training target first in wall-clock time", "yes",
              None if result is None else f"first: {first}", "qualitative",
              holds=None if result is None else first == "ring",
              why=why or f"target {TARGET_FRACTION:.0%} of the STAR's final training accuracy"),
        Claim(CHAPTER, src, "loss against rounds almost insensitive to the overlay (final losses within 10 %)",
              "almost insensitive", None if result is None else f"spread {100 * spread:.1f} %", "qualitative",
              holds=None if result is None else bool(spread < 0.1), why=why),
        Claim(CHAPTER, table, "samples per silo on AWS NA, mean (± 25 %)", TABLE_2_3[name]["mean"],
              None if samples is None else float(samples.mean()), "tolerance", tolerance=0.25, relative=True,
              digits=0, why=why or "our silos hold every sample of their users (the paper: 20 % of LEAF's)"),
        Claim(CHAPTER, table, "samples per silo on AWS NA, standard deviation (± 25 %)", TABLE_2_3[name]["stdev"],
              None if samples is None else float(samples.std()), "tolerance", tolerance=0.25, relative=True,
              digits=0, why=why or "log-normal users per silo (mean 5, std 1.5), each with its own size"),
    ]


def paper_claims(results: Mapping | None) -> list[Claim]:
    """Fig. 2.8's statements and Table 2.3's silo sizes per data set; ``None`` gives them as not run."""
    if results is not None:
        check_type("results", results, Mapping)
    return [c for name in DATASETS for c in _claims_for(name, None if results is None else results.get(name))]


def expected_seconds(device=None, settings: Mapping | None = None) -> dict[str, float]:
    """Expected total run time (s) per setting on this machine: :func:`fedlab.paper.seconds_per_round` of DPASGD on
    the RING with :func:`fedlab.paper.stand_in_data` for the 22 silos (evaluated every round), times the rounds,
    the trained overlays and the seeds."""
    settings = SETTINGS if settings is None else check_type("settings", settings, Mapping)
    conn, out = _connectivity(), {}
    for name, setting in settings.items():
        setting = _check_setting(setting, f"settings[{name!r}]")
        params = preset_params(setting.dataset, access_bps=ACCESS_BPS)
        mixing = local_degree_weights(OVERLAYS["ring"](conn, params))
        algorithm = AveragedDPASGD(setting.build_model(), LocalSGD(setting.lr, batch_size=setting.batch_size), mixing)
        per_round = seconds_per_round(algorithm, stand_in_data(setting, n_clients=conn.n), device=device)
        out[name] = per_round * setting.rounds * len(TRAINED_OVERLAYS) * setting.seeds
    return out
