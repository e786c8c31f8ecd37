"""Notebook 09 (``notebooks/09_markovian_streams.ipynb``): streaming FL with Markovian data (Huynh, Egan, Neglia, Gorce).

Entry points
------------
- ``data.make_markov_regression``: clients whose samples follow a Markov chain;
- ``algorithms.StreamingMinibatchSGD`` / ``algorithms.StreamingLocalSGDM``: Minibatch SGD, Local SGD and Local SGD-M
  (Algorithms 1–3) as engine Algorithms on ``algorithms.markov_streams`` data, ``algorithms.run_streaming_fl`` runs
  them with common random numbers and returns Histories (``floor``/``average`` reduce them);
- ``bounds.minibatch_bound`` / ``bounds.local_sgd_bound`` / ``bounds.local_sgdm_bound``: the complexities;
- ``experiments.markov_experiment``: error floors against mixing time, clients and local steps;
  ``experiments.batch_dependence_ratio`` (Fig. 7: independent vs dependent batches) and ``experiments.final_values``
  (where the curves of Figs. 1, 3, 4 end).
"""
