"""Notebook 08 (``notebooks/08_dynamic_fl.ipynb``): dynamic federated learning under a drifting minimiser
(Rizk, Vlaski, Sayed).

Entry points
------------
- ``data.make_drifting_least_squares``: a least-squares problem whose minimiser is a random walk;
- ``algorithms.DynamicFedAvgLS`` / ``algorithms.DynamicFedAvg`` (Algorithm 1: the vectorised least-squares
  simulation and the engine version, both run by ``fedlab.engine.run``); ``algorithms.steady_state``,
  ``algorithms.msd_db`` read a simulation's History;
- ``bounds.dfl_msd_bound`` and ``bounds.dfl_opt_mu``: Theorem 1's tracking bound and its best step size;
- ``experiments.dfl_step_sweep``: steady-state MSD against the step size.
"""
