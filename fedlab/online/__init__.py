"""Notebook 06 (``notebooks/06_online_mixtures.ipynb``): online federated learning with mixture models (thesis §4.4,
FEM-OMD).

Entry points
------------
- ``algorithms.GaussianFEMOMD`` on ``algorithms.GMMEnvironment`` (Algorithm 15) and ``algorithms.FEMOMD``
  (Algorithms 14, 17): mixture weights by entropic online mirror descent, run online by
  ``fedlab.engine.run(..., order="evaluate_first")``;
- ``algorithms.omd_step`` and ``fedlab.gmm.em_step``: the two steps of FEM-OMD;
- ``bounds.fem_omd_regret_bound``: Theorems 4.4.2–4.4.5;
- ``algorithms.FedOMD``: the thesis's baseline (FedOMD with the Euclidean mirror map);
- ``experiments.run_fem_omd_gmm`` / ``experiments.gmm_regret`` / ``experiments.digits_stream_regret``: regret
  runs of §4.4.5; ``experiments.thesis_fig49_configs`` / ``experiments.regret_summary``: Fig. 4.9 at the thesis's
  stated setting; ``experiments.gradient_error_breakdown``: where the gradient error of (4.42) comes from;
- ``experiments.MixtureStream`` (any labelled pools; ``DigitsMixtureStream`` is its digits case) and
  ``experiments.mixture_stream_regret`` (a model factory and a comparator :math:`h^*`): the accuracy regret (4.47);
  ``experiments.sublinear_from``: the rule that dates a sub-linear regret;
- ``real_data.run_paper`` / ``real_data.paper_claims``: paper mode, Fig. 4.10 on MNIST and CIFAR-10 (§4.4.5.2).
"""
