"""Notebook 06 (``notebooks/06_online_mixtures.ipynb``): online federated learning with mixture models (thesis §4.4,
FEM-OMD).

Entry points
------------
- ``algorithms.FEMOMD`` (Algorithms 14, 15, 17): mixture weights by entropic online mirror descent;
- ``algorithms.omd_step`` and ``algorithms.federated_em``: the two steps of FEM-OMD;
- ``bounds.fem_omd_regret_bound``: Theorems 4.4.2–4.4.5;
- ``experiments.gmm_regret`` / ``experiments.digits_stream_regret``: regret runs of §4.4.5.
"""
