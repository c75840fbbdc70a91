"""A CFDP entity built from cfdp-py (PyPI `cfdp-py`, the IRS's Python CFDP library, which
nobody here wrote) on a UDP socket: the peer `spacetp cfdp` is checked against.

    python cfdp_py_peer.py send --entity 1 --bind 127.0.0.1:5001 --peer 2=127.0.0.1:5002 \\
        --file image.raw --name copy.raw [--class 2] [--rate 2e6] [--timeout 60]
    python cfdp_py_peer.py receive --entity 2 --bind 127.0.0.1:5002 --peer 1=127.0.0.1:5001 \\
        --out DIR [--timeout 60]

Prints `ready` once bound, then one JSON line: how the transaction ended (condition code,
delivery code, file status), the file and its SHA-256. The sender paces its PDUs at --rate
bits/s (cfdp-py sends as fast as it is called; ION meters to the contact's rate). Entity IDs
and sequence numbers are 2 bytes, as spacetp's."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sys
import time
from datetime import timedelta
from pathlib import Path

from cfdppy import CfdpState
from cfdppy.handler.dest import DestHandler
from cfdppy.handler.source import SourceHandler
from cfdppy.mib import (
    CheckTimerProvider,
    DefaultFaultHandlerBase,
    IndicationCfg,
    LocalEntityCfg,
    RemoteEntityCfg,
    RemoteEntityCfgTable,
)
from cfdppy.request import PutRequest
from cfdppy.user import CfdpUserBase
from spacepackets.cfdp.defs import ChecksumType, TransmissionMode
from spacepackets.cfdp.pdu import PduFactory
from spacepackets.countdown import Countdown
from spacepackets.seqcount import SeqCountProvider
from spacepackets.util import ByteFieldU16


class Faults(DefaultFaultHandlerBase):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def notice_of_suspension_cb(self, transaction_id, cond, progress) -> None:
        self.seen.append(cond.name)

    def notice_of_cancellation_cb(self, transaction_id, cond, progress) -> None:
        self.seen.append(cond.name)

    def abandoned_cb(self, transaction_id, cond, progress) -> None:
        self.seen.append(cond.name)

    def ignore_cb(self, transaction_id, cond, progress) -> None:
        self.seen.append(cond.name)


class User(CfdpUserBase):
    def __init__(self) -> None:
        super().__init__()
        self.finished = None
        self.dest_file: str | None = None

    def transaction_indication(self, transaction_params) -> None: ...
    def eof_sent_indication(self, transaction_id) -> None: ...
    def transaction_finished_indication(self, params) -> None:
        self.finished = params.finished_params

    def metadata_recv_indication(self, params) -> None:
        self.dest_file = params.dest_file_name

    def file_segment_recv_indication(self, params) -> None: ...
    def report_indication(self, transaction_id, status_report) -> None: ...
    def suspended_indication(self, transaction_id, cond_code) -> None: ...
    def resumed_indication(self, transaction_id, progress) -> None: ...
    def fault_indication(self, transaction_id, cond_code, progress) -> None: ...
    def abandoned_indication(self, transaction_id, cond_code, progress) -> None: ...
    def eof_recv_indication(self, transaction_id) -> None: ...


class CheckTimers(CheckTimerProvider):
    def provide_check_timer(self, local_entity_id, remote_entity_id, entity_type) -> Countdown:
        return Countdown(timedelta(seconds=2.0))


def addr(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["send", "receive"])
    ap.add_argument("--entity", type=int, required=True)
    ap.add_argument("--bind", required=True)
    ap.add_argument("--peer", required=True, help="ENTITY=ADDRESS:PORT")
    ap.add_argument("--file", type=Path)
    ap.add_argument("--name")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--class", dest="cls", type=int, default=2)
    ap.add_argument("--rate", type=float, default=0.0, help="bits/s; 0: unpaced")
    ap.add_argument("--timer", type=float, default=1.0, help="positive-ACK and NAK timer, s")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    peer_id, _, peer_addr = a.peer.partition("=")
    peer = addr(peer_addr)
    me = ByteFieldU16(a.entity)
    mode = TransmissionMode.ACKNOWLEDGED if a.cls == 2 else TransmissionMode.UNACKNOWLEDGED
    remote = RemoteEntityCfg(
        entity_id=ByteFieldU16(int(peer_id)),
        max_packet_len=1472,
        max_file_segment_len=1400,
        closure_requested=a.cls == 2,
        crc_on_transmission=False,
        default_transmission_mode=mode,
        crc_type=ChecksumType.CRC_32,
        positive_ack_timer_interval_seconds=a.timer,
        positive_ack_timer_expiration_limit=20,
        nak_timer_interval_seconds=a.timer,
        nak_timer_expiration_limit=20,
    )
    table = RemoteEntityCfgTable()
    table.add_config(remote)
    faults, user = Faults(), User()
    local = LocalEntityCfg(me, IndicationCfg(), faults)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(addr(a.bind))
    sock.setblocking(False)
    if a.role == "send":
        h = SourceHandler(local, user, table, CheckTimers(), SeqCountProvider(16))
        ok = h.put_request(PutRequest(destination_id=ByteFieldU16(int(peer_id)),
                                      source_file=a.file.resolve(), dest_file=Path(a.name),
                                      trans_mode=mode, closure_requested=a.cls == 2))  # fmt: skip
        assert ok, "put request refused"
    else:
        a.out = a.out.resolve()
        os.chdir(a.out)  # the sender's name is a path relative to here
        h = DestHandler(local, user, table, CheckTimers())
    print("ready", flush=True)
    deadline = time.monotonic() + a.timeout
    next_send = time.monotonic()
    started = False
    while time.monotonic() < deadline:
        got = None
        try:
            got = PduFactory.from_raw(sock.recv(65536))
        except BlockingIOError:
            pass
        try:
            r = h.state_machine(got)
        except Exception as e:  # a PDU the handler will not take (late, duplicate)
            print(f"refused: {type(e).__name__}: {e}", file=sys.stderr)
            r = h.state_machine()
        started = started or got is not None or a.role == "send"
        while r.states.num_packets_ready > 0:
            pdu = h.get_next_packet().pack()
            if a.rate > 0:
                time.sleep(max(0.0, next_send - time.monotonic()))
                next_send = max(next_send, time.monotonic()) + (len(pdu) + 28) * 8 / a.rate
            sock.sendto(pdu, peer)
        if started and r.states.state == CfdpState.IDLE and user.finished is not None:
            break
        if got is None:
            time.sleep(0.001)
    f = user.finished
    out = {"condition": f.condition_code.name if f else None,
           "delivery": f.delivery_code.name if f else None,
           "file_status": f.file_status.name if f else None, "faults": faults.seen}  # fmt: skip
    path = a.file if a.role == "send" else (a.out / user.dest_file if user.dest_file else None)
    if path is not None and Path(path).exists():
        out["file"] = str(path)
        out["sha256"] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
