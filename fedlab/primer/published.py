"""What the thesis's introduction (Marfoq, ch. 1) and the papers it cites say, that the primer checks.

The introduction states no measured numbers: its statements are directions ("slows convergence down", "fewer
rounds"), which the primer's claims (:mod:`fedlab.primer.claims`) judge on the notebook's runs. Each entry is
``key: (source, statement)``, the statement quoted or closely paraphrased from the source (line numbers refer to
the thesis text ``marfoq_thesis.txt``).

>>> STATEMENTS["heterogeneity"][0]
'thesis §1.1'
"""
from __future__ import annotations

__all__ = ["STATEMENTS"]

STATEMENTS = {
    "fedavg": ("thesis §1.2.2, Algorithm 1 ([McM+17, Algorithm 1])",
               "FedAvg: sampled clients run E local SGD steps from the server model, the server averages the local "
               "models weighted by N_c / N."),
    "sgd_limit": ("thesis §1.2.3.1, eq. (1.8)",
                  "the average iterate performs a perturbed SGD whose gradients are evaluated at the clients' own "
                  "iterates; with one local step (E = 1) there is no perturbation: FedAvg is SGD on (1.1)."),
    "local_steps": ("[McM+17], cited in thesis §1.2.2",
                    "more local computation per round (larger E) reaches a target accuracy in fewer communication "
                    "rounds."),
    "heterogeneity": ("thesis §1.1",
                      "Statistical heterogeneity in general slows convergence down and may lead to unfair models, "
                      "unsuited for minorities (line 313)."),
    "client_drift": ("[Kar+20a], thesis §1.4.1.1",
                     "FedAvg suffers from 'client drift' when the data is heterogeneous: clients drift towards the "
                     "minima of their local objectives (line 522)."),
    "local_vs_global": ("thesis §1.2.3.2, Props 1.2.4-1.2.5",
                        "the local model generalises well when N_c is large; the global model pays the discrepancy "
                        "between P_c and the mixture, large when P_c differs substantially from it (lines 486-498)."),
}
"""The statements the primer checks: ``key -> (source, statement)``."""
