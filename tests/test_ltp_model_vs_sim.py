"""The LTP file-delivery model (spacetp.models.ltp, (L11) + (L13)) against the simulator's LTP
engine (crates/spacetp-ltp through `protocol = "ltp"`): nobody tuned one to the other, so the
two agreeing on a grid checks both. The full grid and its figure: docs/dtn.md."""

from __future__ import annotations

import pytest

from spacetp.models.ltp_vs_sim import point


@pytest.mark.parametrize("one_way", [0.05, 10, 1200])
@pytest.mark.parametrize("sessions", [4, 64])
def test_without_loss_the_model_is_the_simulator(one_way, sessions):
    p = point(one_way, 0.0, sessions, reps=1)
    assert p.sim_mean_s == pytest.approx(p.model_s, rel=1e-3)


@pytest.mark.parametrize("one_way", [1, 100])
@pytest.mark.parametrize("per", [1e-3, 1e-2])
@pytest.mark.parametrize("sessions", [4, 64])
def test_with_loss_the_simulator_mean_is_near_the_model(one_way, per, sessions):
    # Measured with 8 seeds over this grid: 0.89 to 1.13.
    p = point(one_way, per, sessions, reps=8)
    assert 0.85 < p.ratio < 1.2, p
