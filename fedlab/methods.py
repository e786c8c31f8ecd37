"""Every training method of the workbook by name: ``METHODS[name](model, solver, **options)``.

This module sits above the chapters (it imports them all); nothing in the package imports it.
Chapter-specific options (an availability trace, a validation split or λ, a stream data set) are
documented on each class.
"""
from fedlab.algorithms import (APFL, Centralized, ClusteredFL, DecentralizedSGD, DFedEM, Ditto, FedAvg, FedAvgPlus,
                               FedEM, FedProx, FedRep, Local, PFedMe)
from fedlab.availability.algorithms import F3AST, AdaFed, CAFed, LessCorrelated, MoreAvailable, Unbiased
from fedlab.dynamic.algorithms import DynamicFedAvg
from fedlab.knnper.algorithms import KNNPer
from fedlab.online.algorithms import FEMOMD
from fedlab.sfedpo.algorithms import SFedPO
from fedlab.streams.algorithms import StreamingFedAvg

METHODS = {
    # core
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

__all__ = ["METHODS"]
