"""A gateway's kernel plumbing on a real host: its TUN device, the TCP of the space link
diverted into it, and transparent interception of TCP arriving from LAN interfaces.

    LAN iface --[nftables tproxy]--> gateway's transparent socket (kernel TCP)
                                      gateway (SCPS-TP) <== TUN fd ==> kernel routing
    space iface <--- SCPS-TP as IPv4 or IPv6 protocol 6, forwarded by the kernel ---'

The gateway is a host behind its TUN device: the kernel forwards the SCPS-TP packets it writes
there like any other IP packet, out of whatever interface leads to the destination. TCP that
arrives on a space interface is routed into the TUN by a policy rule (`iif SPACE ipproto tcp`),
so the kernel's own TCP never sees it and never answers it with a reset. Interception is
nftables `tproxy`: TCP from a LAN interface to any address that is not this host's is
delivered to the gateway's IP_TRANSPARENT socket, and the accepted socket's local address is
the original destination.

Dual stack: when the namespace has IPv6 (`net.ipv6.conf.all.disable_ipv6` is 0) the same is
set up for IPv6 next to IPv4: an `ip -6` divert rule for TCP (compressed headers, protocol
105, are IPv4's), the `ip -6` local route and fwmark rule, a `table ip6` beside the `table ip`
and IPv6 forwarding; the relay listens on `[::]:PORT` too. Without IPv6, IPv4 only.

Everything set up here is undone on close (the TUN device disappears with its fd, rules and
routes are deleted, sysctls restored), so it can run in the root namespace of a real gateway.
A crash (SIGKILL) cannot undo anything, so every change is first written to a state file
(`/run/spacetp/`, one per network namespace and TUN name): the next gateway started with the
same TUN, or `spacetp gateway --cleanup`, finds it, undoes what it records (restoring each
sysctl to the value it had before the first gateway changed it) and deletes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from spacetp.live.emulate import EmulateError, TornDown, _ip, open_tun
from spacetp.live.gateway_config import INTERCEPT_PORT

# Policy routing numbers: space-link TCP -> the TUN, and intercepted packets -> local delivery.
TABLE_DIVERT = 5788
TABLE_LOCAL = 5789
MARK = 0x5C7
# Where gateways record what they changed on the host (tmpfs: gone after a reboot, as are
# the changes themselves).
# Where the gateway records what it changed (systemd: RuntimeDirectory=spacetp); a gateway
# run by hand as an unprivileged user with capabilities names a directory it may write.
STATE_DIR = Path(os.environ.get("SPACETP_STATE_DIR", "/run/spacetp"))
AFTER_CRASH = ("open", "closed")


def _sysctl(key: str) -> Path:
    return Path("/proc/sys") / key.replace(".", "/")


def ipv6_enabled() -> bool:
    """Whether this network namespace has IPv6: the kernel has it and it is not disabled
    (the relay's IPv6 transparent socket follows the same test)."""
    try:
        return _sysctl("net.ipv6.conf.all.disable_ipv6").read_text().strip() == "0"
    except OSError:
        return False


# IPv6's minimum link MTU: below it the kernel takes IPv6 off the device.
IPV6_MIN_MTU = 1280
# The families of the nft tables (one table of each, same name).
NFT_FAMILIES = ("ip", "ip6")


def netns_id() -> int:
    """This network namespace's identity (the inode of /proc/self/ns/net)."""
    return os.stat("/proc/self/ns/net").st_ino


# getsockopt(SOL_SOCKET, SO_NETNS_COOKIE): Linux >= 5.14.
_SO_NETNS_COOKIE = 71


def netns_cookie() -> int | None:
    """This network namespace's cookie, never reused (unlike the inode, which the next
    namespace created after one is deleted usually gets); None on kernels without it."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        try:
            return struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, _SO_NETNS_COOKIE, 8))[0]
        except OSError:
            return None


CAP_NET_ADMIN = 12


def can_admin_network() -> bool:
    """Whether this process may change routes, nftables, TUN devices and net sysctls: root,
    or CAP_NET_ADMIN in its effective set (a service with only the capabilities it needs)."""
    if os.geteuid() == 0:
        return True
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_NET_ADMIN & 1)
    except (OSError, ValueError):
        pass
    return False


def state_file(tun: str) -> Path:
    return STATE_DIR / f"gateway-{netns_id()}-{tun}.json"


def _load(f: Path) -> dict | None:
    """The state recorded in `f`; None if it describes a network namespace that is gone (a
    new namespace got its inode: what it recorded went with the old one)."""
    try:
        state = json.loads(f.read_text())
    except (OSError, ValueError):
        return {}  # unreadable: nothing to undo, but still this namespace's file
    if not isinstance(state, dict):
        return {}
    cookie, here = state.get("netns_cookie"), netns_cookie()
    if cookie is not None and here is not None and cookie != here:
        return None
    return state


def _is_gateway(pid: object) -> bool:
    """Whether process `pid` runs a spacetp gateway in this network namespace (not a pid
    reused by another program)."""
    if not isinstance(pid, int) or pid == os.getpid():
        return False
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        same_ns = os.stat(f"/proc/{pid}/ns/net").st_ino == netns_id()
    except OSError:
        return False
    return same_ns and any(b"spacetp" in a for a in cmd) and b"gateway" in cmd


def _undo(state: dict) -> list[str]:
    """Undo what a state file records; what was undone, one item each."""
    done = []
    for args in reversed(state.get("undo", [])):
        if args[0] == "nft":
            r = subprocess.run(args, capture_output=True)
            what = args
        else:
            r = _ip(*args, check=False)
            what = ["ip", *args]
        if r.returncode == 0:
            done.append(" ".join(what))
    # The values from before the first gateway changed them, not what is there now.
    for key, value in state.get("sysctl", {}).items():
        with contextlib.suppress(OSError):
            if _sysctl(key).read_text().strip() != value:
                _sysctl(key).write_text(value)
                done.append(f"sysctl {key}={value}")
    return done


def cleanup(tun: str) -> str | None:
    """Remove what a gateway with TUN `tun` that died left in this network namespace; one
    line saying what was removed, None if there is no state file. EmulateError naming the
    PID if that gateway still runs."""
    if not can_admin_network():
        raise EmulateError(
            "--cleanup needs root or CAP_NET_ADMIN (it deletes routing rules and nft tables)"
        )
    f = state_file(tun)
    if not f.exists():
        return None
    state = _load(f)
    if state is None:
        f.unlink(missing_ok=True)
        return f"removed {f}: it described a network namespace that no longer exists"
    pid = state.get("pid")
    if _is_gateway(pid):
        raise EmulateError(
            f"a spacetp gateway (pid {pid}) runs with --tun {tun} in this network namespace; "
            f"stop it first (kill -TERM {pid})"
        )
    done = _undo(state)
    f.unlink(missing_ok=True)
    steps = "; ".join([*done, f"removed {f}"])
    who = f"pid {pid}" if isinstance(pid, int) else "pid unknown"
    return f"cleaned up after the spacetp gateway with --tun {tun} ({who}, gone): {steps}"


def _tables_user(table: int) -> str:
    """Who holds routing table `table`, as far as this namespace's state files tell."""
    for f in sorted(STATE_DIR.glob(f"gateway-{netns_id()}-*.json")):
        state = _load(f)
        if not state:
            continue
        pid, tun = state.get("pid"), state.get("tun")
        if _is_gateway(pid):
            return (
                f"the spacetp gateway with --tun {tun} (pid {pid}) runs in this network "
                "namespace (one gateway per namespace)"
            )
        return (
            f"a spacetp gateway with --tun {tun} (pid {pid}) died here and left it: "
            f"spacetp gateway --cleanup --tun {tun}"
        )
    return (
        f"no spacetp gateway state was found in {STATE_DIR}, so another program uses table "
        f"{table} (see `ip route show table {table}`, `ip rule` and their `ip -6` forms); "
        f"spacetp gateways use tables {TABLE_DIVERT} and {TABLE_LOCAL}"
    )


def quic_state_name(intercept_port: int) -> str:
    """The state file's name for a QUIC gateway, which has no TUN device: by its transparent
    socket's port (one gateway per port and network namespace)."""
    return f"quic{intercept_port}"


@dataclass
class GatewayNet(TornDown):
    """`tun` None: interception only (a QUIC gateway, whose tunnel is a kernel UDP socket);
    its state file is named `quic_state_name(intercept_port)`."""

    tun: str | None
    mtu: int = 1500
    space: list[str] = field(default_factory=list)
    intercept: list[str] = field(default_factory=list)
    intercept_port: int = INTERCEPT_PORT
    # After a crash the nft table stays: `open` lets traffic past the dead gateway
    # (unaccelerated), `closed` resets TCP that would be forwarded instead.
    after_crash: str = "open"
    fd: int = -1
    undo: list[list[str]] = field(default_factory=list)
    restore: dict[str, str] = field(default_factory=dict)
    # What a crashed gateway's state file recorded and set-up undid first (one line).
    cleaned: str | None = None
    # IPv6 set up too (decided in set-up: a TUN, IPv6 in the namespace, mtu >= 1280).
    ipv6: bool = False

    @property
    def name(self) -> str:
        """What names this gateway's state file and nft table."""
        return self.tun or quic_state_name(self.intercept_port)

    @property
    def nft_table(self) -> str:
        return f"spacetp_{self.name}"

    def _record(self) -> None:
        """Write the state file: everything changed so far, and how to undo it."""
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        f = state_file(self.name)
        tmp = f.with_suffix(".tmp")
        state = {"pid": os.getpid(), "tun": self.name, "netns": netns_id(),
                 "netns_cookie": netns_cookie(), "sysctl": self.restore,
                 "undo": self.undo}  # fmt: skip
        tmp.write_text(json.dumps(state, indent=1) + "\n")
        tmp.replace(f)

    def _check(self) -> None:
        if not can_admin_network():
            what = "--tun" if self.tun else "--intercept"
            raise EmulateError(f"{what} needs root or CAP_NET_ADMIN (routing rules, nftables)")
        if self.after_crash not in AFTER_CRASH:
            raise EmulateError(f"--after-crash {self.after_crash}: use one of open, closed")
        if self.tun is not None:
            if not os.path.exists("/dev/net/tun"):
                raise EmulateError("/dev/net/tun does not exist (modprobe tun?)")
            if not 1 <= len(self.tun) <= 15:
                raise EmulateError(f"--tun {self.tun!r}: a device name has 1 to 15 characters")
        self.cleaned = cleanup(self.name)
        if self.tun and _ip("link", "show", "dev", self.tun, check=False).returncode == 0:
            raise EmulateError(f"--tun {self.tun}: a device of that name exists already")
        for opt, devs in (("--space-if", self.space), ("--intercept", self.intercept)):
            for d in devs:
                if _ip("link", "show", "dev", d, check=False).returncode != 0:
                    raise EmulateError(f"{opt} {d}: no such interface in this network namespace")
        if self.intercept and shutil.which("nft") is None:
            raise EmulateError("--intercept needs the nft command (package nftables)")
        # Our own leftovers are gone by now; whatever still uses the tables is someone else.
        families = [[], ["-6"]] if self.ipv6 else [[]]
        for t in (TABLE_DIVERT, TABLE_LOCAL):
            for fam in families:
                routes = _ip(*fam, "route", "show", "table", str(t), check=False).stdout.strip()
                rules = _ip(*fam, "rule", "show", "table", str(t), check=False).stdout.strip()
                if routes or rules:
                    raise EmulateError(f"routing table {t} is in use: {_tables_user(t)}")
        for fam in NFT_FAMILIES if self.intercept else ():
            table = ["nft", "list", "table", fam, self.nft_table]
            if subprocess.run(table, capture_output=True).returncode == 0:
                raise EmulateError(
                    f"nftables table {fam} {self.nft_table} exists and no spacetp gateway "
                    f"state was found for --tun {self.tun} in this network namespace; if "
                    f"nothing uses it, delete it (nft delete table {fam} {self.nft_table})"
                )

    def _set(self, key: str, value: str) -> None:
        p = _sysctl(key)
        if key not in self.restore:
            self.restore[key] = p.read_text().strip()
            self._record()
        p.write_text(value)

    def _do(self, args: list[str], undo: list[str] | None) -> None:
        # Recorded before it is done: a crash in between leaves an undo that fails harmlessly.
        if undo is not None:
            self.undo.append(undo)
            self._record()
        _ip(*args)

    def _setup(self) -> None:
        # QUIC gateways intercept IPv4 only (their tunnel's preamble carries IPv4).
        self.ipv6 = self.tun is not None and self.mtu >= IPV6_MIN_MTU and ipv6_enabled()
        self._check()
        self._record()
        if self.tun is None:
            self._set("net.ipv4.ip_forward", "1")
            self._intercept()
            return
        self.fd = open_tun(self.tun)
        if self.ipv6:
            self._tun_ipv6()
        _ip("link", "set", "dev", self.tun, "mtu", str(self.mtu), "up")
        # A router: the packets the gateway writes carry other hosts' addresses (transparent
        # mode), so reverse-path filtering must let them in on the TUN.
        self._set("net.ipv4.ip_forward", "1")
        self._set("net.ipv4.conf.all.rp_filter", "0")
        self._set(f"net.ipv4.conf.{self.tun}.rp_filter", "0")
        # The routes of the TUN go with the device; rules must be deleted.
        _ip("route", "add", "default", "dev", self.tun, "table", str(TABLE_DIVERT))
        if self.ipv6:
            self._set("net.ipv6.conf.all.forwarding", "1")
            _ip("-6", "route", "add", "default", "dev", self.tun, "table", str(TABLE_DIVERT))
        # TCP, and SCPS-TP with compressed headers (IP protocol 105, IPv4 only).
        divert = [([], "tcp"), ([], "105")] + ([(["-6"], "tcp")] if self.ipv6 else [])
        for d in self.space:
            for fam, proto in divert:
                rule = ["iif", d, "ipproto", proto, "lookup", str(TABLE_DIVERT)]
                rule += ["priority", str(TABLE_DIVERT)]
                self._do([*fam, "rule", "add", *rule], [*fam, "rule", "del", *rule])
        if self.intercept:
            # The SCPS-TP segments gateway A writes into the TUN carry the same addresses and
            # ports as the intercepted kernel socket. TCP early demux would attach that socket
            # to them, and the kernel drops a forwarded packet that has a socket attached.
            # (IPv6's early demux obeys this IPv4 sysctl too.)
            self._set("net.ipv4.tcp_early_demux", "0")
            self._intercept()

    def _tun_ipv6(self) -> None:
        """The TUN, still down, ready for IPv6 and silent: the kernel's own packets there
        would reach the gateway. No link-local address (no DAD) and no multicast (no MLD
        reports for the all-routers group a router's devices join)."""
        # IPv6 leaves a device below its minimum MTU, groups and all (silently: it is
        # down), and comes back without all-routers once the device has no IFF_MULTICAST.
        _ip("link", "set", "dev", self.tun, "multicast", "off", "mtu", str(IPV6_MIN_MTU - 1))
        _ip("link", "set", "dev", self.tun, "mtu", str(self.mtu))
        conf = f"net.ipv6.conf.{self.tun}"
        if _sysctl(f"{conf}.disable_ipv6").read_text().strip() != "0":
            self._set(f"{conf}.disable_ipv6", "0")
        _ip("link", "set", "dev", self.tun, "addrgenmode", "none")

    def _intercept(self) -> None:
        """Intercepted TCP delivered to the transparent socket: the local route, the fwmark
        rule and the nft table."""
        if self.intercept:
            rule = ["fwmark", hex(MARK), "lookup", str(TABLE_LOCAL), "priority", str(TABLE_LOCAL)]
            for fam, anywhere in [([], "0.0.0.0/0")] + ([(["-6"], "::/0")] if self.ipv6 else []):
                local = ["local", anywhere, "dev", "lo", "table", str(TABLE_LOCAL)]
                self._do([*fam, "route", "add", *local], [*fam, "route", "del", *local])
                self._do([*fam, "rule", "add", *rule], [*fam, "rule", "del", *rule])
            for fam in self._nft_families:
                self.undo.append(["nft", "delete", "table", fam, self.nft_table])
            self._record()
            r = subprocess.run(["nft", "-f", "-"], input=self._nft_rules(), capture_output=True,
                               text=True)  # fmt: skip
            if r.returncode != 0:
                raise EmulateError(f"nft (interception rules): {r.stderr.strip()}")

    @property
    def _nft_families(self) -> tuple[str, ...]:
        return NFT_FAMILIES if self.ipv6 else NFT_FAMILIES[:1]

    def _nft_rules(self) -> str:
        """One table per family (`ip`, and `ip6` with IPv6), the same chains in each, added
        in one transaction."""
        return "".join(self._nft_table(fam) for fam in self._nft_families)

    def _nft_table(self, family: str) -> str:
        ifs = ", ".join(f'"{d}"' for d in self.intercept)
        # While the gateway runs, intercepted TCP is delivered locally and never forwarded;
        # the forward rule bites only when the gateway died and left its table (closed).
        closed = f"""
    chain fail_closed {{
        type filter hook forward priority filter; policy accept;
        iifname {{ {ifs} }} meta l4proto tcp reject with tcp reset
    }}"""
        tproxy = f"tproxy to :{self.intercept_port} meta mark set {MARK} accept"
        return f"""
table {family} {self.nft_table} {{
    chain intercept {{
        type filter hook prerouting priority mangle; policy accept;
        iifname {{ {ifs} }} meta l4proto tcp fib daddr type local accept
        iifname {{ {ifs} }} meta l4proto tcp {tproxy}
    }}{closed if self.after_crash == "closed" else ""}
}}
"""

    def close(self) -> None:
        for args in reversed(self.undo):
            if args[0] == "nft":
                subprocess.run(args, capture_output=True)
            else:
                _ip(*args, check=False)
        self.undo = []
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1
        for key, value in self.restore.items():
            with contextlib.suppress(OSError):
                _sysctl(key).write_text(value)
        self.restore = {}
        with contextlib.suppress(OSError):
            f = state_file(self.name)
            # Only our own: a refused start must not delete a running gateway's record.
            if json.loads(f.read_text()).get("pid") == os.getpid():
                f.unlink()
