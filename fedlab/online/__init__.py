"""Notebook 06 (``notebooks/06_online_mixtures.ipynb``): online federated learning with mixture models (thesis §4.4,
FEM-OMD).

Entry points
------------
- ``data``: the environments. ``make_gmm_stream`` / ``GMMStream`` and ``GMMEnvironment`` (the federated GMM stream of
  §4.4.5.1 as engine data, with the loss (4.24), ``mixture_kl``), ``dirichlet_weights`` (the separated limit),
  ``MixtureStream`` (any labelled pools; ``DigitsMixtureStream`` is its digits case, §4.4.5.2);
- ``algorithms``: ``GaussianFEMOMD`` (Algorithm 15), ``FEMOMD`` (Algorithms 14, 17), the baseline ``FedOMD`` and
  ``OMD`` (exact gradients, the separated limit), all run online by ``fedlab.engine.run(..., order="evaluate_first")``
  and registered in ``PRESETS``; ``omd_step`` and ``fedlab.gmm.em_step``: the two steps of FEM-OMD;
- ``bounds.fem_omd_regret_bound`` and the other bounds: Theorems 4.4.2–4.4.5;
- ``experiments``: the regret runs of §4.4.5 (``run_fem_omd_gmm``, ``gmm_regret``, ``thesis_fig49_configs`` /
  ``regret_summary``, ``separated_limit_regret``, ``gradient_error_breakdown``, ``mixture_stream_regret`` /
  ``digits_stream_regret``) and the rule that reads a regret curve as linear or sub-linear (``late_regret_ratio``,
  ``sublinear_from``);
- ``published``: what the thesis states (settings of Fig. 4.9, its statements, t0 of Fig. 4.10);
- ``claims.chapter_claims`` / ``claims.paper_claims``: the thesis's statements against our measurements;
- ``real_data.run_paper``: paper mode, Fig. 4.10 on MNIST and CIFAR-10 (§4.4.5.2); ``plots``: the figures.
- ``exercises.EXERCISES``: the notebook's checked exercises 6.1-6.4 (:mod:`fedlab.exercises`).
"""
