"""The thesis' numbers of the kNN-Per chapter (fedlab.knnper.published): the tables' shape and the text's facts."""
import pytest

from fedlab.knnper.published import PAPER_METHODS, PAPER_TABLE_3_5, PAPER_TABLE_3_6, smallest_gain


def test_knnper_is_the_best_of_every_row_of_table_3_5():
    for dataset, row in PAPER_TABLE_3_5.items():
        assert len(row) == len(PAPER_METHODS)
        cells = [c for c in row if c is not None]
        knn = row[PAPER_METHODS.index("kNN-Per")]
        assert knn[0] == max(c[0] for c in cells), dataset
        assert knn[1] == max(c[1] for c in cells), dataset


def test_knnper_is_the_best_test_accuracy_of_every_row_of_table_3_6():
    for dataset, row in PAPER_TABLE_3_6.items():
        assert len(row) == len(PAPER_METHODS) - 1
        cells = [c for c in row if c is not None]
        assert row[-1][0] == max(c[0] for c in cells), dataset


def test_smallest_gain_reads_the_tables():
    assert smallest_gain("3.5", "FedAvg") == (3.3, "Shakespeare")          # 51.4 − 48.1
    assert smallest_gain("3.5", "Local", column=1) == (16.9, "CIFAR-10 (v2)")   # 88.2 − 71.3
    assert smallest_gain("3.6", "FedAvg+") == (1.4, "Shakespeare")         # 50.7 − 49.3
    assert smallest_gain("3.5", "pFedGP")[1] in ("CIFAR-10 (v2)", "CIFAR-100 (v2)")   # its only rows
    with pytest.raises(ValueError, match="base"):
        smallest_gain("3.6", "Local")
    with pytest.raises(ValueError, match="table"):
        smallest_gain("3.7", "FedAvg")
    with pytest.raises(ValueError, match="column"):
        smallest_gain("3.5", "FedAvg", column=2)
