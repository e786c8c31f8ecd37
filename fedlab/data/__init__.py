"""Data: synthetic generators, partitioners, bundled digits and optional real image sets."""
from fedlab.data.digits import DIGITS_N_CLASSES, load_digits_arrays
from fedlab.data.partition import (
    PARTITIONERS,
    ClientArrays,
    Partition,
    label_skew,
    partition,
    partition_dirichlet,
    partition_iid,
    partition_pachinko,
    partition_pathological,
    train_test_split_clients,
)
from fedlab.data.synthetic import (
    GaussianMixtureSample,
    make_gaussian_mixture,
    make_gaussian_mixture_clients,
    make_leaf_synthetic,
)
from fedlab.data.vision import data_dir, file_hash, load_cifar10, load_emnist, load_mnist, read_cifar_bin, read_idx

from fedlab.data.availability import AvailabilityEstimator, MarkovAvailability, make_population, simulate_availability
from fedlab.data.drift import DriftingLeastSquares, make_drifting_least_squares
from fedlab.data.markov_streams import MarkovRegression, make_markov_regression, two_state_streams
from fedlab.data.mixture import MixtureDataset, make_digits_mixture, make_synthetic_mixture
from fedlab.data.streams import Memory, StreamDataset, make_case_study, make_stream_dataset
from fedlab.data.temporal_shift import PredictionOracle, TemporalShiftDataset, make_temporal_shift

__all__ = [
    "DIGITS_N_CLASSES",
    "load_digits_arrays",
    "PARTITIONERS",
    "ClientArrays",
    "Partition",
    "label_skew",
    "partition",
    "partition_dirichlet",
    "partition_iid",
    "partition_pachinko",
    "partition_pathological",
    "train_test_split_clients",
    "GaussianMixtureSample",
    "make_gaussian_mixture",
    "make_gaussian_mixture_clients",
    "make_leaf_synthetic",
    "data_dir",
    "file_hash",
    "load_cifar10",
    "load_emnist",
    "load_mnist",
    "read_cifar_bin",
    "read_idx",
    "AvailabilityEstimator",
    "MarkovAvailability",
    "make_population",
    "simulate_availability",
    "DriftingLeastSquares",
    "make_drifting_least_squares",
    "MarkovRegression",
    "make_markov_regression",
    "two_state_streams",
    "MixtureDataset",
    "make_digits_mixture",
    "make_synthetic_mixture",
    "Memory",
    "StreamDataset",
    "make_case_study",
    "make_stream_dataset",
    "PredictionOracle",
    "TemporalShiftDataset",
    "make_temporal_shift",
]
