"""CA-Fed and the availability baselines (thesis §2.2.4, §2.2.6)."""
from fedlab.availability.algorithms.baselines import (F3AST, AdaFed, AvailabilityAlgorithm, AvailabilityState,
                                                      LessCorrelated, MoreAvailable, Unbiased)
from fedlab.availability.algorithms.cafed import AVAILABILITY_METHODS, CAFed

__all__ = ["AVAILABILITY_METHODS", "AdaFed", "AvailabilityAlgorithm", "AvailabilityState", "CAFed", "F3AST",
           "LessCorrelated", "MoreAvailable", "Unbiased"]
