"""Generic federated algorithms on the engine, used by several chapters.

FedAvg/FedProx, Local/Centralized, decentralised SGD, FedEM/D-FedEM (chapters 3 and 4) and the
personalised baselines (FedAvg+, Clustered FL, pFedMe, APFL, Ditto, FedRep). Each is an
:class:`fedlab.engine.Algorithm` run by :func:`fedlab.engine.run` and registered by name in :data:`METHODS`
(:mod:`fedlab.methods` adds every chapter's presets).
"""
from fedlab.algorithms.decentralized import DecentralizedSGD
from fedlab.algorithms.fedavg import FedAvg, FedProx
from fedlab.algorithms.fedem import DFedEM, FedEM
from fedlab.algorithms.local import Centralized, Local
from fedlab.algorithms.personalized import APFL, ClusteredFL, Ditto, FedAvgPlus, FedRep, PFedMe
from fedlab.algorithms.registry import METHODS, Method, MethodRegistry

for _name, _cls, _label in [("fedavg", FedAvg, "FedAvg"), ("fedprox", FedProx, "FedProx"), ("local", Local, "Local"),
                            ("centralized", Centralized, "Centralized"), ("dsgd", DecentralizedSGD, "D-SGD"),
                            ("fedem", FedEM, "FedEM"), ("d-fedem", DFedEM, "D-FedEM"), ("fedavg+", FedAvgPlus, "FedAvg+"),
                            ("clustered", ClusteredFL, "Clustered FL"), ("pfedme", PFedMe, "pFedMe"),
                            ("apfl", APFL, "APFL"), ("ditto", Ditto, "Ditto"), ("fedrep", FedRep, "FedRep")]:
    METHODS.register(_name, _cls, label=_label)

__all__ = ["METHODS", "Method", "MethodRegistry", "APFL", "Centralized", "ClusteredFL", "DFedEM", "DecentralizedSGD", "Ditto", "FedAvg", "FedAvgPlus",
           "FedEM", "FedProx", "FedRep", "Local", "PFedMe"]
