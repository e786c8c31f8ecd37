"""Notebook 02 (``notebooks/02_availability.ipynb``): FL under heterogeneous and correlated client availability
(thesis §2.2; Rodio, Faticanti, Marfoq, Neglia, Leonardi, CA-Fed).

Entry points
------------
- ``data.MarkovAvailability`` / ``data.make_population``: clients as two-state Markov chains, traces and estimators;
  ``data.leaf_federation`` / ``data.digits_federation`` (``data.AVAILABILITY_DATASETS``) and
  ``data.spatial_population``: the chapter's data sets and Fig. 2.15's clustered population;
- ``bounds.eps_bias``, ``bounds.total_error_bound``: ε̄_opt/ε̄_bias and the objective (2.22)–(2.28);
- ``algorithms.CAFed`` (Algorithm 6) and the baselines ``Unbiased``, ``MoreAvailable``, ``LessCorrelated``,
  ``AdaFed``, ``F3AST``, registered as ``METHODS["availability:<name>"]`` (``algorithms.PRESETS``);
- ``experiments.run_availability``: one method on one data set and availability trace (optionally with the authors'
  momentum optimisers, ``AUTHORS_OPTIMIZER``, or Fig. 2.15's spatially correlated clusters, ``layout="spatial"``);
- ``experiments.step_size_configs`` / ``tune_step_sizes``: the per-method step-size search of Table 4 (the deciding
  experiment), ``plots.plot_step_size_grid`` its figure; ``experiments.curves_by`` for Figs. 2.13-2.14b;
- ``claims.chapter_claims`` / ``claims.paper_claims``: the paper's statements against the notebook's results, with
  the paper's numbers in ``published``; ``real_data``: paper mode (MNIST, CIFAR-10).
- ``exercises.EXERCISES``: the notebook's numbered exercises, each checking the reader's answer with a hint
  (:mod:`fedlab.exercises`).
"""
