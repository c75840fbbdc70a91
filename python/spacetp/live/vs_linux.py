"""`spacetp bench --vs-linux`: the Linux kernel's reno, cubic and bbr over `spacetp emulate`
against the simulator's `linux-*` profiles on the same links.

For every case of the grid and every congestion control, `reps` kernel runs (kernel TCP
between two namespaces across the emulator, TCP_INFO sampled every 100 ms) and `reps`
simulator runs of the matching profile with the same seeds (the emulator and the simulator
draw a link's losses from the same seeded stream, so rep k sees the same loss process on
both sides). Goodput on both sides is counted from the receiver's accept (the end of the
handshake) to the last byte, so the kernel's and the simulator's figures mean the same.

With `gateway`, each case also answers the GEO question of the issue: SCPS-TP with a PEP
(the `spacetp gateway` pair, live: kernel TCP at both ends, SCPS-TP across the emulated
link, against the simulator's prediction for it) and without one (SCPS-TP end to end, in
the simulator), configured as operators run it on a dedicated link: rate-based at the
link's rate (congestion control off), buffers of twice its bandwidth-delay product.

Writes DIR/linux_comparison.csv, DIR/linux_comparison.md and DIR/cwnd-CASE.png (the
kernel's cwnd and the simulator's on the same axes, rep 1 of each controller).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from spacetp.errors import UserError

CONTROLS = ("reno", "cubic", "bbr")
# The table's row for SCPS-TP through the gateway pair (a PEP), live and simulated. In the
# simulator the pair's SCPS-TP connection is SCPS-TP end to end (the LAN legs cost nothing).
GATEWAY = "gateway scps-tp"
PORT = 5001
SAMPLE_S = 0.1


@dataclass(frozen=True)
class Case:
    name: str
    what: str
    link: str  # the [[links]] table, between "a" and "b"
    nbytes: int
    quick_bytes: int
    cap_s: float
    one_way_s: float

    @property
    def rate_bps(self) -> float:
        """The forward rate, from the link table."""
        import tomllib

        return _rate(tomllib.loads(self.link)["links"][0]["rate"])

    def scps_settings(self) -> dict:
        """SCPS-TP as operators run it on a dedicated space link: rate-based (congestion
        control off, SCPS-TP's NUCC) at the link's rate, buffers of twice the
        bandwidth-delay product (at least the profile's)."""
        bdp = self.rate_bps * 2 * self.one_way_s / 8
        buf = max(int(2 * bdp), 300_000)
        return {
            "congestion_control": "none",
            "scps": {"rate": f"{self.rate_bps:.0f} b/s"},
            "receive_buffer": f"{buf} B",
            "send_buffer": f"{buf} B",
        }


def _rate(text: str) -> float:
    """A rate as the scenario files write it ("10 Mb/s"), in bits per second."""
    value, unit = text.split()
    return float(value) * {"b/s": 1, "kb/s": 1e3, "Mb/s": 1e6, "Gb/s": 1e9}[unit]


def _link(rate: str, back: str, delay: str, extra: str = "") -> str:
    return (
        f'[[links]]\nbetween = ["a", "b"]\nrate = "{rate}"\nrate_back = "{back}"\n'
        f'delay = "{delay}"\nqueue = {{ bdp = 1.0 }}\n{extra}'
    )


GRID = (
    Case("geo", "GEO, 10 Mb/s / 1 Mb/s, 600 ms RTT, queue 1 BDP, no loss",
         _link("10 Mb/s", "1 Mb/s", "300 ms"), 5_000_000, 3_000_000, 120, 0.3),
    Case("geo-per", "the same with PER 1e-3",
         _link("10 Mb/s", "1 Mb/s", "300 ms", "errors = { per = 1e-3 }\n"),
         5_000_000, 3_000_000, 180, 0.3),
    Case("leo", "LEO-like, 50 Mb/s both ways, 40 ms RTT, PER 1e-3",
         _link("50 Mb/s", "50 Mb/s", "20 ms", "errors = { per = 1e-3 }\n"),
         20_000_000, 10_000_000, 120, 0.02),
    Case("geo-bursty", "GEO with Gilbert-Elliott bursts (mean burst 5 packets, 1% of packets)",
         _link("10 Mb/s", "1 Mb/s", "300 ms",
               "errors = { gilbert_elliott = { p_good_to_bad = 0.002, p_bad_to_good = 0.2, "
               "loss_bad = 1.0, loss_good = 0.0 } }\n"),
         5_000_000, 3_000_000, 240, 0.3),
    Case("cislunar", "cislunar-like, 2 Mb/s / 256 kb/s, 3 s RTT",
         _link("2 Mb/s", "256 kb/s", "1500 ms"), 3_000_000, 1_500_000, 240, 1.5),
    Case("outage", "GEO with a 20 s outage from 5 s",
         _link("10 Mb/s", "1 Mb/s", "300 ms", 'outages = [["5 s", "25 s"]]\n'),
         10_000_000, 10_000_000, 240, 0.3),
    Case("ack-starved", "10 Mb/s forward, 64 kb/s return, 600 ms RTT",
         _link("10 Mb/s", "64 kb/s", "300 ms"), 3_000_000, 2_000_000, 240, 0.3),
)  # fmt: skip


def check_machine(controls: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """(usable controls, one-line reasons for what cannot run). Raises UserError when
    nothing can (no root, no TUN)."""
    from spacetp.live.kernel_tcp import available_congestion_controls

    if os.geteuid() != 0:
        raise UserError(
            "--vs-linux needs root (network namespaces and TUN devices): run it with sudo"
        )
    if not os.path.exists("/dev/net/tun"):
        raise UserError("--vs-linux needs /dev/net/tun: load it with `modprobe tun`")
    have = available_congestion_controls()
    usable, skipped = [], []
    for cc in controls:
        if cc in have:
            usable.append(cc)
        else:
            skipped.append(
                f"kernel {cc}: not offered by this kernel (tcp_available_congestion_control: "
                f"{' '.join(have) or 'unreadable'}); `modprobe tcp_{cc}` adds it"
            )
    return usable, skipped


def kernel_run(
    case: Case, cc: str, seed: int, nbytes: int, tmp: Path, departures: Path | None = None
) -> dict:
    """One transfer of kernel TCP with `cc` across the emulated link of `case`; with
    `departures`, the sender's packets as they leave its device are written there
    ([time, sequence number, payload bytes] of each data segment, kernel timestamps:
    `kernel_tcp departures`)."""
    from spacetp.live.emulate import ADDR_B, DEVICE, Netns, load_link
    from spacetp.live.gateway_testbed import emulator_child

    f = tmp / f"{case.name}-{cc}-{seed}.toml"
    f.write_text(f"seed = {seed}\n{case.link}")
    link_json = tmp / f"{case.name}-{cc}-{seed}.json"
    link_json.write_text(load_link(f)[0])
    emu_report = tmp / f"emu-{case.name}-{cc}-{seed}.json"
    me = [sys.executable, "-m", "spacetp.live.kernel_tcp"]
    with (
        Netns(tag=f"{os.getpid() % 100000}{cc[0]}") as n,
        emulator_child(link_json, n.fd_a, n.fd_b, emu_report),
    ):
        sniffer = None
        if departures is not None:
            sniffer = subprocess.Popen(
                ["ip", "netns", "exec", n.ns_a, *me, "departures", DEVICE, str(case.cap_s),
                 str(departures)],
                stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            sniffer.stdout.readline()
        rx = subprocess.Popen(
            ["ip", "netns", "exec", n.ns_b, *me, "recv", ADDR_B, str(PORT), str(case.cap_s)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        rx.stdout.readline()
        tx = subprocess.Popen(
            ["ip", "netns", "exec", n.ns_a, *me, "send", ADDR_B, str(PORT), str(nbytes), cc,
             str(SAMPLE_S)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            got, sent = _outcome(rx, tx, case.cap_s)
        finally:
            if sniffer is not None:
                sniffer.terminate()
                sniffer.wait(timeout=10)
        stop_wall = time.time()  # as the emulator is stopped
    emu_stats = json.loads(emu_report.read_text()) if emu_report.exists() else {}
    # When the transfer began on the emulator's clock (its outages and schedules count from
    # its own start): the simulator starts its flow there too.
    start_s = _start_on_emulator_clock(sent, emu_stats, stop_wall)
    return {
        "bytes": got["bytes"],
        "complete": got["bytes"] == nbytes,
        "seconds": got["seconds"],
        "goodput_bps": got["bytes"] * 8 / max(got["seconds"], 1e-9),
        "total_s": _total_s(got, sent),
        "retrans": sent.get("total_retrans"),
        "samples": sent.get("samples", []),
        "connected_s": sent.get("connected_s", 0.0),
        "start_s": start_s,
        "emulator": emu_stats,
    }


def sim_run(
    case: Case,
    cc: str,
    seed: int,
    nbytes: int,
    start_s: float = 0.0,
    protocol: str | None = None,
    tcp: dict | None = None,
    accept_one_ways: int = 3,
) -> dict:
    """The simulator's `linux-<cc>` profile (or `protocol` with `tcp` settings) on the same
    link and seed, its flow starting `start_s` into the run (where the kernel's began on the
    emulator's clock). Goodput counts from the receiver's accept, `accept_one_ways` one-way
    delays after the start: 3 for end-to-end TCP (the client's ACK of the SYN-ACK)."""
    import tomllib

    import spacetp

    sc = tomllib.loads(
        f'name = "{case.name} {cc}"\nseed = {seed}\n[[nodes]]\nname = "a"\n[[nodes]]\n'
        f'name = "b"\n{case.link}\n[[flows]]\nfrom = "a"\nto = "b"\n'
        f'protocol = "{protocol or "linux-" + cc}"\nbytes = {nbytes}\n'
        f'start = "{start_s:.6f} s"\n'
    )
    if tcp:
        sc["flows"][0]["tcp"] = tcp
    r = spacetp.run(sc, trace_interval="100 ms")
    f = r.flows[0]
    accept = start_s + accept_one_ways * case.one_way_s
    seconds = (f["last_byte_s"] or float("nan")) - accept
    s = r.samples_frame()
    samples = [
        {"t": float(t) - start_s, "cwnd_bytes": float(c)}
        for t, c in zip(s["time_s"], s["cwnd"], strict=True)
    ] if s is not None else []  # fmt: skip
    return {
        "bytes": f["bytes_delivered"],
        "complete": f["complete"],
        "seconds": seconds,
        "goodput_bps": f["bytes_delivered"] * 8 / seconds if seconds > 0 else float("nan"),
        "total_s": (f["last_byte_s"] or float("nan")) - start_s,
        "retrans": f["retransmitted_segments"],
        "timeouts": f["timeouts"],
        "samples": samples,
    }


def _outcome(rx: subprocess.Popen, tx: subprocess.Popen, cap_s: float) -> tuple[dict, dict]:
    """What the receiver and the sender (`kernel_tcp recv`, `send`) report once the transfer
    ends: the receiver within its cap and 30 s, the sender 30 s after ({} if it hangs)."""
    got = json.loads(rx.communicate(timeout=cap_s + 30)[0])
    try:
        sent = json.loads(tx.communicate(timeout=30)[0] or "{}")
    except subprocess.TimeoutExpired:
        tx.kill()
        sent = {}
    return got, sent


def _start_on_emulator_clock(sent: dict, emu: dict, stop_wall: float) -> float:
    """When the sender began, on the emulator's clock (its outages and schedules count from
    its own start, `elapsed_s` before it stopped at `stop_wall`)."""
    emu_start_wall = stop_wall - emu.get("elapsed_s", 0.0)
    return max(0.0, sent.get("start_wall", emu_start_wall) - emu_start_wall)


def _total_s(got: dict, sent: dict) -> float:
    """From the client's connect to the server's last byte (both ends on this host's clock):
    what a user waits for, handshakes included, with or without a PEP."""
    if "accept_wall" not in got or "start_wall" not in sent:
        return float("nan")
    return got["accept_wall"] + got["seconds"] - sent["start_wall"]


def gateway_run(case: Case, seed: int, nbytes: int, tmp: Path, gateway: dict | None = None) -> dict:
    """One transfer through the `spacetp gateway` pair across the emulated link of `case`
    (kernel TCP from the client to gateway A, `gateway`'s carrier across the link, by default
    SCPS-TP set up for the case, kernel TCP from gateway B to the server), and the
    simulator's prediction of the gateways' connection on the same link and seed."""
    from spacetp.live.gateway import is_quic
    from spacetp.live.gateway_testbed import GWA_ADDR, SRV_ADDR, Testbed

    gw = gateway or {"protocol": "scps-tp", "tcp": case.scps_settings()}
    me = [sys.executable, "-m", "spacetp.live.kernel_tcp"]
    with Testbed(f"seed = {seed}\n{case.link}", gateway=gw,
                 tag=f"{os.getpid() % 100000}v", workdir=tmp) as tb:  # fmt: skip
        rx = tb.exec("srv", [*me, "recv", SRV_ADDR, "5000", str(case.cap_s)],
                     stdout=subprocess.PIPE, text=True)  # fmt: skip
        rx.stdout.readline()
        tx = tb.exec("cli", [*me, "send", GWA_ADDR, "5000", str(nbytes), "-", "1"],
                     stdout=subprocess.PIPE, text=True)  # fmt: skip
        got, sent = _outcome(rx, tx, case.cap_s)
        reps = tb.reports()
        stop_wall = time.time()
    emu = reps.get("emulator", {})
    start_s = _start_on_emulator_clock(sent, emu, stop_wall)
    # Gateway B connects to the server when the SCPS-TP SYN reaches it: one one-way delay.
    # A QUIC pair's tunnel is up before the transfer: its prediction is a QUIC flow.
    sim = (
        None
        if is_quic(gw)
        else sim_run(case, "scps-tp", seed, nbytes, start_s, "scps-tp", gw.get("tcp"), 1)
    )
    return {
        "bytes": got["bytes"],
        "complete": got["bytes"] == nbytes,
        "seconds": got["seconds"],
        "goodput_bps": got["bytes"] * 8 / max(got["seconds"], 1e-9),
        "total_s": _total_s(got, sent),
        "retrans": reps.get("gateway_a", {}).get("retransmitted_segments"),
        "samples": [],
        "start_s": start_s,
        "emulator": emu,
        "sim": sim,
    }


def _mean_sd(xs: list[float]) -> tuple[float, float]:
    xs = [x for x in xs if x == x]
    if not xs:
        return float("nan"), float("nan")
    return statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0


def lateness_of(kernel: list[dict]) -> dict:
    """The emulator's timing over a row's live runs: all under SCHED_FIFO or not, the worst
    p99 and max (us), and whether every run kept within the documented bound."""
    from spacetp.live.emulate import LATENESS_P99_BOUND_US, lateness

    late = [lateness(k["emulator"]) for k in kernel if k.get("emulator")]
    return {
        "emulator_realtime": all(x["realtime"] for x in late) if late else None,
        "emulator_p99_us": max((x["p99_us"] for x in late), default=math.nan),
        "emulator_max_us": max((x["max_us"] for x in late), default=math.nan),
        "emulator_within_bound": all(x["p99_us"] <= LATENESS_P99_BOUND_US for x in late),
    }


def summarize(case: Case, cc: str, kernel: list[dict], sim: list[dict]) -> dict:
    kg, ks = _mean_sd([k["goodput_bps"] for k in kernel])
    sg, ss = _mean_sd([s["goodput_bps"] for s in sim])
    kr, _ = _mean_sd([float(k["retrans"]) for k in kernel if k["retrans"] is not None])
    sr, _ = _mean_sd([float(s["retrans"]) for s in sim])
    return {
        "case": case.name,
        "cc": cc,
        "reps": len(kernel),
        "kernel_goodput_bps": kg,
        "kernel_goodput_sd_bps": ks,
        "sim_goodput_bps": sg,
        "sim_goodput_sd_bps": ss,
        "difference_pct": (sg - kg) / kg * 100 if kg == kg and kg > 0 else float("nan"),
        "kernel_retrans": kr,
        "sim_retrans": sr,
        "kernel_completion_s": _mean_sd([k.get("total_s", math.nan) for k in kernel])[0],
        "sim_completion_s": _mean_sd([s["total_s"] for s in sim])[0],
        "kernel_complete": all(k["complete"] for k in kernel) if kernel else None,
        "sim_complete": all(s["complete"] for s in sim),
        **lateness_of(kernel),
    }


def _fmt_pct(x: float) -> str:
    return "-" if x != x else f"{x:+.1f}%"


def _fmt_num(x: float) -> str:
    return "-" if x != x else f"{x:.0f}"


def _pep_table(rows: list[dict]) -> list[str]:
    """The GEO question on one line per case: kernel TCP end to end, SCPS-TP through the
    gateway pair (live, and as the simulator predicts it), SCPS-TP end to end (simulated)."""
    by = {(r["case"], r["cc"]): r for r in rows}
    if not any(cc == GATEWAY for _, cc in by):
        return []
    out = [
        "",
        "SCPS-TP with and without a PEP beside kernel TCP: mean time from the client's connect "
        "to the server's last byte, handshakes included (SCPS-TP rate-based at the link's "
        "rate, buffers of 2 BDP):",
        "",
        "| case | kernel reno | kernel cubic | kernel bbr | SCPS-TP gateway pair, live | "
        "SCPS-TP, simulated (the pair's link leg, or end to end) |",
        "|---|---|---|---|---|---|",
    ]

    def secs(row: dict | None, side: str) -> str:
        x = (row or {}).get(f"{side}_completion_s", math.nan)
        return "-" if x != x else f"{x:.1f} s"

    for case in dict.fromkeys(r["case"] for r in rows):
        k = [secs(by.get((case, cc)), "kernel") for cc in CONTROLS]
        g = by.get((case, GATEWAY))
        out.append(f"| {case} | {' | '.join(k)} | {secs(g, 'kernel')} | {secs(g, 'sim')} |")
    return out


def _fmt_late(r: dict) -> str:
    p99 = r.get("emulator_p99_us", math.nan)
    if p99 != p99:
        return "-"
    return f"{p99 / 1e3:.2f} ms{' RT' if r.get('emulator_realtime') else ''}"


def _fmt_rate(bps: float) -> str:
    if bps != bps:
        return "-"
    return f"{bps / 1e6:.2f} Mb/s" if bps >= 1e6 else f"{bps / 1e3:.0f} kb/s"


def write_outputs(out: Path, rows: list[dict], runs: dict, skipped: list[str]) -> None:
    import csv

    out.mkdir(parents=True, exist_ok=True)
    cols = list(rows[0]) if rows else ["case", "cc", "reps"]
    with open(out / "linux_comparison.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    cases = {c.name: c for c in GRID}
    from spacetp.live.emulate import LATENESS_P99_BOUND_US

    lines = [
        "# Kernel TCP against the simulator's linux-* profiles",
        "",
        "Goodput from the receiver's accept to the last byte, mean (sd) over the reps; "
        "retransmitted segments, mean. Difference = simulator against kernel. Emulator p99: "
        "the worst p99 of how late the emulator wrote packets in the row's runs (RT: under "
        f"SCHED_FIFO); above {LATENESS_P99_BOUND_US / 1e3:g} ms the row measured the machine, "
        "and its difference is marked *late*, not a result.",
        "",
        "| case | cc | reps | kernel | simulator | difference | kernel retrans | sim retrans "
        "| emulator p99 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        diff = _fmt_pct(r["difference_pct"])
        if not r.get("emulator_within_bound", True):
            diff = f"{diff} *late*"
        lines.append(
            f"| {r['case']} | {r['cc']} | {r['reps']} | {_fmt_rate(r['kernel_goodput_bps'])} "
            f"({_fmt_rate(r['kernel_goodput_sd_bps'])}) | {_fmt_rate(r['sim_goodput_bps'])} "
            f"({_fmt_rate(r['sim_goodput_sd_bps'])}) | {diff} | "
            f"{_fmt_num(r['kernel_retrans'])} | {_fmt_num(r['sim_retrans'])} | "
            f"{_fmt_late(r)} |"
        )
    lines += _pep_table(rows)
    lines += ["", "Cases:", ""]
    lines += [f"- `{c.name}`: {c.what}" for c in GRID if any(r["case"] == c.name for r in rows)]
    if skipped:
        lines += ["", "Skipped:", ""] + [f"- {s}" for s in skipped]
    (out / "linux_comparison.md").write_text("\n".join(lines) + "\n")
    _figures(out, runs, cases)


def _figures(out: Path, runs: dict, cases: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for case in {k[0] for k in runs}:
        ccs = [cc for cc in CONTROLS if (case, cc) in runs]
        fig, axes = plt.subplots(1, len(ccs), figsize=(5 * len(ccs), 3.6), squeeze=False)
        for ax, cc in zip(axes[0], ccs, strict=True):
            kernel, sim = runs[(case, cc)]
            if kernel and kernel[0]["samples"]:
                k = kernel[0]["samples"]
                ax.plot([s["t"] for s in k], [s["cwnd_bytes"] / 1e3 for s in k],
                        label="kernel", lw=1.2)  # fmt: skip
            if sim and sim[0]["samples"]:
                s = sim[0]["samples"]
                ax.plot([x["t"] for x in s], [x["cwnd_bytes"] / 1e3 for x in s],
                        label=f"simulator linux-{cc}", lw=1.2, ls="--")  # fmt: skip
            ax.set_title(f"{case}: {cc}")
            ax.set_xlabel("time since connect (s)")
            ax.set_ylabel("cwnd (kB)")
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / f"cwnd-{case}.png", dpi=110)
        plt.close(fig)


def _scps_rows(
    case: Case, nbytes: int, reps: int, tmp: Path, skipped: list[str], say
) -> list[dict]:
    """The gateway pair, live, and the simulator's prediction of its SCPS-TP connection."""
    live = []
    for seed in range(1, reps + 1):
        t = time.monotonic()
        try:
            live.append(gateway_run(case, seed, nbytes, tmp))
        except (subprocess.SubprocessError, OSError, ValueError, KeyError) as e:
            skipped.append(f"{case.name} gateway rep {seed}: {e}")
            continue
        say(
            f"{case.name:12} gateway rep {seed}: live {_fmt_rate(live[-1]['goodput_bps'])}, "
            f"simulated {_fmt_rate(live[-1]['sim']['goodput_bps'])} "
            f"({time.monotonic() - t:.0f} s)"
        )
    return [summarize(case, GATEWAY, live, [g["sim"] for g in live])] if live else []


def run_grid(
    out: Path,
    quick: bool = False,
    reps: int | None = None,
    cases: list[str] | None = None,
    controls: tuple[str, ...] = CONTROLS,
    say=print,
    gateway: bool = True,
) -> list[dict]:
    """Run the grid (with `gateway`, SCPS-TP with and without the gateway pair too);
    returns the summary rows (also written to `out`)."""
    import tempfile

    reps = reps or (1 if quick else 5)
    if reps < 1:
        raise UserError(f"--reps: {reps} must be at least 1")
    names = [c.name for c in GRID]
    for c in cases or []:
        if c not in names:
            raise UserError(f"--case: {c!r} is not a case; the cases are {', '.join(names)}")
    usable, skipped = check_machine(controls)
    grid = [c for c in GRID if not cases or c.name in cases]
    rows, runs = [], {}
    from spacetp.live.signals import interrupt_on_signals

    # SIGTERM and SIGHUP stop it like Ctrl-C: every namespace and emulator is torn down.
    with interrupt_on_signals(), tempfile.TemporaryDirectory(prefix="spacetp-vs-linux-") as tmp:
        for case in grid:
            nbytes = case.quick_bytes if quick else case.nbytes
            for cc in usable:
                kernel, sim = [], []
                for seed in range(1, reps + 1):
                    t = time.monotonic()
                    try:
                        kernel.append(kernel_run(case, cc, seed, nbytes, Path(tmp)))
                    except (subprocess.SubprocessError, OSError, ValueError, KeyError) as e:
                        skipped.append(f"{case.name} kernel {cc} rep {seed}: {e}")
                        continue
                    sim.append(sim_run(case, cc, seed, nbytes, kernel[-1]["start_s"]))
                    say(
                        f"{case.name:12} {cc:6} rep {seed}: kernel "
                        f"{_fmt_rate(kernel[-1]['goodput_bps'])}, simulator "
                        f"{_fmt_rate(sim[-1]['goodput_bps'])} ({time.monotonic() - t:.0f} s)"
                    )
                if kernel:
                    rows.append(summarize(case, cc, kernel, sim))
                    runs[(case.name, cc)] = (kernel, sim)
            if gateway:
                rows += _scps_rows(case, nbytes, reps, Path(tmp), skipped, say)
    write_outputs(out, rows, runs, skipped)
    for s in skipped:
        say(f"skipped: {s}")
    return rows
