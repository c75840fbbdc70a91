"""Replay every class of forged packet against a gateway pair during a transfer, and print
what the gateways did and whether the transfer was affected (issue 14's injection kit).

The pair, the emulated link and the kernel-TCP ends run in this process's threads
(`spacetp._core.gateway_selftest`, crate spacetp-live, module `selftest`): no root needed.
Each class gets a fresh pair and its own transfer; forged packets are built from the newest
real segments on the link, as an attacker who sees the link would build them.

    .venv/bin/python benches/gateway_attacks.py
    .venv/bin/python benches/gateway_attacks.py --link '"rate": "10 Mb/s", "delay": "50 ms",
        "errors": {"per": 0.02}' --bytes 4000000 --rounds 5 --json attacks.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time

DEFAULT_LINK = '"rate": "10 Mb/s", "delay": "50 ms", "errors": {"per": 0.02}'


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--link", default=DEFAULT_LINK, help="fields of a [[links]] entry, as JSON")
    ap.add_argument("--bytes", type=int, default=4_000_000, help="bytes of each transfer")
    ap.add_argument("--rounds", type=int, default=5, help="injections per class, 150 ms apart")
    ap.add_argument("--json", help="also write the rows as JSON here")
    a = ap.parse_args(argv)
    from spacetp import _core

    t0 = time.monotonic()
    try:
        rows = json.loads(_core.gateway_selftest(a.link, a.bytes, a.rounds))
    except ValueError as e:
        print(f"error: --link: {e}", file=sys.stderr)
        return 2
    print(f"link: {a.link}; {a.bytes:,} bytes per transfer; {a.rounds} rounds per class")
    print("| class | sent | transfer | as it must be | gateway reaction |")
    print("|---|---:|---|---|---|")
    for r in rows:
        ok = "yes" if r["expected"] else "NO"
        print(f"| {r['class']} | {r['sent']} | {r['transfer']} | {ok} | {r['reaction']} |")
    print(f"({time.monotonic() - t0:.0f} s)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0 if all(r["expected"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
