"""Notebook 00 (``notebooks/00_primer.ipynb``): federated learning from scratch, client drift and heterogeneity.

Entry points
------------
- ``data.digits_federation``: the digits federation with Dirichlet(α) label splits; ``data.QuadraticClients``: the
  quadratic clients of the client-drift picture;
- ``algorithms.QuadraticFedAvg`` (run by ``fedlab.engine.run``; ``algorithms.drift_paths`` reads the paths),
  registered as ``METHODS["primer:quadratic_fedavg"]`` (``algorithms.PRESETS``), and
  ``algorithms.fedavg_fixed_point``: where it converges with E local steps, in closed form; the digits runs use the
  core methods ``METHODS["fedavg"]``, ``["local"]`` and ``["centralized"]``;
- ``experiments.train_on_digits`` (curves and final metrics), ``experiments.rounds_to_reach`` and the per-seed values
  of a sweep (``experiments.seed_values``, ``seed_curves``, ``seed_rounds_to_reach``);
- ``plots.plot_sweep_curves``: the sweep's learning curves, one panel per α;
- ``published.STATEMENTS``: the introduction's statements and their sources; ``claims.chapter_claims``: the
  chapter's claims from its results.
- ``exercises.EXERCISES``: the notebook's numbered exercises, each checking the reader's answer with a hint
  (:mod:`fedlab.exercises`).
"""
