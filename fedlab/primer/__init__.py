"""Notebook 00 (``notebooks/00_primer.ipynb``): federated learning from scratch, client drift and heterogeneity.

Entry points
------------
- ``experiments.train_on_digits``: FedAvg, Local or Centralized on the digits federation (curves and final metrics);
- ``experiments.rounds_to_reach``: rounds until a target accuracy;
- ``toys.fedavg_quadratic`` / ``toys.fedavg_fixed_point``: client drift on quadratics in closed form.
"""
