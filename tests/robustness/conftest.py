"""The robustness layer's settings: a fast, deterministic hypothesis profile and the count of inputs tried.

``FEDLAB_HYPOTHESIS_PROFILE=deep`` draws many more random bad values (slower, for a thorough search).
"""
import os
import sys
from pathlib import Path

import matplotlib
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))  # harness, world and the case lists

matplotlib.use("Agg")

_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors,
                                      HealthCheck.data_too_large, HealthCheck.filter_too_much])
settings.register_profile("fast", max_examples=3, derandomize=True, **_COMMON)
settings.register_profile("deep", max_examples=60, **_COMMON)
settings.load_profile(os.environ.get("FEDLAB_HYPOTHESIS_PROFILE", "fast"))


def pytest_terminal_summary(terminalreporter):
    from harness import COUNTS

    if COUNTS:
        terminalreporter.section("bad inputs tried, by module")
        for module, count in sorted(COUNTS.items()):
            terminalreporter.write_line(f"{count:6d}  {module}")
        terminalreporter.write_line(f"{sum(COUNTS.values()):6d}  in all ({len(COUNTS)} modules)")
