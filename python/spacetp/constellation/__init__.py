"""Constellation networks: `[constellation]` (shells of satellites with +Grid inter-satellite
links, ground stations, the ground-satellite link rule) routed by shortest path on
propagation delay at every step, as Hypatia's satgenpy does (`routing.py`).

- `pair_series(sc, pairs)`: each pair's round trip, hop count and path at every step
  (`spacetp schedule` draws them);
- `expand(sc)`: the scenario with the constellation turned into what the core runs: the
  nodes and links any flow's packets can use, each link's delay over time, and the
  forwarding state of every step as `[[forwarding]]` entries (`expand.py`).
"""

from __future__ import annotations

from spacetp.constellation.config import read
from spacetp.constellation.expand import expand
from spacetp.constellation.series import pair_series

__all__ = ["expand", "pair_series", "read"]
