"""The thesis authors' GML files: an independent reference for the project's network tables (tests only).

The folder defaults to ``../shared/data/networks`` next to the repository; ``FEDLAB_NETWORK_REFERENCE``
points it elsewhere. Where the folder is absent (a fresh clone on its own), the comparison uses the reference graphs'
fingerprints recorded below from those files, so no test is skipped.
"""
import os
from pathlib import Path

import pytest

REFERENCE_DIR = Path(os.environ.get("FEDLAB_NETWORK_REFERENCE",
                                    Path(__file__).resolve().parents[3] / "shared" / "data" / "networks"))
REFERENCE_FILES = {"gaia": "gaia.gml", "aws_na": "amazon_us.gml", "geant": "geantdistance.gml",
                   "exodus": "exodus.gml", "ebone": "ebone.gml"}


# sha256 (16 hex digits) of each reference graph as read by fedlab.topology.read_gml_network: see graph_fingerprint
REFERENCE_FINGERPRINTS = {"gaia": "0e65647a582f1c0f", "aws_na": "01a6ab852a880b64", "geant": "5e141b6a53b954b7",
                          "exodus": "02f8c32b0dba7981", "ebone": "2cc811aba017aaaa"}


@pytest.fixture
def reference_gml():
    """``name -> path`` of the authors' GML file of a network, or None when the reference folder is absent."""
    return lambda name: REFERENCE_DIR / REFERENCE_FILES[name] if REFERENCE_DIR.is_dir() else None


@pytest.fixture
def reference_fingerprints():
    """The recorded fingerprints of the reference graphs (``REFERENCE_FINGERPRINTS``)."""
    return REFERENCE_FINGERPRINTS
