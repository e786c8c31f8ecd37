r"""The primer's claims: the statements of the thesis's introduction (and the papers it cites) judged on the notebook's
runs, from a mapping of results to a list of :class:`~fedlab.claims.Claim`.

Kinds. The introduction reports no measurements of its own: its statements are directions. Those about training
behaviour (more local steps save rounds, heterogeneity slows convergence and hurts the worst clients, local models win
on skewed clients and lose on iid ones) are re-run on the digits federation and are *experiments*; the
client-drift growth of the fixed point with E, recomputed in closed form, is *analytic*; the engine against the
plain-PyTorch FedAvg, the label skew of our Dirichlet splits, the E = 1 fixed point and FedAvg against centralised
training with iid clients check our own code and are *consistency* claims.

Scale. The engine check, the label skew and the quadratic-client claims compute the same numbers in every mode and
carry the scale ``"full"`` (:data:`EXACT`); the sweep's claims carry the notebook's mode.

Statistics. Comparisons between runs are judged over the sweep's seeds, paired by seed (same split, same
sampling): the 95 % Student-t interval of the per-seed gaps must lie inside the band, e.g. above zero for "A beats
B"; an interval across the band's edge is *inconclusive* (the table says how many seeds would decide).

>>> claims = chapter_claims(example_results(), scale="smoke")
>>> len(claims), sorted({c.verdict for c in claims})
(12, ['consistent', 'reproduced'])
"""
from __future__ import annotations

from typing import Mapping, Sequence

from fedlab._validation import check_bool, check_int, check_type
from fedlab.claims import Claim, ClaimBuilder
from fedlab.primer.published import STATEMENTS

__all__ = ["CHAPTER", "RESULT_KEYS", "chapter_claims", "example_results"]

CHAPTER = "00_primer"
RESULT_KEYS = ("engine_gap", "engine_rounds", "label_skew", "drift", "rounds", "target", "rounds_to_target",
               "final_accuracy", "bottom_decile")
"""The keys :func:`chapter_claims` needs (see its docstring)."""
ALPHAS, STEPS, E = (100.0, 1.0, 0.1), (1, 5, 20), 5
IID, SKEWED = 100.0, 0.1
EXACT = "full"
"""The scale of the claims whose numbers are the same in every mode (the engine check, the splits, the quadratic
clients): a disagreement there is not a smoke-scale one."""
CENTRALIZED_TOLERANCE = 1.0
"""FedAvg matches centralised training when their seed-paired accuracy gap lies within ± 1 pp."""


def chapter_claims(results: Mapping, *, scale: str) -> list[Claim]:
    """The primer's claims from its results.

    ``results`` holds:

    - ``engine_gap``: max |engine − plain-PyTorch FedAvg| over the parameters after ``engine_rounds`` rounds;
    - ``label_skew``: ``{α: label skew}`` for α in (100, 1, 0.1);
    - ``drift``: ``{E: ‖fixed point − w*‖}`` on the quadratic clients, for E in (1, 5, 20);
    - ``rounds``: the sweep's horizon T; ``target``: the accuracy of "rounds to target" (0.85);
    - ``rounds_to_target``: ``{("fedavg", α, E): [rounds per seed]}`` (``inf`` when never reached);
    - ``final_accuracy``, ``bottom_decile``: ``{(method, α, E): [value per seed]}`` for FedAvg at every (α, E)
      and Local and Centralized at E = 5 (:func:`fedlab.primer.experiments.seed_values`), same seeds throughout.
    """
    r = _check_results(results)
    exact, c = ClaimBuilder(CHAPTER, EXACT), ClaimBuilder(CHAPTER, scale)
    _engine_and_splits(exact, r)
    _local_steps(c, r)
    _heterogeneity(c, r)
    _local_vs_fedavg(c, r)
    _drift(exact, r)
    return exact.claims[:2] + c.claims + exact.claims[2:]


def _check_results(results) -> dict:
    """``results`` with every key and sub-key :func:`chapter_claims` reads, else an error naming the missing one."""
    check_type("results", results, Mapping)
    missing = [k for k in RESULT_KEYS if k not in results]
    if missing:
        raise ValueError(f"results lacks the keys {missing} (chapter_claims needs {list(RESULT_KEYS)}).")
    needed = {"label_skew": ALPHAS, "drift": STEPS,
              "rounds_to_target": [("fedavg", a, e) for a in ALPHAS for e in STEPS],
              "final_accuracy": [("fedavg", a, e) for a in ALPHAS for e in STEPS]
              + [(m, a, E) for m in ("local", "centralized") for a in ALPHAS],
              "bottom_decile": [("fedavg", a, E) for a in ALPHAS]}
    for key, subkeys in needed.items():
        check_type(f"results[{key!r}]", results[key], Mapping)
        absent = [s for s in subkeys if s not in results[key]]
        if absent:
            raise ValueError(f"results[{key!r}] lacks the entries {absent}.")
    n_seeds = {len(v) for key in ("rounds_to_target", "final_accuracy", "bottom_decile") for v in results[key].values()}
    if len(n_seeds) != 1 or 0 in n_seeds:
        raise ValueError(f"results must hold one value per seed, the same seeds in every run, got lengths "
                         f"{sorted(n_seeds)}.")
    return dict(results)


