"""The gateway's test bed (`spacetp.live.gateway` is the gateway itself): `Testbed` builds
the whole path for tests and benchmarks, every piece in namespaces it creates and removes:

    ns cli 10.78.1.1 --veth-- 10.78.1.2 ns gwa [gateway A] == socketpair ==> emulator
    emulator ==> socketpair == [gateway B] ns gwb 10.78.2.1 --veth-- 10.78.2.2 ns srv

With `transparent=True` it is a routed network instead, as on a real ground station: the
client connects to the server's own address, gateway A intercepts the connection (nftables
tproxy), and the SCPS-TP packets are real IPv4 protocol-6 packets that the kernels of gwa and
gwb route through TUN devices `space0` joined by the emulator:

    cli --veth-- gwa: lan -> tproxy -> [gateway A] -> scps0 (TUN) -> routing -> space0 (TUN)
    == emulator == gwb: space0 -> rule `iif space0 ipproto tcp` -> scps0 -> [gateway B]
    -> kernel TCP from 10.78.2.1 --veth-- srv 10.78.2.2

With `ipv6=True` the four namespaces have IPv6 as well (dual stack): ULA addresses beside the
IPv4 ones, cli fd01::1 -- fd01::2 gwa, space0 fd02::1 -- fd02::2, gwb fd03::1 -- fd03::2 srv,
and the same routes; in routed mode the gateways then intercept and relay IPv6 TCP too.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from spacetp.live.emulate import (
    EmulateError,
    TornDown,
    _ip,
    add_namespace,
    check_machine,
    delete_namespace,
    load_link,
    ns_sysctl,
    tun_in_namespace,
)
from spacetp.live.gateway import _one_way_s, check_config, is_quic, make_cert, run
from spacetp.live.gateway_config import INTERCEPT_PORT
from spacetp.live.signals import interrupts_held

# Not `stp-`: `spacetp emulate` deletes `stp-<pid>-*` namespaces it finds stale (dead pid and
# no TUN device), and a testbed's namespaces have no TUN device.
PREFIX = "stg-"

CLI_ADDR, GWA_ADDR = "10.78.1.1", "10.78.1.2"
GWB_ADDR, SRV_ADDR = "10.78.2.1", "10.78.2.2"
# The gateways' addresses on the space link (inside the SCPS-TP packets).
LINK_A, LINK_B = "10.77.0.1", "10.77.0.2"
# The same places' IPv6 addresses (`Testbed(ipv6=True)`), each in a /64.
CLI6, GWA6, GWB6, SRV6 = "fd01::1", "fd01::2", "fd03::1", "fd03::2"
LINK_A6, LINK_B6 = "fd02::1", "fd02::2"


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _exe() -> list[str]:
    return [sys.executable, "-m", "spacetp.live.gateway_testbed"]


@contextlib.contextmanager
def emulator_child(link_json: Path, fa: int, fb: int, report: Path):
    """The emulator of `link_json` (its JSON) between fds `fa` and `fb`, in a child process
    for the block, stopped (SIGTERM) as it ends; it writes its report to `report`. Started
    with Ctrl-C held: a Ctrl-C during the start is raised after it, inside the `try` whose
    `finally` stops the child."""
    emu = None
    try:
        with interrupts_held():
            emu = subprocess.Popen(
                [*_exe(), "--emulate", str(link_json), str(fa), str(fb), str(report)],
                pass_fds=(fa, fb),
            )
        yield emu
    finally:
        if emu is not None:
            emu.send_signal(signal.SIGTERM)
            emu.wait(timeout=10)


@dataclass
class Testbed(TornDown):
    """client | gateway A | emulated link | gateway B | server, in four namespaces
    `stg-<tag>-{cli,gwa,gwb,srv}`. A context manager: leaving it ends every process started in
    the namespaces and deletes them (their veth pairs go with them)."""

    link_toml: str
    # The gateway pair's configuration; None (routed testbed only): no gateways, gwa and gwb
    # are plain routers and kernel TCP runs end to end across the emulated link.
    gateway: dict | None = field(default_factory=lambda: {"protocol": "scps-tp"})
    port: int = 5000
    transparent: bool = False
    # IPv6 in every namespace beside IPv4 (addresses and routes above); off, IPv6 is disabled.
    ipv6: bool = False
    # The emulator tells both gateways when an outage starts and ends (persist mode).
    link_state: bool = True
    # How long a gateway told to stop lets open connections finish (`--drain`): the last
    # FIN exchanges after the applications are done, so that the reports count every
    # connection that ended normally as closed. None: a stop resets every connection.
    drain: float | None = 10.0
    # Run the gateways as this user (e.g. "nobody") with only CAP_NET_ADMIN and CAP_NET_RAW
    # (setpriv), as the systemd unit does; None: as root.
    run_as: str | None = None
    # Each gateway's connection log (JSON lines, one per event, as `--log json` writes) to
    # `log_path(role)`, kept after teardown; False: no log.
    log: bool = False
    own_dir: Path | None = None
    tag: str = field(default_factory=lambda: str(os.getpid()))
    workdir: Path = field(default_factory=lambda: Path("/tmp"))
    created: list[str] = field(default_factory=list)
    procs: list[subprocess.Popen] = field(default_factory=list)
    # Of `procs`: the emulator and the gateways (A, B), once started.
    emulator: subprocess.Popen | None = None
    gateways: list[subprocess.Popen] = field(default_factory=list)
    # Where the gateways write their reports (A, B).
    gw_stats: list[Path] = field(default_factory=list)

    def ns(self, role: str) -> str:
        return f"{PREFIX}{self.tag}-{role}"

    @property
    def target(self) -> tuple[str, int]:
        """Where the client connects: gateway A's port, or the server itself (transparent)."""
        return (SRV_ADDR if self.transparent else GWA_ADDR), self.port

    def _veth(self, left: str, right: str) -> tuple[str, str]:
        t = self.tag[-8:]
        return f"sg{t}{left[0]}{right[2]}", f"sg{t}{right[2]}{left[0]}"

    def _tls(self) -> dict:
        """A QUIC pair's certificate and key (made once per testbed), as settings."""
        if not is_quic(self.gateway or {}):
            return {}
        c, k = self.workdir / f"gw-{self.tag}-cert.pem", self.workdir / f"gw-{self.tag}-key.pem"
        if not c.exists():
            made = make_cert(self.workdir / f"gw-{self.tag}-tls")
            made[0].replace(c)
            made[1].replace(k)
            made[0].parent.rmdir()
        return {"tls_cert": str(c), "tls_key": str(k)}

    def _setup(self) -> None:
        check_machine()
        for role in ("cli", "gwa", "gwb", "srv"):
            ns = self.ns(role)
            add_namespace(ns, self.created)
            off = "0" if self.ipv6 else "1"
            ns_sysctl(ns, f"net.ipv6.conf.all.disable_ipv6={off}",
                      f"net.ipv6.conf.default.disable_ipv6={off}")  # fmt: skip
            if role in ("gwa", "gwb"):
                # Routers by their own configuration, as a real ground station's gateway host:
                # a gateway that stops restores what it found, and leaves a working router.
                ns_sysctl(ns, "net.ipv4.ip_forward=1")
                if self.ipv6:
                    ns_sysctl(ns, "net.ipv6.conf.all.forwarding=1")
            _ip("-n", ns, "link", "set", "dev", "lo", "up")
        for left, right, la, ra, la6, ra6 in (
            ("cli", "gwa", CLI_ADDR, GWA_ADDR, CLI6, GWA6),
            ("gwb", "srv", GWB_ADDR, SRV_ADDR, GWB6, SRV6),
        ):
            a, b = self._veth(left, right)
            _ip(
                "link", "add", a, "netns", self.ns(left),
                "type", "veth", "peer", "name", b, "netns", self.ns(right),
            )  # fmt: skip
            _ip("-n", self.ns(left), "addr", "add", f"{la}/24", "dev", a)
            _ip("-n", self.ns(right), "addr", "add", f"{ra}/24", "dev", b)
            if self.ipv6:
                # nodad: usable at once (duplicate detection would hold them ~2 s).
                _ip("-n", self.ns(left), "-6", "addr", "add", f"{la6}/64", "dev", a, "nodad")
                _ip("-n", self.ns(right), "-6", "addr", "add", f"{ra6}/64", "dev", b, "nodad")
            _ip("-n", self.ns(left), "link", "set", "dev", a, "up")
            _ip("-n", self.ns(right), "link", "set", "dev", b, "up")
        if self.gateway is None and not self.transparent:
            raise EmulateError("a testbed without gateways is a routed one (transparent=True)")
        if self.transparent:
            self._setup_routed()
        else:
            self._setup_sockets()
        if self.gateway is None:
            return
        self._wait_listening(self._a_port)
        if is_quic(self.gateway):
            # A pair's tunnel is up long before traffic on a real link: let the handshake
            # (one round trip, two if the certificate exceeds the amplification limit) end
            # before the first connection, so it is not counted against the transfer.
            time.sleep(4 * _one_way_s(self.link_toml) + 0.5)

    def _emulate(self, fa: int, fb: int) -> list[int]:
        """Start the emulator between fds `fa` and `fb`; the gateways' ends of its link-state
        socket pairs (the caller passes them on and closes them), if `link_state`."""
        toml = self.workdir / f"gw-{self.tag}-link.toml"
        toml.write_text(self.link_toml)
        link = self.workdir / f"gw-{self.tag}-link.json"
        link.write_text(load_link(toml)[0])
        self.emu_stats = self.workdir / f"gw-{self.tag}-emu.json"
        pairs = [
            socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(2 * self.link_state)
        ]
        notify = [p[0].fileno() for p in pairs]
        args = ["--emulate", str(link), str(fa), str(fb), str(self.emu_stats), *map(str, notify)]
        self._spawn(None, [*_exe(), *args], (fa, fb, *notify))
        self.emulator = self.procs[-1]
        for p in pairs:
            p[0].close()
        return [p[1].detach() for p in pairs]

    def _setup_routed(self) -> None:
        """TUN `space0` in gwa and gwb joined by the emulator; each gateway a `spacetp
        gateway --tun scps0` process that sets up its own routing and interception."""
        fds = []
        try:
            for role, addr, peer, far, addr6, far6 in (
                ("gwa", LINK_A, LINK_B, "10.78.2.0/24", LINK_A6, "fd03::/64"),
                ("gwb", LINK_B, LINK_A, "10.78.1.0/24", LINK_B6, "fd01::/64"),
            ):
                ns, tmp = self.ns(role), f"sg{self.tag[-8:]}{role[2]}s"
                fds.append(tun_in_namespace(ns, tmp, "space0", addr, peer, 1500))
                _ip("-n", ns, "route", "add", far, "dev", "space0")
                if self.ipv6:
                    _ip("-n", ns, "-6", "addr", "add", f"{addr6}/64", "dev", "space0", "nodad")
                    _ip("-n", ns, "-6", "route", "add", far6, "dev", "space0")
            _ip("-n", self.ns("cli"), "route", "add", "default", "via", GWA_ADDR)
            _ip("-n", self.ns("srv"), "route", "add", "default", "via", GWB_ADDR)
            if self.ipv6:
                _ip("-n", self.ns("cli"), "-6", "route", "add", "default", "via", GWA6)
                _ip("-n", self.ns("srv"), "-6", "route", "add", "default", "via", GWB6)
            notice = self._emulate(*fds)
        finally:
            for fd in fds:
                os.close(fd)
        try:
            if self.gateway is not None:
                self._start_routed_gateways(notice)
        finally:
            for fd in notice:
                os.close(fd)

    def _start_routed_gateways(self, notice: list[int]) -> None:
        common = ["--protocol", self.gateway.get("protocol", "scps-tp")]
        if self.drain is not None:
            common += ["--drain", str(self.drain)]
        for key in ("tcp", "quic"):
            if key in self.gateway:
                common += [f"--{key}", json.dumps(self.gateway[key])]
        quic = is_quic(self.gateway)
        if quic:
            tls = self._tls()
            common += ["--tls-cert", tls["tls_cert"], "--tls-key", tls["tls_key"]]
        lan = self._veth("cli", "gwa")[1]
        self.gw_stats = []
        for i, (role, args) in enumerate(
            (
                ("gwa", ["--intercept", lan, "--intercept-port", str(self._a_port)]
                 + (["--local", LINK_A, "--peer", LINK_B] if quic else [])),
                ("gwb", ["--forward-original"] + (["--local", LINK_B] if quic else [])),
            )
        ):  # fmt: skip
            where = self.workdir if self.run_as is None else self._own_dir()
            f = where / f"gw-{self.tag}-{role}.json"
            self.gw_stats.append(f)
            cmd = [*self._privileges(), sys.executable, "-m", "spacetp.cli", "gateway"]
            # QUIC rides the kernel's UDP across space0; SCPS-TP needs the TUN.
            cmd += [] if quic else ["--tun", "scps0", "--space-if", "space0"]
            cmd += [*common, *args, "--stats", str(f)]
            fds = tuple(notice[i : i + 1])
            cmd += [x for fd in fds for x in ("--link-state-fd", str(fd))]
            if self.log:
                cmd += ["--log", "json"]
            # Its stderr (readiness line, log, errors) to a file of the testbed, not the
            # terminal of whoever runs it.
            where = self.log_path(role) if self.log else self.workdir / f"gw-{self.tag}-{role}.err"
            with open(where, "w") as log:  # the child holds its own copy
                self._spawn(self.ns(role), cmd, fds, stdout=subprocess.DEVNULL, stderr=log)
            self.gateways.append(self.procs[-1])

    def log_path(self, role: str) -> Path:
        """Where gateway `role` ("gwa", "gwb") writes its connection log (with `log`)."""
        return self.workdir / f"log-{self.tag}-{role}.jsonl"

    def _own_dir(self) -> Path:
        """A directory of the unprivileged gateways (under /tmp: the workdir's parents may
        be closed to them)."""
        if self.own_dir is None:
            import tempfile

            self.own_dir = Path(tempfile.mkdtemp(prefix=f"spacetp-gw-{self.tag}-"))
            self.own_dir.chmod(0o755)
        return self.own_dir

    def _privileges(self) -> list[str]:
        """The gateway command's prefix: nothing (root), or setpriv to `run_as` with the two
        capabilities only, writing its state to a directory of the testbed it owns."""
        if self.run_as is None:
            return []
        from spacetp.live.unprivileged import command_prefix

        return command_prefix(self.run_as, self._own_dir())

    @property
    def _a_port(self) -> int:
        """Where gateway A accepts: its explicit port, or the transparent socket's."""
        return INTERCEPT_PORT if self.transparent else self.port

    def _setup_sockets(self) -> None:
        """The link: gateway A's fd <-> emulator <-> gateway B's fd (datagram socket pairs)."""
        ga, ea = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        gb, eb = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        for s in (ga, ea, gb, eb):
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        notice: list[int] = []
        try:
            notice = self._emulate(ea.fileno(), eb.fileno())
            common = {**self.gateway, **self._tls()}
            if self.drain is not None:
                common.setdefault("drain_s", self.drain)
            a = {
                **common,
                "local": LINK_A,
                "peer": LINK_B,
                "listen": [[f"{GWA_ADDR}:{self.port}", self.port]],
            }
            b = {
                **common,
                "local": LINK_B,
                "peer": LINK_A,
                "forward": [[self.port, f"{SRV_ADDR}:{self.port}"]],
            }
            self.gw_stats = []
            for i, (role, cfg, s) in enumerate((("gwa", a, ga), ("gwb", b, gb))):
                check_config(cfg)
                f = self.workdir / f"gw-{self.tag}-{role}.json"
                self.gw_stats.append(f)
                ls = notice[i : i + 1]
                log = str(self.log_path(role)) if self.log else "-"
                self._spawn(
                    self.ns(role),
                    [*_exe(), "--gateway", json.dumps(cfg), str(s.fileno()), str(f), log,
                     *map(str, ls)],
                    (s.fileno(), *ls),
                )  # fmt: skip
                self.gateways.append(self.procs[-1])
        finally:
            for s in (ga, ea, gb, eb):
                s.close()
            for fd in notice:
                os.close(fd)

    def _wait_listening(self, port: int) -> None:
        """Gateway A listens once its process runs (and gateway B has its TUN, if routed)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            r = subprocess.run(
                ["ip", "netns", "exec", self.ns("gwa"), "ss", "-Hltn", f"sport = :{port}"],
                capture_output=True,
                text=True,
            )
            b_ready = not self.transparent or self._b_ready()
            if r.stdout.strip() and b_ready:
                return
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.05)
        raise EmulateError(f"the gateways did not start{self._gateway_errors()}")

    def _gateway_errors(self) -> str:
        """The last lines the gateways wrote to stderr, for an error saying they failed."""
        tails = []
        for role in ("gwa", "gwb"):
            f = self.log_path(role) if self.log else self.workdir / f"gw-{self.tag}-{role}.err"
            with contextlib.suppress(OSError):
                lines = f.read_text(errors="replace").strip().splitlines()
                if lines:
                    tails.append(f"{role}: " + " | ".join(lines[-3:]))
        return (": " + "; ".join(tails)) if tails else ""

    def _b_ready(self) -> bool:
        """Gateway B (routed testbed) is up: its TUN exists, or its QUIC socket is bound."""
        if is_quic(self.gateway):
            r = subprocess.run(
                ["ip", "netns", "exec", self.ns("gwb"), "ss", "-Hlun", "sport = :4433"],
                capture_output=True,
                text=True,
            )
            return bool(r.stdout.strip())
        return _ip("-n", self.ns("gwb"), "link", "show", "scps0", check=False).returncode == 0

    def _spawn(self, ns: str | None, cmd: list[str], fds: tuple[int, ...], **kw) -> None:
        """Start `cmd` (in namespace `ns`, or here) with inherited `fds`."""
        if ns is not None:
            cmd = ["ip", "netns", "exec", ns, *cmd]
        with interrupts_held():  # in `procs`, for the teardown, before a signal unwinds us
            self.procs.append(subprocess.Popen(cmd, pass_fds=fds, **kw))

    def exec(self, role: str, cmd: list[str], **kw) -> subprocess.Popen:
        """Start `cmd` in namespace `role` (ended at teardown if still running)."""
        with interrupts_held():
            p = subprocess.Popen(["ip", "netns", "exec", self.ns(role), *cmd], **kw)
            self.procs.append(p)
        return p

    def reports(self, settle: float = 0.0) -> dict:
        """Stop the gateways (SIGTERM; with `drain` they first let open connections finish
        their FIN exchanges, a lost ACK of a FIN being repaired only by a retransmission
        timeout), then the emulator, and collect their reports, after `settle` seconds."""
        time.sleep(settle)
        emu = [self.emulator] if self.emulator is not None else []
        for p in (*self.gateways, *emu):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            if p is not self.emulator:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=(self.drain or 0) + 10)
        out = {}
        for name, p, f in zip(
            ("emulator", "gateway_a", "gateway_b"),
            [*emu, *self.gateways],
            [self.emu_stats, *self.gw_stats],
            strict=False,  # no gateways, or fewer reports than processes
        ):
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=10)
            with contextlib.suppress(OSError, ValueError):
                out[name] = json.loads(f.read_text())
        return out

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs, self.emulator, self.gateways = [], None, []
        for ns in self.created:
            delete_namespace(ns)
        self.created = []
        for f in self.workdir.glob(f"gw-{self.tag}-*.*"):
            f.unlink(missing_ok=True)
        # The unprivileged gateways' directory (state file, reports).
        if self.own_dir is not None:
            shutil.rmtree(self.own_dir, ignore_errors=True)


def _run_logged(cfg: dict, fd: int, ls: int | None, log: str) -> dict:
    """`run`, writing the connection events to file `log` as JSON lines (unless "-")."""
    if log == "-":
        return run(cfg, fd, ls)
    from spacetp.live.gateway_log import event_line

    with open(log, "w") as out:

        def write(events: list) -> None:
            out.writelines(event_line(ev, "json") + "\n" for ev in events)
            out.flush()

        tick = lambda r: write(json.loads(r).get("events", []))  # noqa: E731
        rep = run({**cfg, "log_connections": True}, fd, ls, tick)
        write(rep.pop("events", []))
    return rep


def _main(argv: list[str]) -> None:
    """Process entry points of the testbed: `--emulate LINK.json FD_A FD_B STATS [NOTIFY_FD..]`
    and `--gateway CONFIG_JSON FD STATS LOG [LINK_STATE_FD]` (LOG: a file for the connection
    log's JSON lines, or -). SIGTERM stops either and writes its report."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    mode, *args = argv
    if mode == "--emulate":
        link, fa, fb, stats, *notify = args
        try:
            from spacetp.live.emulate import run as emulate

            text = Path(link).read_text()
        except KeyboardInterrupt:
            return  # stopped while starting (SIGTERM): no run, nothing to report
        # Real time when the machine allows it (SCHED_FIFO), as `spacetp emulate` runs: the
        # comparisons built on this report its lateness, and a late emulator is the machine.
        rep = emulate(text, int(fa), int(fb), None, True, list(map(int, notify)))
    else:
        cfg, fd, stats, log, *ls = args
        rep = _run_logged(json.loads(cfg), int(fd), int(ls[0]) if ls else None, log)
    Path(stats).write_text(json.dumps(rep) + "\n")


if __name__ == "__main__":
    _main(sys.argv[1:])
