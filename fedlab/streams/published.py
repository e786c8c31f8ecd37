r"""The paper's own numbers for the data-streams chapter (thesis §4.3.4 and appendix G; Marfoq et al., AISTATS 2023).

Every table here is copied from the thesis (the AISTATS paper's table number in brackets); nothing is computed.
:mod:`fedlab.streams.claims` compares them with our measurements, :func:`fedlab.streams.bounds.table_4_1_check`
recomputes the ratios from Table 4.1.

Examples
--------
>>> PAPER_ACCURACY[0.2]["CIFAR-10"]["ours"], PAPER_SPREAD[0.2]["CIFAR-10"]["ours"]
(66.9, 0.81)
>>> SYNTHETIC_SPLIT
{'clients': 11, 'm_hist': 10, 'n_total': 200}
"""
from __future__ import annotations

__all__ = ["TABLE_METHODS", "TABLES", "PAPER_ACCURACY", "PAPER_SPREAD", "TABLE_4_1", "REPORTED_RATIOS",
           "REPORTED_P_HIST", "FIG_4_4_GAPS", "FIG_4_4_SPREAD", "OPTIMIZER_ACCURACY", "SYNTHETIC_SPLIT"]

TABLE_METHODS: tuple[str, ...] = ("fresh", "historical", "uniform", "ours", "optimal")
r"""The columns of Tables 4.3-4.5, in the paper's order (*Optimal*: the best point of the grid
:math:`p_{hist}\in\{0, 0.2, 0.5, 0.8, 1\}`)."""

TABLES: dict[float, str] = {0.05: "Table 4.4", 0.2: "Table 4.3", 0.5: "Table 4.5"}
"""The thesis's table for each historical fraction :math:`N_{hist}/N` (paper Tables 4, 2 and 5)."""

#: Published test accuracies (%), Tables 4.3-4.5 (paper Tables 2, 4, 5): ``PAPER_ACCURACY[h][dataset][method]``,
#: the means over three seeds (their 95 % bounds are :data:`PAPER_SPREAD`).
PAPER_ACCURACY = {
    0.05: {
        "Synthetic": {"fresh": 82.4, "historical": 68.1, "uniform": 82.7, "ours": 82.7, "optimal": 82.9},
        "CIFAR-10": {"fresh": 59.5, "historical": 48.2, "uniform": 60.7, "ours": 61.0, "optimal": 63.7},
        "CIFAR-100": {"fresh": 23.5, "historical": 13.5, "uniform": 24.4, "ours": 25.2, "optimal": 27.8},
        "FEMNIST": {"fresh": 55.2, "historical": 65.7, "uniform": 58.4, "ours": 65.7, "optimal": 65.7},
        "Shakespeare": {"fresh": 40.2, "historical": 49.0, "uniform": 41.0, "ours": 49.0, "optimal": 49.0},
    },
    0.2: {
        "Synthetic": {"fresh": 84.7, "historical": 77.3, "uniform": 85.5, "ours": 85.5, "optimal": 85.5},
        "CIFAR-10": {"fresh": 59.6, "historical": 59.8, "uniform": 61.5, "ours": 66.9, "optimal": 67.7},
        "CIFAR-100": {"fresh": 22.4, "historical": 22.6, "uniform": 25.3, "ours": 28.5, "optimal": 31.5},
        "FEMNIST": {"fresh": 53.3, "historical": 66.1, "uniform": 55.4, "ours": 66.1, "optimal": 66.1},
        "Shakespeare": {"fresh": 38.4, "historical": 49.0, "uniform": 39.3, "ours": 49.0, "optimal": 49.0},
    },
    0.5: {
        "Synthetic": {"fresh": 84.2, "historical": 84.8, "uniform": 86.5, "ours": 86.5, "optimal": 86.5},
        "CIFAR-10": {"fresh": 52.1, "historical": 64.1, "uniform": 65.1, "ours": 68.7, "optimal": 69.4},
        "CIFAR-100": {"fresh": 17.5, "historical": 29.4, "uniform": 29.7, "ours": 34.4, "optimal": 34.4},
        "FEMNIST": {"fresh": 48.3, "historical": 66.2, "uniform": 57.8, "ours": 66.2, "optimal": 66.2},
        "Shakespeare": {"fresh": 30.9, "historical": 44.1, "uniform": 41.1, "ours": 44.1, "optimal": 44.1},
    },
}


def _spread(values: tuple) -> dict[str, float]:
    return dict(zip(TABLE_METHODS, values))


