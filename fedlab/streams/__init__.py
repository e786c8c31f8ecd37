"""Notebook 05 (``notebooks/05_data_streams.ipynb``): FL on data streams with client memories (thesis §4.3;
Marfoq et al., AISTATS 2023).

Entry points
------------
- ``data``: arrivals and bounded memories (``make_stream_dataset``, ``Memory``), the case study of historical and
  fresh clients (``make_case_study``) and its synthetic version (``synthetic_case_study``);
- ``algorithms``: ``StreamingFedAvg`` (Algorithm 13) and ``StreamingScaffold`` (its SCAFFOLD variant), the client
  weightings (``strategy_weights``) and the chapter's ``PRESETS`` (registered in ``fedlab.algorithms.METHODS``);
- ``bounds``: ``psi`` (Corollary 4.3.5), ``optimal_weights`` (its minimiser), the estimator (G.839)
  ``estimate_ratio`` and ``table_4_1_check``;
- ``experiments``: ``compare_strategies`` (historical, fresh, uniform and optimal weighting, with FedAvg, FedProx or
  SCAFFOLD) and ``bayes_accuracy_draws`` (the synthetic generator's ceiling);
- ``real_data``: paper mode, Tables 4.3-4.5 on CIFAR-10/100, FEMNIST and Shakespeare (``run_paper``);
- ``claims``: ``chapter_claims`` and ``paper_claims``, the paper's statements with their verdicts;
- ``published``: the paper's numbers (Tables 4.1, 4.3-4.5, Fig. 4.4, §4.3.4.7); ``plots``: the figures.
- ``exercises.EXERCISES``: the notebook's checked exercises 5.1-5.5 (:mod:`fedlab.exercises`).
"""
