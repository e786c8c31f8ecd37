"""Notebook 00 (``notebooks/00_primer.ipynb``): federated learning from scratch, client drift and heterogeneity.

Entry points
------------
- ``experiments.train_on_digits``: FedAvg, Local or Centralized on the digits federation (curves and final metrics);
- ``experiments.rounds_to_reach``: rounds until a target accuracy;
- ``toys.QuadraticFedAvg`` (run by ``fedlab.engine.run``; ``toys.drift_paths`` reads the paths) and
  ``toys.fedavg_fixed_point``: client drift on quadratics, exact iterates and their limit in closed form.
"""
