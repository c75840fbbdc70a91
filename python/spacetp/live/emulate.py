"""`spacetp emulate`: real packets through a `[[links]]` link, in real time.

Python sets up and tears down the plumbing (network namespaces, TUN devices, addresses); the
packet path is Rust (`spacetp._core.emulate`, crate `spacetp-live`), which runs the
simulator's own link and channel code against the wall clock.

    ns A (end between[0])                                   ns B (end between[1])
    10.77.0.1 dev space0 == TUN fd ==> emulator ==> TUN fd == space0 10.77.0.2
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import struct
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from spacetp.errors import SpacetpError
from spacetp.live.signals import interrupt_on_signals, interrupts_held
from spacetp.scenario import ScenarioError, load

PREFIX = "stp-"
ADDR_A = "10.77.0.1"
ADDR_B = "10.77.0.2"
DEVICE = "space0"

_TUNSETIFF = 0x400454CA
_IFF_TUN = 0x0001
_IFF_NO_PI = 0x1000


class EmulateError(SpacetpError):
    """The machine cannot do it (not root, no /dev/net/tun, `ip` failed)."""


# ----- the link --------------------------------------------------------------------------


def _pick_link(sc: dict, link: str | None) -> tuple[int, dict]:
    links = sc.get("links")
    if not isinstance(links, list) or not links:
        raise ScenarioError("links: the file needs a [[links]] entry to emulate")
    if link is None:
        if len(links) != 1:
            raise ScenarioError(
                f"links: the file has {len(links)} links; choose one with --link "
                "(its index from 0, or its ends as A-B)"
            )
        return 0, links[0]
    if link.isdigit():
        i = int(link)
        if i >= len(links):
            raise ScenarioError(f"--link {link}: there are only {len(links)} links")
        return i, links[i]
    for i, lk in enumerate(links):
        between = lk.get("between") if isinstance(lk, dict) else None
        if isinstance(between, list) and "-".join(map(str, between)) == link:
            return i, lk
    raise ScenarioError(f"--link {link}: no link between those ends (write A-B or an index)")


def link_scenario(sc: dict, link: str | None = None) -> tuple[str, int, dict]:
    """The one-link scenario (JSON text) the emulator runs, the link's index in `sc`, and the
    emulator's description of its two directions. Errors name the field as the simulator
    does (`links[2].rate_back: ...`)."""
    from spacetp import _core
    from spacetp.linksrc import resolve

    sc = resolve(sc)  # orbits, ephemerides and traces as schedules, as the simulator gets them
    i, lk = _pick_link(sc, link)
    if not isinstance(lk, dict):
        raise ScenarioError(f"links[{i}]: must be a table")
    between = lk.get("between")
    if not (
        isinstance(between, list) and len(between) == 2 and all(isinstance(x, str) for x in between)
    ):
        raise ScenarioError(f'links[{i}].between: give the two ends, e.g. ["ground", "craft"]')
    mini = {
        "seed": sc.get("seed", 1),
        "nodes": [{"name": between[0]}, {"name": between[1]}],
        "links": [lk],
    }
    text = json.dumps(mini)
    try:
        desc = json.loads(_core.emulate_check(text))
    except ValueError as e:
        msg = str(e).replace("links[0]", f"links[{i}]", 1)
        raise ScenarioError(msg) from None
    return text, i, desc


def load_link(path: str | Path, link: str | None = None) -> tuple[str, int, dict]:
    """Read LINK.toml (one `[[links]]` entry, or a scenario and `link` to choose one)."""
    sc = load(path)
    try:
        return link_scenario(sc, link)
    except ScenarioError as e:
        raise ScenarioError(f"{path}: {e}") from None


# ----- plumbing --------------------------------------------------------------------------


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise EmulateError(f"ip {' '.join(args)}: {r.stderr.strip() or r.returncode}")
    return r


def check_machine() -> None:
    """Raise EmulateError saying what is missing to emulate with namespaces."""
    if os.geteuid() != 0:
        raise EmulateError("spacetp emulate --netns needs root (network namespaces, TUN devices)")
    if not os.path.exists("/dev/net/tun"):
        raise EmulateError("/dev/net/tun does not exist (modprobe tun?)")
    try:
        subprocess.run(["ip", "-V"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise EmulateError("the `ip` command (iproute2) is needed") from None


def open_tun(name: str) -> int:
    """Create (or attach to) TUN device `name` without packet information; returns its fd.
    The device disappears when the fd is closed (unless made persistent elsewhere)."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH", name.encode(), _IFF_TUN | _IFF_NO_PI))
    except OSError as e:
        os.close(fd)
        raise EmulateError(f"cannot create TUN device {name}: {e}") from None
    return fd


