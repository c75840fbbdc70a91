"""spacetp.live.signals: a child started with Ctrl-C held is in hand before the interrupt."""

import os
import signal
import subprocess
import sys

import pytest

from spacetp.live.signals import interrupts_held


class Interrupted(Exception):
    pass


def test_a_ctrl_c_during_a_child_start_is_raised_after_it_with_the_child_in_hand():
    def handler(signum, frame):
        raise Interrupted

    old = signal.signal(signal.SIGINT, handler)
    child = None
    try:
        with pytest.raises(Interrupted), interrupts_held():
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the child starts
            child = subprocess.Popen(
                [sys.executable, "-c", "print('started')"], stdout=subprocess.PIPE, text=True
            )
        assert child is not None, "the interrupt unwound the caller before it held the child"
        assert child.communicate(timeout=60)[0].strip() == "started"
    finally:
        signal.signal(signal.SIGINT, old)
        if child is not None and child.poll() is None:
            child.kill()
    # After the block, Ctrl-C is delivered again at once.
    signal.signal(signal.SIGINT, handler)
    try:
        with pytest.raises(Interrupted):
            os.kill(os.getpid(), signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, old)
