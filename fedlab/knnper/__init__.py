"""Notebook 04 (``notebooks/04_knnper.ipynb``): personalisation through local memorisation (thesis §3.6–3.7, kNN-Per).

Entry points
------------
- ``algorithms.KNNPer`` (Algorithm 12): a global model plus a per-client kNN datastore and interpolation λ;
- ``bounds.theorem_3_6_1``: the generalisation bound (3.38);
- ``experiments.compare_methods``: kNN-Per against FedAvg, FedEM and the personalised baselines on digits;
- ``experiments.capacity_retrained`` (Fig. 3.7), ``experiments.new_client_capacity`` (Fig. 3.11) and
  ``experiments.hyperparameter_sensitivity`` (Figs. 3.6/3.8 at the thesis' datastore sizes).
"""
