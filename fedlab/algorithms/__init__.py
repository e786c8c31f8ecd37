"""Generic federated algorithms on the engine, used by several chapters.

FedAvg/FedProx, Local/Centralized, decentralised SGD, FedEM/D-FedEM (chapters 3 and 4) and the
personalised baselines (FedAvg+, Clustered FL, pFedMe, APFL, Ditto, FedRep). Each is an
:class:`fedlab.engine.Algorithm` run by :func:`fedlab.engine.run`; every method of the workbook, the
chapters' included, is listed by name in :data:`fedlab.methods.METHODS`.
"""
from fedlab.algorithms.decentralized import DecentralizedSGD
from fedlab.algorithms.fedavg import FedAvg, FedProx
from fedlab.algorithms.fedem import DFedEM, FedEM
from fedlab.algorithms.local import Centralized, Local
from fedlab.algorithms.personalized import APFL, ClusteredFL, Ditto, FedAvgPlus, FedRep, PFedMe

__all__ = ["APFL", "Centralized", "ClusteredFL", "DFedEM", "DecentralizedSGD", "Ditto", "FedAvg", "FedAvgPlus",
           "FedEM", "FedProx", "FedRep", "Local", "PFedMe"]
