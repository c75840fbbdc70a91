"""The goodput of examples/starlink-handover.toml over time, with its changes of satellite.

    .venv/bin/python benches/handover_goodput.py [--out docs/figures/starlink-goodput.png]

Runs the example with the sender's state sampled every 0.25 s, takes the goodput as bytes
delivered per interval, and marks each change of satellite (from the schedule the orbit
gave the link) and the one-way delay. Needs `pip install spacetp[orbits]`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import spacetp  # noqa: E402
from spacetp.linksrc import resolve_with_tables  # noqa: E402

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "starlink-handover.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="starlink-goodput.png")
    ap.add_argument("--interval", type=float, default=0.25, help="sampling interval (s)")
    args = ap.parse_args()
    sc = spacetp.load(EXAMPLE)
    res = spacetp.run(sc, trace_interval=f"{args.interval} s")
    s = res.samples_frame()
    s = s[s["flow"] == 0]
    t = s["time_s"].to_numpy()
    delivered = s["delivered"].to_numpy()
    goodput = np.diff(delivered) * 8 / np.diff(t) / 1e6
    resolved, tables = resolve_with_tables(sc)
    delay = np.array(resolved["links"][0]["delay"]["schedule"])  # steps at each handover
    orbit = tables["links[0]"]["orbit"]
    switch = orbit["time_s"][orbit["satellite"] != orbit["satellite"].shift()].iloc[1:]
    end = res.flows[0]["completion_s"] or t[-1]

    fig, (ax, ax_d) = plt.subplots(
        2, 1, figsize=(9, 4.6), sharex=True, gridspec_kw={"height_ratios": [2, 1]}
    )
    ax.plot(t[1:], goodput, lw=0.9, label=f"linux-cubic, delivered every {args.interval:g} s")
    for x in switch:
        if x <= end:
            ax.axvline(x, color="tab:red", lw=0.8, ls="--")
            ax_d.axvline(x, color="tab:red", lw=0.8, ls="--")
    ax.set_ylabel("goodput (Mb/s)")
    ax.set_title(
        f"{sc['name']}: {len(switch[switch <= end])} changes of satellite (dashed) during "
        f"the transfer, done at {end:.1f} s",
        fontsize=9,
    )
    ax.legend(fontsize=8, loc="lower right")
    ax_d.plot(delay[:, 0], delay[:, 1] * 1e3, color="tab:gray")
    ax_d.set_ylabel("one-way delay (ms)")
    ax_d.set_xlabel("simulated time (s)")
    ax_d.set_xlim(0, end + 5)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(
        f"{args.out}: {len(switch[switch <= end])} handovers, transfer done at {end:.1f} s, "
        f"goodput {res.flows[0]['goodput_bps'] / 1e6:.2f} Mb/s"
    )


if __name__ == "__main__":
    main()
