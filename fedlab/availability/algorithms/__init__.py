"""CA-Fed and the availability baselines (thesis §2.2.4, §2.2.6), registered as ``METHODS["availability:<name>"]``."""
from fedlab.algorithms import METHODS
from fedlab.availability.algorithms.baselines import (F3AST, AdaFed, AvailabilityAlgorithm, AvailabilityState,
                                                      LessCorrelated, MoreAvailable, Unbiased)
from fedlab.availability.algorithms.cafed import CAFed

for _name, _cls, _label in [("unbiased", Unbiased, "Unbiased"), ("more_available", MoreAvailable, "More available"),
                            ("less_correlated", LessCorrelated, "Less correlated"), ("adafed", AdaFed, "AdaFed"),
                            ("f3ast", F3AST, "F3AST"), ("cafed", CAFed, "CA-Fed")]:
    METHODS.register(_name, _cls, chapter="availability", label=_label)

PRESETS = METHODS.presets("availability")
"""The chapter's methods by short name (``PRESETS["cafed"](model, solver, **options)``)."""

__all__ = ["PRESETS", "AdaFed", "AvailabilityAlgorithm", "AvailabilityState", "CAFed", "F3AST", "LessCorrelated",
           "MoreAvailable", "Unbiased"]
