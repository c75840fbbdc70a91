"""Stopping a live run in order on a signal."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


@contextlib.contextmanager
def interrupt_on_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP stop the run like Ctrl-C (a KeyboardInterrupt, so `finally` tears
    down and the core stops in order); the previous handlers come back after."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    # SIGINT too: a job started in the background by a shell has SIGINT ignored, and Python
    # then installs no KeyboardInterrupt handler of its own.
    sigs = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    old = {s: signal.signal(s, handler) for s in sigs}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
