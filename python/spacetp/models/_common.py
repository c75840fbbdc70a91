"""Small helpers shared by the model modules (array handling and unit conversion)."""

from __future__ import annotations

import numpy as np


def as_arrays(*values):
    """Broadcast the arguments against each other as float64 arrays.

    Every model accepts scalars or arrays for every parameter; broadcasting once at the top
    keeps the formulas themselves free of shape handling.
    """
    return np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in values))


def result(x):
    """Return a 0-d array as a numpy scalar so scalar inputs give scalar outputs."""
    x = np.asarray(x, dtype=float)
    return x[()] if x.ndim == 0 else x


def to_bits_per_second(rate, segment_bytes):
    """Convert a rate in packets/s to bits/s for segments of ``segment_bytes`` bytes each."""
    rate, segment_bytes = as_arrays(rate, segment_bytes)
    return result(rate * 8.0 * segment_bytes)
