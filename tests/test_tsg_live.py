"""A time-sequence graph of a kernel capture made with the live tools: Linux TCP between the
two namespaces of `spacetp emulate` over a lossy link, captured by tshark inside the sender's
namespace (`-i any`: pcapng, Linux cooked headers), read by spacetp.pcapflows and checked
against tshark's own analysis of the same file. Needs root and tshark; skipped otherwise."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time

import pytest

from spacetp import tsg
from test_emulate import B, emulator, needs_root  # noqa: F401  (emulator is a fixture)
from test_tsg import RETX, TSHARK, tshark_frames

LINK = (
    '[[links]]\nbetween = ["a", "b"]\nrate = "4 Mb/s"\ndelay = "40 ms"\n'
    "queue = { packets = 100 }\nerrors = { per = 0.02 }\nerrors_back = {}\n"
)


def _frames(pcap, display_filter: str) -> list[str]:
    """The frames of the capture being written that match (what is complete so far)."""
    r = subprocess.run([TSHARK, "-r", str(pcap), "-Y", display_filter, "-T", "fields", "-e",
                        "frame.number"], capture_output=True, text=True)  # fmt: skip
    return r.stdout.split()


@needs_root
@pytest.mark.skipif(TSHARK is None or shutil.which("ip") is None, reason="tshark or ip missing")
def test_kernel_capture_through_the_emulator_matches_tshark(emulator, tmp_path):  # noqa: F811
    e = emulator(LINK)
    pcap = tmp_path / "kernel.pcapng"
    cap = subprocess.Popen(
        ["ip", "netns", "exec", e.ns_a, TSHARK, "-i", "any", "-w", str(pcap), "-f", "tcp", "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for line in cap.stderr:  # tshark says when it captures
            if "Capturing on" in line:
                break
        rx = e.receiver(e.ns_b, "tcp-recv", B, 5006)
        tx = e.probe(e.ns_a, "tcp-send", B, 5006, 600_000, 3)
        assert e.result(rx) == e.result(tx)
        # Both FINs are in the file (and so every packet before them) before tshark stops.
        deadline = time.monotonic() + 60
        while len(_frames(pcap, "tcp.flags.fin == 1")) < 2:
            assert time.monotonic() < deadline, "the capture never held both FINs"
            time.sleep(0.2)
    finally:
        cap.send_signal(signal.SIGINT)
        cap.wait(timeout=20)
        e.stop()
    view = tsg.from_pcap(pcap)
    assert view.title.startswith("TCP ") and f"-> {B}:5006" in view.title
    ours = set(view.data.loc[view.data["retx"], "frame"])
    assert ours and ours == tshark_frames(pcap, RETX)
    assert view.data.loc[~view.data["fin"], "len"].sum() >= 600_000
    assert view.acks["ack"].max() == 600_001  # every byte and the FIN
    assert len(view.blocks) > 0, "Linux sends SACK blocks"
    assert 0.08 <= view.rtt["rtt_s"].median() < 1.0  # 2 x 40 ms and the queue
    from spacetp.tsg_plot import save

    assert save("tsg", view, tmp_path / "kernel.png").stat().st_size > 10_000
