"""`spacetp testbed SCENARIO`: the whole path of a scenario's link on this machine, from one
file, with one command. A client, the link's two ground ends and a server are network
namespaces; the link between the ends is `spacetp emulate` (in real time when the machine
allows it); the ends are a `spacetp gateway` pair (SCPS-TP or QUIC across the link) or plain
routers (`--gateway none`: kernel TCP end to end). The client connects to the server's own
address, as on a real network: a gateway pair intercepts it transparently.

Each transfer sends random bytes from the client to the server with the congestion control
asked for on the client's socket (TCP_CONGESTION: per socket, whatever the host's default
or `tcp_allowed_congestion_control`), and checks the SHA-256 of what arrived. The table puts
each transfer beside what the simulator predicts for the same link and protocol (with
gateways: their protocol across the link; without: the `linux-<cc>` profile end to end),
and the emulator's own timing beside both. Every namespace and process is removed at the
end, Ctrl-C included.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from spacetp.errors import UserError
from spacetp.live.emulate import lateness, link_scenario
from spacetp.live.kernel_tcp import available_congestion_controls
from spacetp.live.signals import interrupt_on_signals
from spacetp.scenario import ScenarioError, load, toml_value

# The server's port, and the kernel TCP ends (spacetp.live.kernel_tcp) run in the namespaces.
PORT = 5000
KERNEL_TCP = [sys.executable, "-m", "spacetp.live.kernel_tcp"]
NO_GATEWAY = "none"


def slowest_link(scenario: dict) -> str | None:
    """The index (as `--link` takes it) of the scenario's slowest link, where the path's
    bottleneck is, when it has several; None with one."""
    from spacetp.units import to_si

    links = scenario.get("links") or []
    if len(links) < 2:
        return None

    def rate(lk: object) -> float:
        q = to_si(lk.get("rate")) if isinstance(lk, dict) else None
        return q[0] if q is not None else math.inf

    return str(min(range(len(links)), key=lambda i: rate(links[i])))


def link_toml(scenario: dict, link: str | None) -> tuple[str, dict]:
    """The testbed's link (one `[[links]]` table and the scenario's seed) as TOML text, and
    the scenario's first flow (its bytes and protocol are the defaults), or {}."""
    text, _, _ = link_scenario(scenario, link)
    mini = json.loads(text)
    lk = {k: v for k, v in mini["links"][0].items() if v is not None}
    body = "\n".join(f"{k} = {toml_value(v)}" for k, v in lk.items())
    flows = scenario.get("flows") or [{}]
    return f"seed = {int(mini.get('seed', 1))}\n[[links]]\n{body}\n", flows[0]


def _gateway_config(carrier: str, tcp: dict | None, quic: dict | None) -> dict | None:
    if carrier == NO_GATEWAY:
        if tcp or quic:
            raise UserError(
                "--tcp and --quic set a gateway pair's protocol: not with --gateway none"
            )
        return None
    gw: dict = {"protocol": carrier}
    if tcp:
        gw["tcp"] = tcp
    if quic:
        gw["quic"] = quic
    from spacetp.live.gateway import check_config, is_quic, make_cert

    cfg = {**gw, "local": "10.77.0.1", "peer": "10.77.0.2", "forward_original": True}
    try:
        with tempfile.TemporaryDirectory() as d:
            if is_quic(gw):  # the testbed makes the pair's certificate; checked with one
                cfg["tls_cert"], cfg["tls_key"] = map(str, make_cert(Path(d)))
            check_config(cfg)
    except ValueError as e:
        raise UserError(f"--gateway {carrier}: {e}") from None
    return gw


def _predict(link: str, gw: dict | None, cc: str, nbytes: int, seed: int) -> dict:
    """The simulator on the same link and seed: the gateways' protocol across the link, or
    the `linux-<cc>` profile end to end."""
    from spacetp.live.gateway import predict

    return predict(link, gw or {"protocol": f"linux-{cc}"}, nbytes, seed)


