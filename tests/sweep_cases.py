"""The small sweep case test_sweep.py and test_sweep_store.py share."""

import spacetp
from conftest import EXAMPLES

ASYM = EXAMPLES / "asymmetry.toml"


def small() -> dict:
    """The asymmetry example with a short transfer and packet losses (seeds matter)."""
    sc = spacetp.load(ASYM)
    spacetp.set_value(sc, "flows[0].bytes", "200 kB")
    spacetp.set_value(sc, "links[1].errors", {"per": 0.005})
    return sc
