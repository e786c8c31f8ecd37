"""Shared data: LEAF synthetic and Gaussian mixtures, partitioners, bundled digits, real-data readers and their
fetch command (:mod:`fedlab.data.fetch`).

A chapter's own data (availability traces, streams, drifts, temporal shifts) lives in ``fedlab.<chapter>.data``.
"""
from fedlab.data.digits import DIGITS_N_CLASSES, load_digits_arrays
from fedlab.data.partition import (PARTITIONERS, ClientArrays, Partition, label_skew, partition,
                                   partition_dirichlet, partition_iid, partition_pachinko,
                                   partition_pathological, train_test_split_clients)
from fedlab.data.synthetic import (GaussianMixtureSample, make_gaussian_mixture,
                                   make_gaussian_mixture_clients, make_leaf_synthetic)
from fedlab.data.vision import (data_dir, file_hash, load_cifar10, load_cifar100, load_emnist, load_fashion_mnist,
                                load_mnist, read_cifar_bin, read_idx)


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
    "load_fashion_mnist",
    "load_cifar100",
    "read_cifar_bin",
    "read_idx",
]
