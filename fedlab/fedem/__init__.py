"""Notebook 03 (``notebooks/03_fedem.ipynb``): federated multi-task learning under a mixture of distributions
(thesis §3.4–3.5, FedEM). The algorithms FedEM and D-FedEM are core (:mod:`fedlab.algorithms.fedem`), since
notebook 04 compares against them too.

Entry points
------------
- ``data``: data sets with a mixture structure (Assumption 8), ``make_synthetic_mixture`` /
  ``make_digits_mixture``, and the notebook's configurations by name (``make_dataset``);
- ``algorithms.PRESETS``: the chapter's methods with their Table 3.2 defaults (registered in
  :data:`fedlab.algorithms.METHODS`);
- ``experiments``: ``build_method`` and the experiment functions of the notebook (Tables 3.2, 3.3, 5), among them
  ``sampling_rate_effect`` (Fig. 3.1, left) and ``clustered_tolerances`` (Clustered FL's split tolerance);
- ``claims.chapter_claims`` / ``claims.paper_claims``: the notebook's claims from its results;
- ``published``: the thesis' tables (3.2, 3.3, 5, 6, 7) and App. E.11's entropies;
- ``real_data``: paper mode (the real data sets of §3.5.6);
- ``bounds``: when Theorems 3.5.3–3.5.4 apply (their step-size conditions, Assumption 15's ``p`` of a mixing
  matrix);
- ``plots.plot_gmm_em``, ``plots.plot_effect_of_m``, ``plots.plot_simplex``, ``plots.plot_clustered_tolerance``.
- ``exercises.EXERCISES``: the notebook's numbered exercises, each checking the reader's answer with a hint
  (:mod:`fedlab.exercises`).
"""
