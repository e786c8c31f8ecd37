"""fedlab: a workbook on heterogeneous federated learning.

Importing fedlab sets torch to one intra-op thread (small federated models run much faster that
way on few cores); set ``FEDLAB_NUM_THREADS`` to override.
"""
from __future__ import annotations

import os

import torch

__version__ = "0.1.0"

torch.set_num_threads(int(os.environ.get("FEDLAB_NUM_THREADS", "1")))
