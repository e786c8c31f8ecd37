"""The simulation engine: stacked client population, local solvers, aggregation, gossip, the round loop."""
from .aggregation import broadcast, check_mixing_matrix, gossip, weighted_average
from .evaluation import evaluate, metrics_from_outputs, metrics_from_proba, model_outputs
from .history import REDUCTIONS, History
from .local import BACKENDS, DivergenceError, LocalSGD, draw_batches, local_sgd
from .population import ClientData, FederatedDataset
from .runner import Algorithm, run

__all__ = ["ClientData", "FederatedDataset", "LocalSGD", "local_sgd", "draw_batches", "BACKENDS",
           "DivergenceError", "weighted_average", "broadcast", "gossip", "check_mixing_matrix", "evaluate",
           "model_outputs", "metrics_from_outputs", "metrics_from_proba", "History", "REDUCTIONS",
           "Algorithm", "run"]
