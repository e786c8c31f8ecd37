"""Notebook 07 (``notebooks/07_sfedpo.ipynb``): streaming FL with a prediction oracle under temporal shifts
(SFedPO: data-driven sampling and shift-aware aggregation).

Entry points
------------
- ``data.make_temporal_shift``: latent-state Markov streams, buffers and prediction oracles;
- ``bounds.sfedpo_theorem1_bound`` / ``bounds.sfedpo_B``: Theorem 1 (6) and the term (15);
- ``strategies.sampling_ratios`` / ``strategies.aggregation_weights`` (DDS, SAW) and ``strategies.theorem2_gap``;
- ``algorithms.SFedPO`` and ``algorithms.PRESETS`` (SFedPO and the baselines of Table 2);
- ``experiments.compare_methods``: the simulation of §B.8 at CPU scale (softmax regression or an MLP,
  ``experiments.make_model``);
- ``experiments.ablation_configs`` / ``experiments.ablation_gains``: the ablations of the paper's Figs. 2-3.
"""
