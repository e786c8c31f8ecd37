"""The primer's sweep panels (fedlab.primer.plots)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from fedlab.primer.plots import plot_sweep_curves  # noqa: E402


def test_one_panel_per_alpha_with_fedavg_per_e_and_the_baselines():
    curves = {("fedavg", a, e): [[0.1, 0.5 + e / 100], [0.1, 0.6]] for a in (100.0, 0.1) for e in (1, 5)}
    curves.update({(m, a, 5): [[0.2, 0.7]] for m in ("local", "centralized") for a in (100.0, 0.1)})
    fig, data = plot_sweep_curves([0, 10], curves, alphas=(100.0, 0.1), steps=(1, 5))
    assert len(fig.axes) == 2 and list(data) == [100.0, 0.1]
    assert list(data[0.1]) == ["FedAvg E=1", "FedAvg E=5", "Local", "Centralized"]
    assert data[100.0]["FedAvg E=5"]["mean"].tolist() == pytest.approx([0.1, 0.575])
    plt.close(fig)


def test_an_alpha_without_runs_is_named():
    with pytest.raises(ValueError, match="alpha = 1"):
        plot_sweep_curves([0, 1], {("fedavg", 0.1, 1): [[0.1, 0.2]]}, alphas=[1.0], steps=[1])
    plt.close("all")
