"""Federated algorithms written on the engine: one module per method, collected in ``METHODS``."""
from .decentralized import DecentralizedSGD
from .fedavg import FedAvg, FedProx
from .local import Centralized, Local

METHODS = {
    "fedavg": FedAvg,
    "fedprox": FedProx,
    "local": Local,
    "centralized": Centralized,
    "dsgd": DecentralizedSGD,
}

__all__ = ["FedAvg", "FedProx", "Local", "Centralized", "DecentralizedSGD", "METHODS"]
