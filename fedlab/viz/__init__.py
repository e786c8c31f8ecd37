"""Plot helpers: every ``plot_*`` returns ``(fig, data)`` where ``data`` holds the plotted arrays.

``federated`` holds the shared plots (label histograms, seed bands, client drift); the other modules
hold one chapter's figures each.
"""
from . import availability, dynamic, federated, fedem, knnper, online, sfedpo, streams, topology

__all__ = ["availability", "dynamic", "federated", "fedem", "knnper", "online", "sfedpo", "streams", "topology"]