def ns_sysctl(ns: str, *settings: str) -> None:
    """Set sysctls (`key=value`) inside namespace `ns`; failures are ignored."""
    for kv in settings:
        subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", kv], capture_output=True)


def tun_in_namespace(ns: str, tmp: str, name: str, addr: str, peer: str, mtu: int) -> int:
    """A TUN device created in the root namespace as `tmp`, moved into `ns` and renamed
    `name`, addressed point-to-point (`addr` <-> `peer`) and up; returns its fd."""
    fd = open_tun(tmp)
    try:
        _ip("link", "set", "dev", tmp, "netns", ns)
        _ip("-n", ns, "link", "set", "dev", tmp, "name", name)
        _ip("-n", ns, "link", "set", "dev", name, "mtu", str(mtu))
        _ip("-n", ns, "addr", "add", addr, "peer", f"{peer}/32", "dev", name)
        _ip("-n", ns, "link", "set", "dev", name, "up")
    except BaseException:
        os.close(fd)
        raise
    return fd


def add_namespace(ns: str, created: list[str]) -> None:
    """Create namespace `ns` and list it in `created`, for the teardown to delete. Signals are
    held meanwhile: a Ctrl-C that came while `ip netns add` ran unwound the caller after the
    namespace existed but before it was listed, and the teardown left it behind (seen in CI)."""
    with interrupts_held():
        _ip("netns", "add", ns)
        created.append(ns)


def namespaces() -> list[str]:
    r = _ip("netns", "list", check=False)
    return [ln.split()[0] for ln in r.stdout.splitlines() if ln.strip()]


def _ns_pids(ns: str) -> list[int]:
    r = _ip("netns", "pids", ns, check=False)
    return [int(x) for x in r.stdout.split() if x.isdigit()]


def _kill_inside(ns: str) -> None:
    """End the processes still running inside namespace `ns` (TERM, then KILL)."""
    pids = _ns_pids(ns)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, sig)
        deadline = time.monotonic() + 1.0
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if os.path.exists(f"/proc/{p}")]
            if pids:
                time.sleep(0.02)
        if not pids:
            return


def delete_namespace(ns: str) -> None:
    _kill_inside(ns)
    _ip("netns", "del", ns, check=False)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale() -> list[str]:
    """Delete `stp-<pid>-*` namespaces whose emulator is gone (killed with SIGKILL).

    A dead pid alone is not proof: an emulator started from another PID namespace has a pid
    this one cannot see. Its TUN device is: a TUN device lives only as long as the fd of
    the emulator that opened it, so a namespace that still has `space0` is in use."""
    gone = []
    for ns in namespaces():
        parts = ns.split("-")
        if len(parts) == 3 and ns.startswith(PREFIX) and parts[1].isdigit():
            in_use = _ip("-n", ns, "link", "show", DEVICE, check=False).returncode == 0
            if not in_use and not _pid_alive(int(parts[1])):
                delete_namespace(ns)
                gone.append(ns)
    return gone


class TornDown:
    """A context manager that builds with `_setup` and always undoes with `close`: leaving it
    normally, by exception, or by a failure half-way through `_setup`. Subclasses define
    both; `close` must undo any part of `_setup`."""

    def __enter__(self):
        try:
            self._setup()  # type: ignore[attr-defined]
        except BaseException:
            self.close()  # type: ignore[attr-defined]
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()  # type: ignore[attr-defined]


@dataclass
class Netns(TornDown):
    """Two namespaces, each with a TUN device `space0` addressed point-to-point, whose fds
    the emulator joins. A context manager: leaving it (normally, by exception or by signal)
    deletes the namespaces, ends processes left in them and closes the TUN fds."""

    mtu: int = 1500
    tag: str = field(default_factory=lambda: str(os.getpid()))
    ns_a: str = ""
    ns_b: str = ""
    fd_a: int = -1
    fd_b: int = -1
    created: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ns_a = f"{PREFIX}{self.tag}-a"
        self.ns_b = f"{PREFIX}{self.tag}-b"

    def _setup(self) -> None:
        for ns, addr, peer, end in (
            (self.ns_a, ADDR_A, ADDR_B, "a"),
            (self.ns_b, ADDR_B, ADDR_A, "b"),
        ):
            add_namespace(ns, self.created)
            # IPv6 off inside: no router solicitations or DAD mixed into the measured traffic.
            ns_sysctl(ns, "net.ipv6.conf.all.disable_ipv6=1")
            fd = tun_in_namespace(ns, f"stp{self.tag[-9:]}{end}", DEVICE, addr, peer, self.mtu)
            if end == "a":
                self.fd_a = fd
            else:
                self.fd_b = fd
            _ip("-n", ns, "link", "set", "dev", "lo", "up")

    def close(self) -> None:
        for fd in (self.fd_a, self.fd_b):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.fd_a = self.fd_b = -1
        for ns in self.created:
            delete_namespace(ns)
        self.created = []