def _gaps(a: Sequence[float], b: Sequence[float], scale: float = 100.0) -> tuple[float, ...]:
    """Per-seed ``a − b`` (times ``scale``: pp for accuracies)."""
    return tuple(scale * (x - y) for x, y in zip(a, b))


def _pm(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.3f}" for v in values)


def _engine_and_splits(c: ClaimBuilder, r: dict) -> None:
    c.consistency(STATEMENTS["fedavg"][0], f"engine − plain-PyTorch FedAvg after {r['engine_rounds']} rounds, "
                  "max |Δw|", 0.0, float(r["engine_gap"]), "tolerance", tolerance=1e-6, digits=7,
                  why="the same minibatches (the engine's sampler) in both; the batched kernels sum in another order, "
                      "so float32 rounding (1e-6) is the tolerance")
    skews = [float(r["label_skew"][a]) for a in ALPHAS]
    c.consistency("notebook section 3 (Dirichlet label splits)", "label skew grows as α decreases", "grows",
                  " → ".join(f"{s:.2f} (α = {a:g})" for s, a in zip(skews, ALPHAS)), "qualitative",
                  holds=skews[0] < skews[1] < skews[2],
                  why="one split per α (the notebook's seed); label skew: mean total-variation distance between a "
                      "client's label distribution and the pooled one")


def _rounds_needed(r: dict, alpha: float, e: int) -> list[float]:
    """Per seed, FedAvg's rounds to the target at (α, E); never reached counts as T + 1 (a lower bound)."""
    return [min(float(v), r["rounds"] + 1.0) for v in r["rounds_to_target"][("fedavg", alpha, e)]]


def _local_steps(c: ClaimBuilder, r: dict) -> None:
    horizon, target = int(r["rounds"]), float(r["target"])
    for a in ALPHAS:
        need = {e: _rounds_needed(r, a, e) for e in STEPS}
        c.experiment(STATEMENTS["local_steps"][0], f"rounds to {100 * target:g} % accuracy: E = 1 minus E = 20 "
                     f"(α = {a:g})", (1.0, None), None, "tolerance", tolerance=0.0, digits=1,
                     seeds=_gaps(need[1], need[20], 1.0),
                     why=f"the paper states the direction only: 'fewer rounds' is a saving of at least one round; "
                         f"per seed, the first round at which FedAvg's test accuracy reaches {target:g} (E = 1 / 5 / "
                         f"20: {_rounds(need, 1)} / {_rounds(need, 5)} / {_rounds(need, 20)}); a run that never "
                         f"reaches it within T = {horizon} rounds counts as {horizon + 1} (a lower bound on the "
                         f"saving); softmax regression on digits, participation 0.5")


def _rounds(need: dict, e: int) -> str:
    return ", ".join(f"{v:g}" for v in need[e])