#: The 95 % confidence bounds (three seeds) of :data:`PAPER_ACCURACY`, Tables 4.3-4.5, same keys.
PAPER_SPREAD = {
    0.05: {"Synthetic": _spread((1.89, 2.39, 1.94, 1.90, 2.17)), "CIFAR-10": _spread((0.77, 0.21, 0.58, 0.42, 0.57)),
           "CIFAR-100": _spread((0.65, 0.41, 0.54, 0.66, 0.39)), "FEMNIST": _spread((1.79, 0.09, 1.80, 0.09, 0.09)),
           "Shakespeare": _spread((0.34, 0.06, 1.33, 0.06, 0.06))},
    0.2: {"Synthetic": _spread((1.44, 3.15, 1.60, 1.60, 1.60)), "CIFAR-10": _spread((0.94, 2.16, 0.63, 0.81, 0.91)),
          "CIFAR-100": _spread((0.57, 0.50, 0.43, 0.57, 0.25)), "FEMNIST": _spread((1.85, 0.20, 0.80, 0.20, 0.80)),
          "Shakespeare": _spread((0.43, 0.26, 0.38, 0.26, 0.26))},
    0.5: {"Synthetic": _spread((1.27, 1.58, 1.20, 1.20, 1.20)), "CIFAR-10": _spread((2.98, 5.60, 0.66, 0.37, 0.25)),
          "CIFAR-100": _spread((0.57, 1.40, 0.55, 0.31, 0.31)), "FEMNIST": _spread((2.98, 0.23, 1.93, 0.23, 0.23)),
          "Shakespeare": _spread((0.51, 0.27, 0.56, 0.27, 0.27))},
}

#: Table 4.1 (paper Table 3): the constants D, G, B and d behind the reported ratios, with N (Table 4.2) and M.
#: ``m_fresh`` maps the historical fraction (5/20/50 %) to M - M_hist: 25 of 50 CIFAR clients, one of the 11
#: Synthetic clients (paper §6: M_hist = 10), and for FEMNIST/Shakespeare the clients left by M_hist/M = h.
TABLE_4_1 = {
    "Synthetic": {"D": 1.9, "G": 0.4, "B": 0.7, "d": 21, "N": 200, "M": 11, "m_fresh": {0.05: 1, 0.2: 1, 0.5: 1}},
    "CIFAR-10": {"D": 1.0, "G": 5.5, "B": 2.3, "d": 3_353_034, "N": 50_000, "M": 50,
                 "m_fresh": {0.05: 25, 0.2: 25, 0.5: 25}},
    "CIFAR-100": {"D": 1.0, "G": 4.7, "B": 4.6, "d": 3_537_444, "N": 50_000, "M": 50,
                  "m_fresh": {0.05: 25, 0.2: 25, 0.5: 25}},
    "FEMNIST": {"D": 5.9, "G": 12.9, "B": 3.5, "d": 867_390, "N": 817_851, "M": 3597,
                "m_fresh": {0.05: 3417, 0.2: 2878, 0.5: 1799}},
    "Shakespeare": {"D": 2.6, "G": 1.4, "B": 6.1, "d": 226_180, "N": 3_436_096, "M": 916,
                    "m_fresh": {0.05: 870, 0.2: 733, 0.5: 458}},
}

#: Reported :math:`\hat c_2/\hat c_1` (Tables 4.3-4.5, first column) by data set and historical fraction.
REPORTED_RATIOS = {
    "Synthetic": {0.05: 0.094, 0.2: 0.092, 0.5: 0.085},
    "CIFAR-10": {0.05: 0.150, 0.2: 0.150, 0.5: 0.150},
    "CIFAR-100": {0.05: 0.284, 0.2: 0.284, 0.5: 0.284},
    "FEMNIST": {0.05: 0.001, 0.2: 0.001, 0.5: 0.001},
    "Shakespeare": {0.05: 0.064, 0.2: 0.064, 0.5: 0.095},
}

#: Reported :math:`\hat p^*_{hist}` (Tables 4.3-4.5, second column).
REPORTED_P_HIST = {
    "Synthetic": {0.05: 0.06, 0.2: 0.20, 0.5: 0.50},
    "CIFAR-10": {0.05: 0.12, 0.2: 0.45, 0.5: 0.95},
    "CIFAR-100": {0.05: 0.08, 0.2: 0.32, 0.5: 0.69},
    "FEMNIST": {0.05: 1.00, 0.2: 1.00, 0.5: 1.00},
    "Shakespeare": {0.05: 1.00, 0.2: 1.00, 0.5: 1.00},
}

#: CIFAR-10 gaps (pp) that §4.3.4.6 reads from Fig. 4.4 at :math:`N_{hist}/N` = 5, 20 and 50 %: Optimal − Historical
#: and Optimal − Uniform (they equal the differences of Tables 4.3-4.5).
FIG_4_4_GAPS = {"historical": (15.5, 7.9, 5.3), "uniform": (3.0, 6.2, 4.3)}

#: The ± spreads the text gives with :data:`FIG_4_4_GAPS`.
FIG_4_4_SPREAD = {"historical": (0.30, 1.17, 2.8), "uniform": (0.57, 0.55, 0.35)}

#: §4.3.4.7: CIFAR-10 test accuracy (%) at :math:`N_{hist}/N = 20\,\%` when Algorithm 13 runs FedProx (μ = 0.1) or
#: SCAFFOLD instead of FedAvg (the text gives no spread and no Optimal).
OPTIMIZER_ACCURACY = {
    "fedprox": {"fresh": 59.6, "historical": 59.8, "uniform": 61.6, "ours": 67.1},
    "scaffold": {"fresh": 60.1, "historical": 59.8, "uniform": 62.6, "ours": 67.4},
}

SYNTHETIC_SPLIT = {"clients": 11, "m_hist": 10, "n_total": 200}
"""The synthetic data set of the tables: 11 clients and 200 samples (Table 4.2), :math:`M_{hist} = 10` historical
clients (paper §6, *Arrival process*), so one fresh client."""
