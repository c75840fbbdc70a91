"""A 60 s outage of the space link under 1 000 open connections (issue #21, item 7): 1 000
kernel-TCP connections through the gateway pair each carry 30 kB; the link (20 Mb/s, 50 ms)
goes down for 60 s in the middle of the transfers. The emulator tells both gateways when
the outage starts and ends (link-state notices: persist mode, no retransmission timeouts
spent), so every connection resumes when the link returns: all 1 000 arrive byte for byte
(SHA-256 at both ends), none is reset or reaped, and nothing is left open.

The testbed of tests/test_gateway.py (four namespaces, explicit rules). Needs
root."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from spacetp.live import gateway_testbed as live
from test_gateway import PROBE, _why_not

pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))

CONNECTIONS = 1000
SIZE = 30_000
OUTAGE = (6.0, 66.0)  # seconds after the emulator starts
LINK = f"""
[[links]]
between = ["a", "b"]
rate = "20 Mb/s"
delay = "50 ms"
queue = {{ bdp = 2.0 }}
outages = [["{OUTAGE[0]} s", "{OUTAGE[1]} s"]]
"""


def test_a_60_s_outage_under_1000_connections_loses_nothing(tmp_path):
    t0 = time.monotonic()
    gw = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "16 Mb/s"}}}
    with live.Testbed(LINK, gateway=gw, workdir=tmp_path, drain=20.0) as tb:
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
        sink = tb.exec("srv", [sys.executable, PROBE, "sink", live.SRV_ADDR, "5000",
                               str(CONNECTIONS)], **pipes)  # fmt: skip
        sink.stdout.readline()
        send = tb.exec("cli", [sys.executable, PROBE, "send", live.GWA_ADDR, "5000", str(SIZE), "7",
                               str(CONNECTIONS)], **pipes)  # fmt: skip
        sent, serr = send.communicate(timeout=200)
        got, gerr = sink.communicate(timeout=60)
        took = time.monotonic() - t0
        reps = tb.reports(settle=1.0)
    sent_f = json.loads(sent or "{}").get("flows", [])
    got_f = json.loads(got or "{}").get("flows", [])
    assert len(sent_f) == CONNECTIONS, serr[-2000:]
    assert sorted(f["sha256"] for f in got_f) == sorted(f["sha256"] for f in sent_f), gerr[-2000:]
    # The outage was in the middle: the transfers (12 s of link time) could not end before it.
    assert took > OUTAGE[1], took
    for name in ("gateway_a", "gateway_b"):
        r = reps[name]
        assert r["link_down_notices"] >= 1 and r["link_up_notices"] >= 1, r
        what = {k: v for k, v in r.items() if v and not isinstance(v, list)}
        assert (r["reset"], r["reaped"], r["integrity_resets"]) == (0, 0, 0), (name, what)
        assert r["closed"] == CONNECTIONS and r["open_connections"] == 0, r
