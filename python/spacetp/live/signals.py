"""Stopping a live run in order on a signal."""

from __future__ import annotations

import contextlib
import signal
import threading
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


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C, SIGTERM and SIGHUP for the block, to start a child process in it: a
    Ctrl-C that arrived while `subprocess.Popen` waited for its child's exec unwound the
    caller before it held the child, which then ran on, orphaned (reading files the caller's
    cleanup had removed). Held, a signal that comes is delivered to its handler as the block
    ends, with the child in hand for the caller's `finally` to stop. Handlers are the main
    thread's (Python runs them there), so elsewhere this holds nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.signal(s, lambda signum, frame: came.append(signum)) for s in sigs}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        for signum in dict.fromkeys(came):
            signal.raise_signal(signum)
