import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# Reference data in the repository, with its provenance (README.md in each folder).
RI_DATA = ROOT / "crates" / "spacetp-wire" / "tests" / "data" / "scps-ri"
NS3_ANCHORS = ROOT / "benches" / "ns3"


def spacetp_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the `spacetp` command of this interpreter's environment."""
    exe = shutil.which("spacetp", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "spacetp.cli"]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, cwd=cwd or ROOT, timeout=600
    )


@pytest.fixture
def cli():
    return spacetp_cli


def shell_background(cmd: list[str], log: Path) -> tuple[subprocess.Popen, int]:
    """Start `cmd` as a shell script does with `cmd &`: bash, without job control, starts it
    with SIGINT ignored. Returns the shell, which waits for the job and then prints `rc=N`,
    and the job's pid (`cmd` execs, e.g. `ip netns exec`, keep it)."""
    log.write_text("")  # readable at once; the job's shell opens it a moment later
    script = f"{shlex.join(cmd)} >{shlex.quote(str(log))} 2>&1 & echo $!; wait $!; echo rc=$?"
    sh = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    return sh, int(sh.stdout.readline())


def bash_ignores_sigint_in_background() -> bool:
    """The premise of the background-SIGINT tests, checked on this machine's bash."""
    r = subprocess.run(
        ["bash", "-c", "grep SigIgn /proc/self/status & wait"], capture_output=True, text=True
    )
    return bool(int(r.stdout.split()[1], 16) & (1 << (signal.SIGINT - 1)))


def free_ports(n: int) -> list[int]:
    """`n` loopback ports nothing uses now, for TCP and UDP, chosen by the kernel (ports
    derived from a pid collide with whatever else the machine runs). Something may still
    take one before the caller binds it: a listener the test connects to had better ask for
    port 0 and read where it is bound (`listening_ports`)."""
    socks = []
    while len(socks) < 2 * n:
        t = socket.socket()
        t.bind(("127.0.0.1", 0))
        u = socket.socket(type=socket.SOCK_DGRAM)  # free for UDP too (a link's port)
        try:
            u.bind(("127.0.0.1", t.getsockname()[1]))
        except OSError:
            t.close()
            u.close()
            continue
        socks += [t, u]
    ports = [s.getsockname()[1] for s in socks[::2]]
    for s in socks:
        s.close()
    return ports


def listening_ports(ready_line: str) -> list[int]:
    """The ports a gateway's readiness line says it listens on (`listening on A:P, ...`), in
    the order of its listen rules: a rule given port 0 is bound where the kernel chose."""
    m = re.search(r"listening on ([^;]+)", ready_line)
    assert m, f"no listening addresses in {ready_line!r}"
    return [int(a.rsplit(":", 1)[1]) for a in m.group(1).split(", ")]