def _heterogeneity(c: ClaimBuilder, r: dict) -> None:
    source, horizon, target = STATEMENTS["heterogeneity"][0], int(r["rounds"]), float(r["target"])
    need = {a: _rounds_needed(r, a, E) for a in (IID, SKEWED)}
    final = {a: r["final_accuracy"][("fedavg", a, E)] for a in (IID, SKEWED)}
    c.experiment(source, f"FedAvg rounds to {100 * target:g} % accuracy: α = 0.1 minus α = 100, E = {E}", (1.0, None),
                 None, "tolerance", tolerance=0.0, digits=1, seeds=_gaps(need[SKEWED], need[IID], 1.0),
                 why=f"the thesis states the direction only ('slows convergence down'): a delay of at least one "
                     f"round, per seed ({_rounds(need, SKEWED)} against {_rounds(need, IID)}; never reached counts "
                     f"as T + 1 = {horizon + 1}); the final accuracy after T = {horizon} rounds, α = 100 minus "
                     f"α = 0.1, is {_mean(_gaps(final[IID], final[SKEWED])):+.1f} pp: the gap closes as training "
                     "converges")
    iid, skewed = r["bottom_decile"][("fedavg", IID, E)], r["bottom_decile"][("fedavg", SKEWED, E)]
    c.experiment(source, f"FedAvg bottom-decile client accuracy: α = 100 minus α = 0.1, E = {E} (pp)", (0.0, None),
                 None, "tolerance", tolerance=0.0, digits=1, seeds=_gaps(iid, skewed),
                 why=f"the thesis states the direction only ('unfair models, unsuited for minorities'): any gap "
                     f"above 0 at the end of the T = {horizon} rounds; α = 100: {_pm(iid)}, α = 0.1: {_pm(skewed)} "
                     "per seed")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _local_vs_fedavg(c: ClaimBuilder, r: dict) -> None:
    acc, source = r["final_accuracy"], STATEMENTS["local_vs_global"][0]
    for alpha, first, second, text in (
            (SKEWED, "local", "fedavg", "Local − FedAvg on clients that see few classes"),
            (IID, "fedavg", "local", "FedAvg − Local on iid clients")):
        a, b = acc[(first, alpha, E)], acc[(second, alpha, E)]
        c.experiment(source, f"{text}, α = {alpha:g} (pp)", (0.0, None), None, "tolerance", tolerance=0.0, digits=1,
                     seeds=_gaps(a, b),
                     why=f"the propositions are bounds; their consequence is a direction, any gap above 0: "
                         f"{first} {_pm(a)}, {second} {_pm(b)} per seed, E = {E}, after T = {r['rounds']} rounds")
    fedavg, central = acc[("fedavg", IID, E)], acc[("centralized", IID, E)]
    c.consistency("[McM+17] (iid clients)", "FedAvg − Centralized with iid clients, α = 100 (pp)", 0.0, None,
                  "tolerance", tolerance=CENTRALIZED_TOLERANCE, digits=1, seeds=_gaps(fedavg, central),
                  why=f"our FedAvg (E = {E}, participation 0.5) against our SGD on the pooled data with the same "
                      f"number of steps; 'matches' is our band of ± {CENTRALIZED_TOLERANCE:g} pp; "
                      f"FedAvg {_pm(fedavg)}, Centralized {_pm(central)} per seed")


def _drift(c: ClaimBuilder, r: dict) -> None:
    drift = {e: float(r["drift"][e]) for e in STEPS}
    c.consistency(STATEMENTS["sgd_limit"][0], "‖fixed point − w*‖ of FedAvg with E = 1 (two quadratic clients)", 0.0,
                  drift[1], "tolerance", tolerance=1e-9, digits=3,
                  why="closed form of the fixed point (fedlab.primer.algorithms.fedavg_fixed_point); with E = 1 FedAvg "
                      "is gradient descent on (1.1), whose fixed point is w*; 1e-9 is the linear solve's rounding")
    c.analytic(STATEMENTS["client_drift"][0], "the fixed point moves away from w* as E grows (two quadratic clients)",
               "grows with E", " → ".join(f"{drift[e]:.3f} (E = {e})" for e in STEPS), "qualitative",
               holds=drift[1] < drift[5] < drift[20],
               why="closed form of FedAvg's fixed point with exact local gradients at the drift figure's step size; "
                   "the notebook's runs of QuadraticFedAvg converge to it")


def example_results(*, holds: bool = True, n_seeds: int = 3) -> dict:
    """A hand-made results mapping under which every statement of the primer holds (``holds=False``: fails).

    Used by the doctest and the tests; it shows the shape :func:`chapter_claims` expects.
    """
    holds, n_seeds = check_bool("holds", holds), check_int("n_seeds", n_seeds, low=2)
    seeds = range(n_seeds)
    fedavg = {a: (0.85 if a == SKEWED else 0.90) if holds else (0.95 if a == SKEWED else 0.90) for a in ALPHAS}
    local = {a: (0.95 if a == SKEWED else 0.85) if holds else (0.80 if a == SKEWED else 0.95) for a in ALPHAS}
    central = {a: 0.90 if holds else 0.95 for a in ALPHAS}
    accuracy = {(m, a, e): [value[a] + 0.001 * i for i in seeds]
                for m, value, steps in (("fedavg", fedavg, STEPS), ("local", local, (E,)),
                                        ("centralized", central, (E,)))
                for a in ALPHAS for e in steps}
    slower = {a: (2.0 if a == SKEWED else 1.0) if holds else (0.5 if a == SKEWED else 1.0) for a in ALPHAS}
    rounds = {("fedavg", a, e): [(30.0 / e if holds else 5.0 * e) * slower[a] + i for i in seeds]
              for a in ALPHAS for e in STEPS}
    return {"engine_gap": 1e-8 if holds else 1e-3, "engine_rounds": 10,
            "label_skew": {100.0: 0.1, 1.0: 0.4, 0.1: 0.7} if holds else {100.0: 0.7, 1.0: 0.4, 0.1: 0.1},
            "drift": {1: 0.0, 5: 0.1, 20: 0.3} if holds else {1: 0.2, 5: 0.1, 20: 0.05},
            "rounds": 40, "target": 0.85, "rounds_to_target": rounds,
            "final_accuracy": accuracy, "bottom_decile": {k: [v - 0.05 for v in vs] for k, vs in accuracy.items()}}

