r"""The thesis' own numbers for the kNN-Per chapter (thesis §3.6.3, Tables 3.5 and 3.6 and the text around Figs.
3.2–3.13), copied from the thesis (personalization spec §8.5, "[P]" facts). Test accuracies in %.

:func:`smallest_gain` reads the tables as the claims of notebook 04 use them: the smallest gain of kNN-Per over a
baseline across the thesis' data sets.

>>> smallest_gain("3.5", "FedAvg", column=0)
(3.3, 'Shakespeare')
"""
from __future__ import annotations

from fedlab._validation import check_choice, check_int

__all__ = ["PAPER_METHODS", "PAPER_TABLE_3_5", "PAPER_TABLE_3_6", "PAPER_LOCAL_GAPS", "PAPER_K_RANGE",
           "PAPER_SIGMA_RANGE", "PAPER_INSENSITIVITY_PP", "smallest_gain"]

PAPER_METHODS = ("Local", "FedAvg", "FedAvg+", "ClusteredFL", "Ditto", "FedRep", "APFL", "pFedGP", "kNN-Per")
"""The columns of Table 3.5 (Table 3.6 has no Local column)."""

PAPER_TABLE_3_5 = {  # test accuracy (%): (average, bottom decile); None = not run
    "FEMNIST": [(71.0, 57.5), (83.4, 68.9), (84.3, 69.4), (83.7, 69.4), (84.3, 71.3), (85.3, 72.7), (84.1, 69.4),
                None, (88.2, 78.8)],
    "CIFAR-10": [(57.6, 41.1), (72.8, 59.6), (75.2, 62.3), (73.3, 61.5), (80.0, 66.5), (77.7, 65.2), (78.9, 68.1),
                 None, (83.0, 71.4)],
    "CIFAR-10 (v2)": [(82.4, 71.3), (67.9, 60.1), (85.0, 79.6), (79.9, 72.3), (86.3, 80.6), (89.1, 85.3),
                      (82.6, 76.4), (88.9, 84.1), (93.8, 88.2)],
    "CIFAR-100": [(31.5, 19.8), (47.4, 36.0), (51.4, 41.1), (47.2, 36.2), (52.0, 41.4), (53.2, 41.7), (51.7, 41.1),
                  None, (55.0, 43.6)],
    "CIFAR-100 (v2)": [(45.7, 38.2), (42.3, 34.8), (48.1, 41.9), (43.5, 37.2), (48.7, 40.3), (70.1, 65.2),
                       (48.3, 42.1), (61.1, 50.0), (74.6, 67.3)],
    "Shakespeare": [(32.0, 16.0), (48.1, 43.1), (47.0, 42.2), (46.7, 41.4), (47.9, 42.6), (47.2, 42.3), (45.9, 42.4),
                    None, (51.4, 45.4)],
}
"""Thesis Table 3.5, columns :data:`PAPER_METHODS`: test accuracy, average across clients / bottom decile (%). The
text: kNN-Per is the most accurate method on every data set, on average and in the bottom decile."""

PAPER_TABLE_3_6 = {  # unseen clients: (test, train) accuracy (%), columns PAPER_METHODS[1:] (no Local)
    "FEMNIST": [(83.1, 83.3), (84.2, 88.5), (83.2, 86.0), (83.9, 86.9), (85.4, 88.9), (84.2, 85.5), None, (88.1, 90.5)],
    "CIFAR-10": [(72.9, 72.8), (75.3, 78.2), (73.9, 76.2), (79.7, 84.3), (76.4, 79.5), (79.2, 80.6), None,
                 (82.4, 87.1)],
    "CIFAR-10 (v2)": [(67.5, 68.1), (85.1, 85.0), (79.6, 79.9), (85.9, 86.0), (89.0, 89.1), (82.3, 82.5),
                      (89.0, 88.8), (93.0, 93.1)],
    "CIFAR-100": [(47.1, 47.5), (50.8, 53.4), (47.1, 48.2), (52.1, 57.3), (53.5, 58.2), (49.1, 52.7), None,
                  (56.1, 59.3)],
    "CIFAR-100 (v2)": [(42.1, 42.2), (47.9, 48.1), (43.2, 43.4), (48.8, 48.5), (69.8, 70.0), (48.2, 48.4),
                       (61.3, 61.0), (74.3, 74.5)],
    "Shakespeare": [(49.0, 48.3), (49.3, 48.1), (49.4, 46.7), (48.1, 49.2), (48.7, 47.8), (46.1, 52.7), None,
                    (50.7, 64.2)],
}
"""Thesis Table 3.6 (80 % of the clients train, 20 % join later), columns ``PAPER_METHODS[1:]``: test (train)
accuracy (%) of the clients unseen at training."""

PAPER_LOCAL_GAPS = {"kNN-Per": 25.0, "Ditto": 22.0}
"""§3.6.3, after Table 3.5: on CIFAR-10, Local is 25 pp below kNN-Per and 22 pp below Ditto (average accuracy)."""

PAPER_K_RANGE = (7, 14)
"""§3.6.3, "Hyperparameters" (Fig. 3.6): any k between 7 and 14 on CIFAR-10 (5 and 12 on CIFAR-100) ..."""
PAPER_INSENSITIVITY_PP = 0.2
"""... gives less than 0.2 percentage points of accuracy variation (Fig. 3.6)."""
PAPER_SIGMA_RANGE = (0.1, 100.0)
"""§3.6.3 (Fig. 3.8): scaling the distance by σ has "almost no effect" for σ between 0.1 and 100 on CIFAR-10 (1 and
100 on CIFAR-100; the figure's caption paragraph says 0.1 to 1000)."""


def smallest_gain(table: str, base: str, column: int = 0) -> tuple[float, str]:
    """``(gain, row)``: the smallest kNN-Per − ``base`` (pp, rounded to 0.1) over the rows of Table ``table``
    (``"3.5"``: :data:`PAPER_TABLE_3_5`; ``"3.6"``: :data:`PAPER_TABLE_3_6`, no Local column) where ``base`` was run,
    and the row it is in; ``column`` 0 is the average (test) accuracy, 1 the bottom decile (train accuracy)."""
    rows, methods = {"3.5": (PAPER_TABLE_3_5, PAPER_METHODS),
                     "3.6": (PAPER_TABLE_3_6, PAPER_METHODS[1:])}[check_choice("table", table, ("3.5", "3.6"))]
    check_int("column", column, low=0, high=1)
    i, j = methods.index("kNN-Per"), methods.index(check_choice("base", base, methods[:-1]))
    gaps = {name: row[i][column] - row[j][column] for name, row in rows.items() if row[j] is not None}
    row = min(gaps, key=gaps.get)
    return round(gaps[row], 1), row
