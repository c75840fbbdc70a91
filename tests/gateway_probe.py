"""Traffic for the gateway tests, run inside the namespaces (`ip netns exec NS python
gateway_probe.py MODE ...`); prints one JSON line.

    sink HOST PORT COUNT              -> {"flows": [{"bytes", "sha256", "t0", "t1"}, ...]}
    send HOST PORT NBYTES SEED COUNT  -> {"flows": [{"bytes", "sha256", "t0", "t1"}, ...]}

`send` opens COUNT parallel connections; connection i sends NBYTES random bytes (seed SEED+i),
shuts down its write side and waits for the server's close. `sink` accepts COUNT connections
and hashes what each receives until EOF."""

import hashlib
import json
import random
import socket
import sys
import threading
import time


def sink(host, port, count):
    srv = socket.create_server((host, int(port)), backlog=256)
    print(json.dumps({"ready": True}), flush=True)
    out, threads = [], []

    def one(c):
        h, n, t0 = hashlib.sha256(), 0, time.time()
        while chunk := c.recv(1 << 16):
            h.update(chunk)
            n += len(chunk)
        out.append({"bytes": n, "sha256": h.hexdigest(), "t0": t0, "t1": time.time()})
        c.close()

    for _ in range(int(count)):
        c, _ = srv.accept()
        t = threading.Thread(target=one, args=(c,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    print(json.dumps({"flows": out}), flush=True)


def send(host, port, nbytes, seed, count):
    out = []

    def one(i):
        data = random.Random(int(seed) + i).randbytes(int(nbytes))
        t0 = time.time()
        c = socket.create_connection((host, int(port)), timeout=120)
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)
        c.recv(1)
        out.append(
            {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "t0": t0,
             "t1": time.time()}
        )  # fmt: skip

    threads = [threading.Thread(target=one, args=(i,)) for i in range(int(count))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"flows": out}), flush=True)


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    {"sink": sink, "send": send}[mode](*args)
