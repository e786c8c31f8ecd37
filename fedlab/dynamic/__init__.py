"""Notebook 08 (``notebooks/08_dynamic_fl.ipynb``): dynamic federated learning under a drifting minimiser
(Rizk, Vlaski, Sayed).

Entry points
------------
- ``data.make_drifting_least_squares``: a least-squares problem whose minimiser is a random walk;
  ``data.make_drifting_logistic``: the paper's logistic problem (29), its minimiser by ``data.logistic_risk_minimizer``;
- ``algorithms.DynamicFedAvgLS`` / ``algorithms.DynamicFedAvg`` (Algorithm 1: the vectorised least-squares
  simulation and the engine version, both run by ``fedlab.engine.run``); ``algorithms.DynamicFedAvgLogistic`` on the
  logistic problem; ``algorithms.NoisyGradientTracking``, the scalar recursion of the bound; all registered as
  ``METHODS["dynamic:<name>"]`` (``algorithms.PRESETS``); ``algorithms.steady_state``, ``algorithms.msd_db`` read a
  simulation's History;
- ``bounds.dfl_msd_bound`` and ``bounds.dfl_opt_mu``: the spec's approximate form of Theorem 1's tracking bound
  (incremental error dropped) and its best step size;
- ``experiments.dfl_step_sweep`` / ``experiments.dfl_logistic_step_sweep``: steady-state MSD against the step size
  (least squares / logistic), ``experiments.dfl_logistic_curves``: the logistic Fig. 1 learning curves,
  ``experiments.curve_summary``: their floors, speeds and transient slopes over seeds;
- ``claims.chapter_claims``: the paper's statements against the notebook's results, with the paper's numbers in
  ``published`` (the chapter has no paper mode).
- ``exercises.EXERCISES``: the notebook's checked exercises 8.1-8.4 (:mod:`fedlab.exercises`).
"""