def _one_transfer(tb, cc: str, nbytes: int, cap: float) -> dict:
    """One connection from the client to the server's own address: what the receiver got
    (bytes, SHA-256), whether it equals what was sent, and the seconds from the client's
    connect to the server's last byte (what a user waits for: handshakes included, both
    ends on this host's clock)."""
    from spacetp.live.gateway_testbed import SRV_ADDR

    rx = tb.exec("srv", [*KERNEL_TCP, "recv", SRV_ADDR, str(PORT), str(cap)],
                 stdout=subprocess.PIPE, text=True)  # fmt: skip
    rx.stdout.readline()  # listening
    tx = tb.exec("cli", [*KERNEL_TCP, "send", SRV_ADDR, str(PORT), str(nbytes), cc, "1"],
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    got = json.loads(rx.communicate(timeout=cap + 30)[0])
    try:
        out, err = tx.communicate(timeout=30)
        sent = json.loads(out) if out.strip() else {"error": err.strip()[-300:]}
    except subprocess.TimeoutExpired:
        tx.kill()
        sent = {"error": "the sender did not finish"}
    seconds = got["accept_wall"] + got["seconds"] - sent.get("start_wall", math.nan)
    return {
        "bytes": got["bytes"],
        "seconds": seconds,
        "goodput_bps": got["bytes"] * 8 / seconds if seconds > 0 else math.nan,
        "sha256_equal": got["bytes"] == nbytes and got.get("sha256") == sent.get("sha256"),
        "sender_error": sent.get("error"),
    }


def run_testbed(
    scenario_path: Path,
    link: str | None = None,
    gateway: str | None = None,
    cc: str = "cubic",
    nbytes: int | None = None,
    transfers: int = 3,
    cap: float | None = None,
    tcp: dict | None = None,
    quic: dict | None = None,
    say=print,
) -> dict:
    """Bring the path up, run `transfers` transfers of `nbytes`, tear it down; the results
    (also what `spacetp testbed --json` writes)."""
    from spacetp.live.gateway_testbed import Testbed

    if transfers < 1:
        raise UserError(f"--transfers {transfers}: must be at least 1")
    try:
        sc = load(scenario_path)
        if link is None and (link := slowest_link(sc)) is not None:
            ends = "-".join(sc["links"][int(link)].get("between", []))
            say(f"testbed: emulating links[{link}] {ends}, the slowest of the scenario's "
                f"{len(sc['links'])} (--link picks another)")  # fmt: skip
        toml, flow = link_toml(sc, link)
    except ScenarioError as e:
        raise UserError(str(e)) from None
    carrier = gateway or (flow.get("protocol") if _is_carrier(flow.get("protocol")) else "")
    carrier = carrier or "scps-tp"
    nbytes = int(nbytes or _size(flow.get("bytes")) or 1_000_000)
    if nbytes < 1:
        raise UserError(f"--bytes {nbytes}: must be at least 1")
    gw = _gateway_config(carrier, tcp, quic)
    if os.geteuid() != 0:
        raise UserError("spacetp testbed needs root (network namespaces, TUN devices, nftables)")
    have = available_congestion_controls()
    if cc not in have:
        raise UserError(
            f"--cc {cc}: this kernel offers {' '.join(have) or 'none'} "
            f"(tcp_available_congestion_control); `modprobe tcp_{cc}` adds it"
        )
    seed = int(tomllib.loads(toml)["seed"])
    pred = _predict(toml, gw, cc, nbytes, seed)
    cap = cap or max(60.0, 4 * (pred.get("completion_s") or 0.0) + 30.0)
    say(f"testbed: client -> {'routers' if gw is None else carrier + ' gateway pair'} over the "
        f"emulated link -> server; {transfers} x {nbytes:,} bytes, kernel {cc} on the client's "
        f"socket")  # fmt: skip
    runs = []
    with interrupt_on_signals(), tempfile.TemporaryDirectory(prefix="spacetp-testbed-") as tmp:
        with Testbed(toml, gateway=gw, transparent=True, tag=f"{os.getpid() % 100000}t",
                     workdir=Path(tmp)) as tb:  # fmt: skip
            for i in range(1, transfers + 1):
                t = time.monotonic()
                r = _one_transfer(tb, cc, nbytes, cap)
                runs.append(r)
                ok = "SHA-256 equal" if r["sha256_equal"] else "NOT EQUAL"
                say(f"transfer {i}: {r['bytes']:,} B in {r['seconds']:.2f} s, "
                    f"{_rate(r['goodput_bps'])}, {ok} ({time.monotonic() - t:.0f} s)")  # fmt: skip
            reps = tb.reports()
    return _result(carrier, cc, nbytes, runs, pred, reps)


def _size(v: object) -> float | None:
    """A flow's `bytes` (a number, or a size such as "5 MB") in bytes."""
    from spacetp.units import to_si

    q = to_si(v) if v is not None else None
    return q[0] if q is not None else None


def _is_carrier(p: object) -> bool:
    """Whether a flow's protocol names what a gateway pair can carry: SCPS-TP or QUIC."""
    return isinstance(p, str) and (p.startswith("scps") or p.startswith("quic"))


def _result(carrier: str, cc: str, nbytes: int, runs: list, pred: dict, reps: dict) -> dict:
    """The figures of a testbed run. Times are from the client's connect (the simulated
    flow's start) to the server's last byte; goodput is the bytes over that time."""
    done = [r["seconds"] for r in runs if r["sha256_equal"] and r["seconds"] == r["seconds"]]
    live = statistics.fmean(done) if done else math.nan
    sim = pred.get("completion_s") or math.nan
    return {
        "gateway": carrier,
        "cc": cc,
        "bytes": nbytes,
        "transfers": runs,
        "all_equal": all(r["sha256_equal"] for r in runs),
        "live_seconds": live,
        "live_goodput_bps": nbytes * 8 / live if live > 0 else math.nan,
        "simulated_seconds": sim,
        "simulated_goodput_bps": nbytes * 8 / sim if sim > 0 else math.nan,
        "difference_pct": (sim - live) / live * 100 if live == live and live > 0 else math.nan,
        "emulator": lateness(reps.get("emulator", {})),
        "gateways": {k: reps[k] for k in ("gateway_a", "gateway_b") if k in reps},
    }


def _secs(s: float) -> str:
    return "-" if s != s else f"{s:.2f} s"


def _rate(bps: float) -> str:
    if bps != bps:
        return "-"
    return f"{bps / 1e6:.3g} Mb/s" if bps >= 1e6 else f"{bps / 1e3:.3g} kb/s"


def table(res: dict) -> list[tuple[str, str]]:
    """The summary `spacetp testbed` prints: (what, value) rows."""
    e = res["emulator"]
    late = f"p99 {e['p99_us'] / 1e3:.2f} ms, max {e['max_us'] / 1e3:.2f} ms"
    late += ", real time" if e["realtime"] else ", not real time (SCHED_FIFO refused)"
    if not e["within_bound"]:
        late += ": above the 0.5 ms bound, the live figures measured the machine"
    n = len(res["transfers"])
    equal = sum(r["sha256_equal"] for r in res["transfers"])
    via = "kernel TCP end to end" if res["gateway"] == NO_GATEWAY else f"{res['gateway']} pair"
    rows_note = []
    if res["gateway"].startswith("quic"):
        rows_note = [("note", "the live pair's QUIC tunnel was up before the transfers; the "
                      "simulated flow includes QUIC's handshake (one round trip)")]  # fmt: skip
    sim_what = f"linux-{res['cc']}" if res["gateway"] == NO_GATEWAY else res["gateway"]
    return [
        ("path", f"client -> {via} -> server, kernel {res['cc']} at the client"),
        ("transfers", f"{n} x {res['bytes']:,} B, SHA-256 equal in {equal} of {n}"),
        ("live (mean)", f"{_secs(res['live_seconds'])}, {_rate(res['live_goodput_bps'])}"),
        (
            f"simulator ({sim_what})",
            f"{_secs(res['simulated_seconds'])}, {_rate(res['simulated_goodput_bps'])}",
        ),
        (
            "simulator against live (time)",
            "-"
            if res["difference_pct"] != res["difference_pct"]
            else f"{res['difference_pct']:+.1f}%",
        ),  # fmt: skip
        ("emulator lateness", late),
        *rows_note,
    ]
