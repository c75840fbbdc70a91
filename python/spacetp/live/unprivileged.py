"""The testbed's gateways run as an unprivileged user with only the two capabilities a
gateway needs, CAP_NET_ADMIN and CAP_NET_RAW (the systemd unit's set-up, docs/live.md):
the command prefix that drops to that user, and a check that the user can start spacetp at
all, so that a closed installation is named instead of showing as gateways that never
start."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from pathlib import Path

from spacetp.live.emulate import EmulateError

CAPS = "+net_admin,+net_raw"


def command_prefix(user: str, state: Path) -> list[str]:
    """`env SPACETP_STATE_DIR=state setpriv ...`: run as `user` with the two capabilities
    (ambient, so that they survive the exec), writing the gateway's state to `state`, which
    it is given."""
    u = pwd.getpwnam(user)
    os.chown(state, u.pw_uid, u.pw_gid)
    prefix = ["env", f"SPACETP_STATE_DIR={state}", "setpriv", f"--reuid={u.pw_uid}",
              f"--regid={u.pw_gid}", "--clear-groups", f"--inh-caps={CAPS}",
              f"--ambient-caps={CAPS}"]  # fmt: skip
    check_importable(user, prefix)
    return prefix


def check_importable(user: str, prefix: list[str]) -> None:
    """The user must be able to read the interpreter and the package: an installation under
    a directory closed to it (a home, or root's `mktemp -d`) is an error that says so."""
    r = subprocess.run([*prefix, sys.executable, "-c", "import spacetp.live.gateway"],
                       capture_output=True, text=True)  # fmt: skip
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["no error output"])[-1]
        raise EmulateError(
            f"run_as={user!r}: that user cannot start the gateway with {sys.executable} "
            f"({why}); install spacetp where every parent directory is readable by it"
        )
