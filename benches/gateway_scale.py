"""Many concurrent connections through a gateway pair: N kernel-TCP connections are opened
through gateway A (all open at once before any sends), each carries a little data to a server
behind gateway B and gets its byte count back; every connection must complete exactly.

    python benches/gateway_scale.py --connections 10000 [--bytes 1000]

No root: the gateways carry their SCPS-TP packets in UDP datagrams on loopback (the
space link without the emulator), so this measures the gateways alone. The client and the
server are separate processes (each needs N file descriptors); each gateway needs N too and
raises its own soft limit (RLIMIT_NOFILE) to the hard limit. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _free_ports(n: int) -> list[int]:
    """Ports nothing listens on now (TCP and UDP), chosen by the kernel."""
    import socket

    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _raise_nofile() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


async def _server(port: int) -> None:
    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        n = len(await r.read())  # to EOF
        w.write(f"{n}\n".encode())
        await w.drain()
        w.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", port, backlog=65535)
    async with srv:
        await srv.serve_forever()


async def _client(port: int, n: int, size: int) -> dict:
    payload = os.urandom(size)
    t0 = time.monotonic()
    sem = asyncio.Semaphore(512)  # connects in flight at once (the listen backlog)

    async def connect():
        async with sem:
            return await asyncio.open_connection("127.0.0.1", port)

    conns = await asyncio.gather(*(connect() for _ in range(n)), return_exceptions=True)
    opened = [c for c in conns if not isinstance(c, BaseException)]
    t_open = time.monotonic() - t0

    async def transfer(rw):
        r, w = rw
        w.write(payload)
        await w.drain()
        w.write_eof()
        line = await asyncio.wait_for(r.readline(), 120)
        w.close()
        return int(line or b"-1")

    got = await asyncio.gather(*(transfer(c) for c in opened), return_exceptions=True)
    exact = sum(1 for g in got if g == size)
    return {
        "opened": len(opened),
        "exact": exact,
        "open_s": round(t_open, 2),
        "total_s": round(time.monotonic() - t0, 2),
        "errors": sorted(
            {type(g).__name__ for g in got if isinstance(g, BaseException)}
            | {type(c).__name__ for c in conns if isinstance(c, BaseException)}
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=10000)
    ap.add_argument("--bytes", type=int, default=1000)
    ap.add_argument("--role", choices=["bench", "server", "client"], default="bench")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    _raise_nofile()
    if a.role == "server":
        asyncio.run(_server(a.port))
        return
    if a.role == "client":
        print(json.dumps(asyncio.run(_client(a.port, a.connections, a.bytes))), flush=True)
        return
    p_listen, p_a, p_b, p_srv = _free_ports(4)
    base = os.getpid()  # names the stats files
    exe = [sys.executable, "-m", "spacetp.cli", "gateway"]
    gw_a = [
        *exe,
        "--local",
        "10.77.0.1",
        "--peer",
        "10.77.0.2",
        "--listen",
        f"127.0.0.1:{p_listen}=5000",
        "--udp",
        f"127.0.0.1:{p_a},127.0.0.1:{p_b}",
        "--stats",
        f"/tmp/gw-scale-a-{base}.json",
    ]
    gw_b = [
        *exe,
        "--local",
        "10.77.0.2",
        "--peer",
        "10.77.0.1",
        "--forward",
        f"5000=127.0.0.1:{p_srv}",
        "--udp",
        f"127.0.0.1:{p_b},127.0.0.1:{p_a}",
        "--stats",
        f"/tmp/gw-scale-b-{base}.json",
    ]
    me = [sys.executable, str(Path(__file__).resolve())]
    procs = [
        subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for c in (gw_a, gw_b, [*me, "--role", "server", "--port", str(p_srv)])
    ]
    time.sleep(3)
    t0 = time.monotonic()
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    client = subprocess.run(
        [
            *me,
            "--role",
            "client",
            "--port",
            str(p_listen),
            "--connections",
            str(a.connections),
            "--bytes",
            str(a.bytes),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    wall = time.monotonic() - t0
    for p in procs:
        p.send_signal(2)
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    files = [Path(f"/tmp/gw-scale-{x}-{base}.json") for x in "ab"]
    if not all(f.exists() for f in files):
        sys.exit("a gateway did not run: " + " | ".join(p.stderr.read()[-400:] for p in procs[:2]))
    reps = [json.loads(f.read_text()) for f in files]
    res = (
        json.loads(client.stdout.strip().splitlines()[-1])
        if client.stdout.strip()
        else {"client_error": client.stderr[-500:]}
    )
    res.update(
        {
            "connections": a.connections,
            "bytes_each": a.bytes,
            "wall_s": round(wall, 2),
            "cpu_s_all_processes": round(cpu, 1),
            "fd_limit": reps[0].get("fd_limit"),
            "gateway_a_max_flows": reps[0].get("max_flows"),
            "gateway_b_max_flows": reps[1].get("max_flows"),
            "accepted": reps[0].get("accepted"),
            "admitted": reps[1].get("admitted"),
            "refused": [reps[0].get("refused"), reps[1].get("refused")],
            "bytes_up": reps[0].get("bytes_up"),
            "bytes_down_b": reps[1].get("bytes_down"),
        }
    )
    print(json.dumps(res))


if __name__ == "__main__":
    main()
