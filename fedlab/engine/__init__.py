"""The simulation engine: stacked client population, local solvers, aggregation, gossip, the round loop."""
from fedlab.engine.aggregation import broadcast, check_mixing_matrix, gossip, weighted_average
from fedlab.engine.device import ALLOCATOR_ENV, resolve_device
from fedlab.engine.evaluation import evaluate, metrics_from_outputs, metrics_from_proba, model_outputs
from fedlab.engine.history import REDUCTIONS, History
from fedlab.engine.local import (BACKENDS, OPTIMIZERS, PARAMETER_NORM_LIMIT, CosineLR, DivergenceError, InverseSqrtLR,
                                 LocalResult, LocalSGD, MultiStepLR, OptimizerState, draw_batches, draw_epochs,
                                 RECIPE_OPTIONS, SCHEDULES, initial_optimizer_state, local_sgd, local_train,
                                 solver_from_recipe)
from fedlab.engine.population import ClientData, FederatedDataset, check_model_data
from fedlab.engine.runner import LOSS_GROWTH_LIMIT, ORDERS, Algorithm, run
from fedlab.engine.replicas import lockstep, run_replicas

__all__ = ["ClientData", "FederatedDataset", "check_model_data", "LocalSGD", "OPTIMIZERS", "MultiStepLR",
           "InverseSqrtLR", "CosineLR", "OptimizerState", "LocalResult", "initial_optimizer_state", "local_train",
           "SCHEDULES", "RECIPE_OPTIONS", "solver_from_recipe",
           "local_sgd", "draw_batches", "draw_epochs", "BACKENDS",
           "DivergenceError", "weighted_average", "broadcast", "gossip", "check_mixing_matrix", "evaluate",
           "model_outputs", "metrics_from_outputs", "metrics_from_proba", "History", "REDUCTIONS",
           "Algorithm", "ORDERS", "run", "lockstep", "run_replicas", "PARAMETER_NORM_LIMIT", "LOSS_GROWTH_LIMIT", "resolve_device",
           "ALLOCATOR_ENV"]
