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


def test_an_emulator_child_interrupted_as_it_starts_is_stopped(monkeypatch, tmp_path):
    # The block that starts `spacetp emulate`'s child for a kernel comparison (compare,
    # bench --vs-linux): a Ctrl-C while it starts must still stop the child as it unwinds.
    from spacetp.live import gateway_testbed

    started = []
    real_popen = subprocess.Popen

    def ctrl_c_as_it_starts(cmd, **kw):
        os.kill(os.getpid(), signal.SIGINT)
        started.append(real_popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        return started[-1]

    def handler(signum, frame):
        raise Interrupted

    monkeypatch.setattr(gateway_testbed.subprocess, "Popen", ctrl_c_as_it_starts)
    old = signal.signal(signal.SIGINT, handler)
    fa, fb = os.pipe()
    try:
        with pytest.raises(Interrupted):
            with gateway_testbed.emulator_child(tmp_path / "l.json", fa, fb, tmp_path / "r"):
                pytest.fail("the block ran on after the Ctrl-C")
    finally:
        signal.signal(signal.SIGINT, old)
        os.close(fa)
        os.close(fb)
        for p in started:
            if p.poll() is None:
                p.kill()
    assert len(started) == 1 and started[0].returncode == -signal.SIGTERM, "left running"
