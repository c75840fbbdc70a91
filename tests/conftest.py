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
    """`n` loopback ports nothing listens on now, chosen by the kernel (ports derived from a
    pid collide with whatever else the machine runs)."""
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


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
