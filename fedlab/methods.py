"""Every training method of the workbook by name: ``METHODS[name](model, solver, **options)``.

This module sits above the chapters: importing it imports every chapter, so that :data:`METHODS` (the core
registry :data:`fedlab.algorithms.METHODS`) holds the core methods (``"fedavg"``) and every chapter's presets
(``"sfedpo:fedavg_latest"``). Nothing in the package imports it.
"""
import fedlab.availability.algorithms  # noqa: F401  (each import registers the chapter's presets)
import fedlab.dynamic.algorithms  # noqa: F401
import fedlab.fedem.algorithms  # noqa: F401
import fedlab.knnper.algorithms  # noqa: F401
import fedlab.online.algorithms  # noqa: F401
import fedlab.sfedpo.algorithms  # noqa: F401
import fedlab.streams.algorithms  # noqa: F401
from fedlab.algorithms import METHODS

__all__ = ["METHODS"]