def run(
    scenario_json: str,
    fd_a: int,
    fd_b: int,
    duration: float | None = None,
    realtime: bool = False,
    notify: list[int] | None = None,
    notify_udp: tuple[int, str, str] | None = None,
) -> dict:
    """Emulate between two packet fds until `duration` (s) or a signal; the report.
    Outage starts and ends are announced (b"link down", b"link up") on datagram fds
    `notify`, as a ground station tells SCPS-TP, and with `notify_udp` = (port, address of
    end a, address of end b) as UDP datagrams on the link to that port of each end."""
    from spacetp import _core

    try:
        raw = _core.emulate(scenario_json, fd_a, fd_b, duration, realtime, notify or [], notify_udp)
    except _core.SystemRefused as e:
        raise EmulateError(str(e)) from None
    return json.loads(raw)


# The emulator's timing promise (docs/live.md, docs/linux_comparison.md): the p99 of how
# late it writes packets against the model's due times, under SCHED_FIFO. A live comparison
# whose emulator was later than this measured the machine, not the protocol.
LATENESS_P99_BOUND_US = 500.0


def lateness(report: dict) -> dict:
    """How late an emulator run wrote its packets, for a comparison's report: whether it ran
    under SCHED_FIFO, the worst direction's p99 and max (us), and whether the p99 is within
    `LATENESS_P99_BOUND_US`. A report with no packets is within it."""
    dirs = [d.get("lateness") or {} for d in report.get("directions") or []]
    dirs = [d for d in dirs if d.get("count")]
    p99 = max((d["p99_us"] for d in dirs), default=0.0)
    return {
        "realtime": bool(report.get("realtime")),
        "p99_us": p99,
        "max_us": max((d["max_us"] for d in dirs), default=0.0),
        "within_bound": p99 <= LATENESS_P99_BOUND_US,
    }


def emulate_netns(
    scenario_json: str,
    desc: dict,
    duration: float | None = None,
    realtime: bool = False,
    say=print,
    link_state_port: int | None = None,
) -> dict:
    """Create the namespaces, emulate until `duration` or Ctrl-C/SIGTERM, tear down. With
    `link_state_port`, each outage start and end is announced to that UDP port of both
    namespaces' addresses (`spacetp gateway --link-state-udp ADDRESS:PORT` listens)."""
    check_machine()
    remove_stale()
    mtu = min(int(d["mtu"]) for d in desc["directions"])
    mtu = 1500 if mtu >= 65535 else mtu
    with interrupt_on_signals(), Netns(mtu=mtu) as n:
        fwd, back = desc["directions"]
        say(f"namespaces {n.ns_a} ({ADDR_A}) and {n.ns_b} ({ADDR_B}), device {DEVICE} in each")
        say(f"  {fwd['name']}: {ADDR_A} -> {ADDR_B};  {back['name']}: {ADDR_B} -> {ADDR_A}")
        say("run programs in them, e.g.:")
        say(f"  ip netns exec {n.ns_b} python3 -m http.server 8000")
        say(f"  ip netns exec {n.ns_a} curl -o /dev/null http://{ADDR_B}:8000/")
        notify_udp = None
        if link_state_port is not None:
            notify_udp = (link_state_port, ADDR_A, ADDR_B)
            say(
                f"link-state notices: UDP 'link down' / 'link up' to {ADDR_A}:{link_state_port}"
                f" and {ADDR_B}:{link_state_port}"
            )
        until = f"for {duration:g} s" if duration is not None else "until Ctrl-C"
        say(f"emulating {until}; Ctrl-C removes the namespaces and what runs in them")
        report = run(scenario_json, n.fd_a, n.fd_b, duration, realtime, None, notify_udp)
        report["namespaces"] = [n.ns_a, n.ns_b]
        report["addresses"] = [ADDR_A, ADDR_B]
    return report
