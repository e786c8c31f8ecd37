"""The methods of the FedEM chapter: the core FedEM/D-FedEM and the baselines of thesis Table 3.2, with the
literature defaults used there (not tuned here): FedProx μ, Clustered FL's tolerances (reference code), pFedMe λ,
APFL α, Ditto λ, FedEM's M. Registered as ``METHODS["fedem:<name>"]``; ``d-fedem`` needs ``mixing_matrix=``.
"""
from fedlab.algorithms import (APFL, METHODS, ClusteredFL, DFedEM, Ditto, FedAvg, FedAvgPlus, FedEM, FedProx, FedRep,
                               Local, PFedMe)

__all__ = ["PRESETS"]

for _name, _cls, _label, _options in [
        ("local", Local, "Local", {}), ("fedavg", FedAvg, "FedAvg", {}), ("fedprox", FedProx, "FedProx", {"mu": 0.1}),
        ("fedavg+", FedAvgPlus, "FedAvg+", {}), ("clustered", ClusteredFL, "Clustered FL", {"tol_1": 0.4, "tol_2": 1.6}),
        ("pfedme", PFedMe, "pFedMe", {"lam": 1.0, "inner_steps": 3}), ("apfl", APFL, "APFL", {"alpha": 0.5}),
        ("ditto", Ditto, "Ditto", {"lam": 0.1}), ("fedrep", FedRep, "FedRep", {}),
        ("fedem", FedEM, "FedEM", {"n_components": 3}), ("d-fedem", DFedEM, "D-FedEM", {"n_components": 3})]:
    METHODS.register(_name, _cls, chapter="fedem", label=_label, **_options)

PRESETS = METHODS.presets("fedem")
"""The chapter's methods by short name: ``PRESETS[name](model, solver, **options)``."""
