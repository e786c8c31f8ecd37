"""Federated algorithms written on the engine: one module per method, collected in ``METHODS``.

Every entry is constructed as ``METHODS[name](model, solver, **options)`` and runs with
:func:`fedlab.engine.run`. Chapter-specific options (an availability trace for the availability
methods, a validation split or λ for kNN-Per, a stream data set for ``streaming_fedavg`` and ``sfedpo``)
are documented on each class.
"""
from .availability_baselines import F3AST, AdaFed, LessCorrelated, MoreAvailable, Unbiased
from .cafed import CAFed
from .decentralized import DecentralizedSGD
from .dynamic import DynamicFedAvg
from .fedavg import FedAvg, FedProx
from .fedem import DFedEM, FedEM
from .fem_omd import FEMOMD
from .knnper import KNNPer
from .local import Centralized, Local
from .personalized import APFL, ClusteredFL, Ditto, FedAvgPlus, FedRep, PFedMe
from .sfedpo import SFedPO
from .streams import StreamingFedAvg

METHODS = {
    # foundation
    "fedavg": FedAvg, "fedprox": FedProx, "local": Local, "centralized": Centralized, "dsgd": DecentralizedSGD,
    # chapter 2.2: client availability
    "unbiased": Unbiased, "more_available": MoreAvailable, "less_correlated": LessCorrelated, "adafed": AdaFed,
    "f3ast": F3AST, "cafed": CAFed,
    # chapter 3: personalisation
    "fedem": FedEM, "d-fedem": DFedEM, "fedavg+": FedAvgPlus, "clustered": ClusteredFL, "pfedme": PFedMe,
    "apfl": APFL, "ditto": Ditto, "fedrep": FedRep, "knnper": KNNPer,
    # chapter 4 and companion papers: streams and dynamics
    "streaming_fedavg": StreamingFedAvg, "fem_omd": FEMOMD, "sfedpo": SFedPO, "dynamic_fedavg": DynamicFedAvg,
}

__all__ = ["METHODS", *sorted({cls.__name__ for cls in METHODS.values()})]
