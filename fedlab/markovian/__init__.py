"""Notebook 09 (``notebooks/09_markovian_streams.ipynb``): streaming FL with Markovian data (Huynh, Egan, Neglia, Gorce).

Entry points
------------
- ``data.make_markov_regression``: clients whose samples follow a Markov chain; ``data.two_state_streams``: their
  streams in three modes with the same marginals; ``data.markov_streams``: problems and streams stacked as the
  engine's data (``data.MarkovStreams``);
- ``algorithms.StreamingMinibatchSGD`` / ``algorithms.StreamingLocalSGDM``: Minibatch SGD, Local SGD and Local SGD-M
  (Algorithms 1–3) as engine Algorithms, registered as ``METHODS["markovian:<name>"]`` (``algorithms.PRESETS``,
  built by ``algorithms.streaming_algorithm``); ``algorithms.run_streaming_fl`` runs them with common random numbers
  and returns Histories (``floor``/``average`` reduce them);
- ``bounds.minibatch_bound`` / ``bounds.local_sgd_bound`` / ``bounds.local_sgdm_bound``: the complexities;
- ``experiments.markov_experiment``: error floors against mixing time, clients and local steps;
  ``experiments.batch_dependence_ratio`` and ``experiments.replica_ratios`` (Fig. 7: independent vs dependent
  batches), ``experiments.final_values`` / ``seed_end_values`` (where the curves of Figs. 1, 3, 4 end) and
  ``experiments.replica_exponents`` (the floor's exponent per replica);
- ``published``: the paper's step sizes, figure settings and findings; ``claims.chapter_claims``: the chapter's
  claims from its results; ``plots``: the figures.
- ``exercises.EXERCISES``: the notebook's checked exercises 9.1-9.4 (:mod:`fedlab.exercises`).
"""
