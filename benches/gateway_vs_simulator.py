"""The gateway pair's goodput against the simulator's prediction on a fast link: the timing
figure tests/test_gateway.py used to assert (within 20%) and leaves to this benchmark, as
wall-clock goodput moves with the machine's load (docs/live.md).

The procedure of `test_5mb_exact_bytes`: the testbed (four namespaces, the emulator, both
gateways), a 50 Mb/s, 10 ms link, SCPS-TP rate-controlled at 40 Mb/s, one 5 MB transfer,
hashes checked; the goodput from the client's first to its last byte against
`spacetp.live.gateway.predict` for the same link and settings. Run as root from the
repository:

    sudo .venv/bin/python benches/gateway_vs_simulator.py [--reps 5] [--bytes 5000000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))


def main() -> None:
    from spacetp.live.gateway import predict
    from test_gateway import FAST, transfer

    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--bytes", type=int, default=5_000_000)
    a = ap.parse_args()
    proto = {"protocol": "scps-tp", "tcp": {"scps": {"rate": "40 Mb/s"}}}
    sim = predict(FAST, proto, a.bytes)["goodput_bps"]
    for rep in range(a.reps):
        with tempfile.TemporaryDirectory() as d:
            elapsed, _ = transfer(FAST, proto, a.bytes, 1, Path(d))
        good = a.bytes * 8 / elapsed
        print(json.dumps({"rep": rep + 1, "seconds": round(elapsed, 3),
                          "goodput_mbps": round(good / 1e6, 3),
                          "simulator_mbps": round(sim / 1e6, 3),
                          "difference_pct": round((good / sim - 1) * 100, 1),
                          "within_20pct": abs(good / sim - 1) < 0.2}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
