"""Notebook 07 (``notebooks/07_sfedpo.ipynb``): streaming FL with a prediction oracle under temporal shifts
(SFedPO: data-driven sampling and shift-aware aggregation).

Entry points
------------
- ``data.make_temporal_shift``: latent-state Markov streams, buffers and prediction oracles;
- ``bounds.sfedpo_theorem1_bound`` / ``bounds.sfedpo_B``: Theorem 1 (6) and the term (15);
- ``strategies.sampling_ratios`` / ``strategies.aggregation_weights`` (DDS, SAW) and ``strategies.theorem2_gap``;
- ``algorithms.SFedPO`` and ``algorithms.PRESETS`` (SFedPO and the baselines of Table 2, registered in
  ``fedlab.algorithms.METHODS``);
- ``experiments.compare_methods``: the simulation of §B.8 at CPU scale (softmax regression or an MLP,
  ``experiments.make_model``); ``experiments.bound_explorer`` / ``experiments.explorer_draws``: Theorem 1 by strategy;
- ``experiments.ablation_configs`` / ``experiments.ablation_gains``: the ablations of the paper's Figs. 2-3;
- ``published``: the paper's Tables 1-3 and the spec's reference values;
- ``claims.chapter_claims`` / ``claims.paper_claims``: the notebook's claims, from its measurements;
- ``real_data.run_paper``: paper mode, Tables 1-2 on Fashion-MNIST and CIFAR-10;
- ``plots``: the notebook's figures.
- ``exercises.EXERCISES``: the notebook's checked exercises 7.1-7.4 (:mod:`fedlab.exercises`).
"""
