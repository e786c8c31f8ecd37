"""Markdown tables and paired statistics of the notebooks."""
import numpy as np
import pytest

from fedlab.tables import (loglog_slope, markdown_table, mean_interval, mean_pm_std, paired_direction, paired_t,
                           show_table, t_critical)


def test_markdown_table_escapes_pipes_and_checks_row_lengths():
    text = markdown_table(["a", "|Δ|"], [[1, "x|y"], [None, 2.5]])
    assert text.splitlines() == ["| a | \\|Δ\\| |", "|---|---|", "| 1 | x\\|y |", "|  | 2.5 |"]
    assert all(line.count("|") - line.count("\\|") == 3 for line in text.splitlines())
    with pytest.raises(ValueError, match=r"rows\[0\] has 1 cells, the header has 2"):
        markdown_table(["a", "b"], [[1]])
    with pytest.raises(ValueError, match="header"):
        markdown_table([], [])


def test_show_table_displays_markdown(capsys):
    show_table(["a"], [[1]])
    assert "Markdown" in capsys.readouterr().out  # outside a notebook IPython prints the object's repr


def test_mean_pm_std():
    assert mean_pm_std((1.234, 0.5)) == "1.23 ± 0.50"
    assert mean_pm_std((1.234, 0.5), 1) == "1.2 ± 0.5"
    assert mean_pm_std(None) == "n/a" and mean_pm_std((np.nan, 0.0)) == "n/a"


def test_paired_t_against_scipy():
    from scipy import stats

    d = np.array([0.9, 1.4, 0.2, 1.1, 0.7])
    expected = stats.ttest_1samp(d, 0.0).statistic
    assert paired_t(d.mean(), d.std(), d.size) == pytest.approx(expected)
    assert paired_t(1.0, 0.0, 3) == np.inf and paired_t(0.0, 0.0, 3) == 0.0


@pytest.mark.parametrize("mean, std, expected", [(0.1, 1.0, "≈ 0"), (1.5, 0.5, "significant gain"),
                                                 (-1.5, 0.5, "significant loss"), (1.0, 2.0, "inconclusive")])
def test_paired_direction(mean, std, expected):
    assert paired_direction(mean, std, n=5) == expected


def test_paired_direction_uses_the_critical_value_of_its_degrees_of_freedom():
    """t = 3 is significant with 10 seeds (critical 2.26) but not with 3 (critical 4.30)."""
    std_for_t3 = lambda n: 1.0 / 3.0 * np.sqrt(n - 1)          # noqa: E731 (mean 1, t = 1 / (s / sqrt(n - 1)) = 3)
    assert paired_direction(1.0, std_for_t3(10), n=10) == "significant gain"
    assert paired_direction(1.0, std_for_t3(3), n=3) == "inconclusive"
    assert t_critical(3) == pytest.approx(4.302653, abs=1e-6) and t_critical(1) == np.inf


def test_mean_interval_against_scipy():
    from scipy import stats

    values = np.array([0.9, 1.4, 0.2, 1.1, 0.7])
    low, high = stats.t.interval(0.95, values.size - 1, loc=values.mean(), scale=stats.sem(values))
    assert mean_interval(values) == pytest.approx((values.mean(), low, high))
    assert mean_interval([2.0]) == (2.0, -np.inf, np.inf)
    assert mean_interval([1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="values must"):
        mean_interval([1.0, np.nan])
    with pytest.raises(ValueError, match="level"):
        t_critical(3, level=1.0)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="std"):
        paired_t(1.0, -1.0, 3)
    with pytest.raises(ValueError, match="n must be"):
        paired_t(1.0, 1.0, 0)
    with pytest.raises(ValueError, match="negligible"):
        paired_direction(1.0, 1.0, 3, negligible=-1)


def test_loglog_slope():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    assert loglog_slope(x, 3 * x ** -1.5) == pytest.approx(-1.5)
    with pytest.raises(ValueError, match="positive"):
        loglog_slope([1, 2], [1, -1])