def connect_when_listening(port: int, within: float = 10.0) -> socket.socket:
    """A TCP connection to 127.0.0.1:`port`, retried until something listens there (a
    gateway starting up), for at most `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port))
        except OSError:
            assert time.monotonic() < deadline, f"nothing listened on port {port}"
            time.sleep(0.1)


def until_reset(c: socket.socket) -> tuple[object, float]:
    """Read one byte from `c`: what came ("reset" for a reset) and how long it took."""
    t0 = time.monotonic()
    try:
        got: object = c.recv(1)
    except ConnectionResetError:
        got = "reset"
    return got, time.monotonic() - t0


# ---------------------------------------------------------------------- no silent skips
# A skipped test is a check that did not run, so a skip fails the session (exit code 1, every
# skipped test listed with its reason) unless the environment variable SPACETP_ALLOW_SKIPS
# allows it: entries separated by ';', each `TEXT => WHY`; a skip whose reason contains TEXT
# (case-insensitive) is allowed, and WHY, printed beside it, says why that is acceptable on
# this machine. .ci/run leaves it unset: in CI every skip is a failure (docs/testing.md).

ALLOW_SKIPS = "SPACETP_ALLOW_SKIPS"
_skipped: list[tuple[str, str]] = []  # (test id, reason)


def _allowed_skips() -> list[tuple[str, str]]:
    """(text, why) pairs of SPACETP_ALLOW_SKIPS; a malformed entry stops the session."""
    entries = []
    for raw in os.environ.get(ALLOW_SKIPS, "").split(";"):
        text, arrow, why = (s.strip() for s in raw.partition("=>"))
        if not raw.strip():
            continue
        if not (arrow and text and why):
            raise pytest.UsageError(
                f"{ALLOW_SKIPS}: {raw.strip()!r} is not `TEXT => WHY` (say why the skip is "
                "acceptable; entries are separated by ';')"
            )
        entries.append((text, why))
    return entries


_allow_key = pytest.StashKey[list]()


def pytest_configure(config):
    config.stash[_allow_key] = _allowed_skips()


def _note_skip(report) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skipped.append((report.nodeid, reason.removeprefix("Skipped: ")))


def pytest_runtest_logreport(report):
    _note_skip(report)


def pytest_collectreport(report):
    _note_skip(report)  # a module skipped as a whole


def _sort_skips(config) -> tuple[list, list]:
    """(allowed, refused): allowed as (test, reason, why), refused as (test, reason)."""
    allowed, refused = [], []
    for test, reason in _skipped:
        why = next((w for t, w in config.stash[_allow_key] if t.lower() in reason.lower()), None)
        if why is None:
            refused.append((test, reason))
        else:
            allowed.append((test, reason, why))
    return allowed, refused


def pytest_sessionfinish(session, exitstatus):
    ran_clean = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
    if ran_clean and _sort_skips(session.config)[1]:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    allowed, refused = _sort_skips(config)
    tr = terminalreporter
    if allowed:
        tr.section(f"skips allowed by {ALLOW_SKIPS}: {len(allowed)}", sep="-")
        for test, reason, why in allowed:
            tr.line(f"{test}: {reason} (allowed: {why})")
    if refused:
        tests = "1 test" if len(refused) == 1 else f"{len(refused)} tests"
        tr.section(f"{tests} skipped: the session fails", sep="=", red=True)
        for test, reason in refused:
            tr.line(f"{test}: {reason}", red=True)
        tr.line(
            "A skip is a check that did not run. Install what these tests need (.ci/run "
            "installs tshark, chromium and nftables and runs as root), or allow the skips on "
            f"this machine with {ALLOW_SKIPS}='TEXT => WHY; ...' (docs/testing.md)."
        )


# ------------------------------------------------------------- processes and their lines


class Output:
    """A process's stdout and stderr, read as they come by two threads (nothing blocks on a
    full pipe): wait for a line, then collect both at the end."""

    def __init__(self, proc: subprocess.Popen):
        import threading

        self.proc, self.out, self.err = proc, [], []
        self._new = threading.Condition()
        self._threads = [
            threading.Thread(target=self._read, args=(s, k), daemon=True)
            for s, k in ((proc.stdout, self.out), (proc.stderr, self.err))
            if s is not None
        ]
        for t in self._threads:
            t.start()

    def _read(self, stream, into: list) -> None:
        for line in stream:
            with self._new:
                into.append(line)
                self._new.notify_all()

    def wait_for(self, text: str, within: float = 60.0, count: int = 1) -> str:
        """The `count`th stderr line that contains `text`, waited for at most `within` s (the
        process ending first fails at once, with what it wrote)."""
        deadline = time.monotonic() + within
        with self._new:
            while True:
                hits = [ln for ln in self.err if text in ln]
                if len(hits) >= count:
                    return hits[count - 1]
                left = deadline - time.monotonic()
                ended = not any(t.is_alive() for t in self._threads)
                assert left > 0 and not ended, f"no {text!r} in: {''.join(self.err)[-3000:]}"
                self._new.wait(min(left, 0.2))

    def finish(self, timeout: float = 60.0) -> tuple[str, str]:
        """Wait for the process to end: (stdout, stderr)."""
        self.proc.wait(timeout=timeout)
        for t in self._threads:
            t.join(timeout=10)
        return "".join(self.out), "".join(self.err)


def start_gateway(*args: str) -> tuple[subprocess.Popen, Output]:
    """`spacetp gateway ARGS...`, returned once it printed its readiness line (its sockets
    listen; SIGHUP and SIGTERM are handled from then on)."""
    exe = shutil.which("spacetp", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "spacetp.cli"]
    p = subprocess.Popen(
        [*cmd, "gateway", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    io = Output(p)
    try:
        io.wait_for("ready: pid")
    except BaseException:
        p.kill()
        raise
    return p, io
