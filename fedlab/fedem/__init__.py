"""Notebook 03 (``notebooks/03_fedem.ipynb``): federated multi-task learning under a mixture of distributions
(thesis §3.4–3.5, FedEM). The algorithms FedEM and D-FedEM are core (:mod:`fedlab.algorithms.fedem`), since
notebook 04 compares against them too.

Entry points
------------
- ``data.make_synthetic_mixture`` / ``data.make_digits_mixture``: data sets with a mixture structure (Assumption 8);
- ``experiments.build_method`` and the experiment functions of the notebook (Tables 3.2, 3.3), among them
  ``sampling_rate_effect`` (Fig. 3.1, left) and ``clustered_tolerances`` (Clustered FL's split tolerance);
- ``plots.plot_gmm_em``, ``plots.plot_method_bars``, ``plots.plot_effect_of_m``, ``plots.plot_clustered_tolerance``.
"""
