"""Notebook 05 (``notebooks/05_data_streams.ipynb``): FL on data streams with client memories (thesis §4.3;
Marfoq et al., AISTATS 2023).

Entry points
------------
- ``data.make_stream_dataset`` / ``data.Memory``: arrivals and bounded memories;
- ``bounds.psi`` (Corollary 4.3.5) and ``bounds.optimal_weights``: the bound and its minimiser;
- ``algorithms.StreamingFedAvg`` (Algorithm 13) and ``algorithms.StreamingScaffold`` (its SCAFFOLD variant);
- ``experiments.compare_strategies``: historical, fresh, uniform and optimal weighting, with FedAvg, FedProx or
  SCAFFOLD, and the Bayes accuracy of the synthetic data.
"""
