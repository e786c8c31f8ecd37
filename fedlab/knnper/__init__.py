"""Notebook 04 (``notebooks/04_knnper.ipynb``): personalisation through local memorisation (thesis §3.6–3.7, kNN-Per).

Entry points
------------
- ``data``: the digits split over clients, train / validation / test (``digits_split``, ``SplitFederation``), old and
  new clients, shrunk clients, the two pools of a distribution shift;
- ``algorithms.KNNPer`` (Algorithm 12): a global model plus a per-client kNN datastore and interpolation λ;
  ``algorithms.PRESETS`` (the chapter's methods in ``fedlab.algorithms.METHODS``) and ``algorithms.cost_table`` (§3.7);
- ``bounds.theorem_3_6_1``: the generalisation bound (3.38);
- ``experiments.compare_methods``: kNN-Per against FedAvg, FedEM and the personalised baselines on digits;
  ``experiments.unseen_clients`` (Table 3.6), ``experiments.capacity_retrained`` (Fig. 3.7),
  ``experiments.new_client_capacity`` (Fig. 3.11), ``experiments.hyperparameter_sensitivity`` (Figs. 3.6/3.8 at the
  thesis' datastore sizes), ``experiments.distribution_shift`` (Fig. 3.13);
- ``claims.chapter_claims`` / ``claims.paper_claims``: the thesis' statements against the digits and paper runs;
- ``published``: the thesis' Tables 3.5 and 3.6 and the numbers of its text;
- ``real_data.run_paper``: the paper mode (Tables 3.5/3.6 on CIFAR, FEMNIST, Shakespeare); ``plots``: the figures.
- ``exercises.EXERCISES``: the notebook's numbered exercises, each checking the reader's answer with a hint
  (:mod:`fedlab.exercises`).
"""
