"""Every training method of the workbook by name: ``METHODS[name](model, solver, **options)``.

This module sits above the chapters: importing it imports every chapter's ``algorithms`` module, each of which
registers its engine algorithms in the core registry :data:`fedlab.algorithms.METHODS` under ``"<chapter>:<name>"``
(``"sfedpo:fedavg_latest"``), beside the core methods (``"fedavg"``); it registers the core's one algorithm outside
:mod:`fedlab.algorithms`, :class:`fedlab.gmm.FederatedGMMEM` (``"gmm_em"``). Nothing in the package imports it; the
architecture test checks that every engine algorithm class of the package is registered.
"""
import fedlab.availability.algorithms  # noqa: F401  (each import registers the chapter's methods)
import fedlab.dynamic.algorithms  # noqa: F401
import fedlab.fedem.algorithms  # noqa: F401
import fedlab.knnper.algorithms  # noqa: F401
import fedlab.markovian.algorithms  # noqa: F401
import fedlab.online.algorithms  # noqa: F401
import fedlab.primer.algorithms  # noqa: F401
import fedlab.sfedpo.algorithms  # noqa: F401
import fedlab.streams.algorithms  # noqa: F401
import fedlab.topology.algorithms  # noqa: F401
from fedlab.algorithms import METHODS
from fedlab.gmm import FederatedGMMEM

__all__ = ["METHODS"]

METHODS.register("gmm_em", FederatedGMMEM, label="Federated EM for Gaussian mixtures")
