"""The thesis authors' GML files: an independent reference for the project's network tables (tests only).

The folder defaults to ``../shared/data/networks`` next to the repository; ``FEDLAB_NETWORK_REFERENCE``
points it elsewhere (a missing folder skips only the comparisons with the reference).
"""
import os
from pathlib import Path

import pytest

REFERENCE_DIR = Path(os.environ.get("FEDLAB_NETWORK_REFERENCE",
                                    Path(__file__).resolve().parents[3] / "shared" / "data" / "networks"))
REFERENCE_FILES = {"gaia": "gaia.gml", "aws_na": "amazon_us.gml", "geant": "geantdistance.gml",
                   "exodus": "exodus.gml", "ebone": "ebone.gml"}


@pytest.fixture
def reference_gml():
    """``name -> path`` of the authors' GML file of a network; skips the test when the folder is absent."""
    if not REFERENCE_DIR.is_dir():
        pytest.skip(f"reference GML files not found at {REFERENCE_DIR}")
    return lambda name: REFERENCE_DIR / REFERENCE_FILES[name]
