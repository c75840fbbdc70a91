"""`links[i].trace`: recorded traces a link replays.

A Mahimahi packet-delivery trace (the format of Mahimahi's `mm-link` and of Pantheon) has
one line per delivery opportunity, the time in milliseconds from the start; each is one
MTU-sized packet (1500 bytes), several lines may share a time, and the trace repeats once
its last time is reached. It becomes a step rate schedule: opportunities x packet size per
`bin`. A delay CSV (`time,delay`) becomes a linear delay schedule."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from spacetp.linksrc.common import Fields, fail, horizon, linear, seconds, steps, table
from spacetp.units import to_si

FIELDS = {
    "mahimahi",
    "mahimahi_back",
    "packet_size",
    "bin",
    "repeat",
    "duration",
    "delay_csv",
    "delay_csv_back",
}


def _read(file: object, path: str) -> list[str]:
    if not isinstance(file, str):
        raise fail(path, "must be a file name")
    try:
        return Path(file).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise fail(path, f"cannot read {file}: {e.strerror or e}") from None


def mahimahi_rate(
    file: str, path: str, size_bytes: float, bin_s: float, repeat: bool, dur: float | None
) -> tuple[np.ndarray, np.ndarray]:
    """(bin start times, rates in b/s) of a Mahimahi trace."""
    ms = []
    for no, line in enumerate(_read(file, path), 1):
        s = line.strip()
        if not s:
            continue
        if not s.isdigit():
            raise fail(path, f"{file} line {no}: {s!r} is not a whole number of milliseconds")
        v = int(s)
        if ms and v < ms[-1]:
            raise fail(
                path,
                f"{file} line {no}: {v} ms is before the previous line's "
                f"{ms[-1]} ms; a Mahimahi trace's times never decrease",
            )
        ms.append(v)
    if not ms:
        raise fail(path, f"{file}: no delivery opportunity in the trace")
    period = max(ms[-1], 1) / 1000.0
    t_op = np.array(ms) / 1000.0
    end = dur if (repeat and dur is not None) else period
    if repeat and end > period:
        reps = int(math.ceil(end / period))
        t_op = (t_op[None, :] + period * np.arange(reps)[:, None]).ravel()
    nbins = max(int(math.ceil(end / bin_s - 1e-9)), 1)
    counts, _ = np.histogram(t_op, bins=nbins, range=(0.0, nbins * bin_s))
    rate = counts * size_bytes * 8.0 / bin_s
    times = np.arange(nbins) * bin_s
    if rate[-1] <= 0:  # the core needs a last rate above 0: after the trace, its mean
        times = np.append(times, nbins * bin_s)
        rate = np.append(rate, len(ms) * size_bytes * 8.0 / period)
    return times, rate


def delay_csv(file: str, path: str) -> tuple[np.ndarray, np.ndarray]:
    """(times, delays) in seconds from a `time,delay` CSV (header optional, it may give
    units: time_s or time_ms, delay_s or delay_ms)."""
    rows = list(csv.reader(line for line in _read(file, path) if not line.startswith("#")))
    rows = [r for r in rows if r and any(c.strip() for c in r)]
    scale = [1.0, 1.0]
    if rows and not _is_number(rows[0][0]):
        head = [c.strip().lower() for c in rows[0]]
        if len(head) != 2:
            raise fail(path, f"{file} line 1: the header names two columns, time and delay")
        for i, h in enumerate(head):
            scale[i] = 1e-3 if h.endswith("_ms") else 1.0
        rows = rows[1:]
    t, d = [], []
    for no, r in enumerate(rows, 1):
        if len(r) != 2 or not all(_is_number(c) for c in r):
            raise fail(path, f"{file} row {no}: give two numbers, time and delay")
        ti, di = float(r[0]) * scale[0], float(r[1]) * scale[1]
        if t and ti <= t[-1]:
            raise fail(
                path,
                f"{file} row {no}: time {ti:g} s is not after the previous "
                f"{t[-1]:g} s; times must be strictly increasing",
            )
        if ti < 0 or di < 0:
            raise fail(path, f"{file} row {no}: times and delays are 0 or more")
        t.append(ti)
        d.append(di)
    if not t:
        raise fail(path, f"{file}: no sample")
    return np.array(t), np.array(d)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def resolve(link: dict, path: str, stop, fields: Fields):
    """Set rates and delays from the traces; returns a maker of the sampled table (pandas:
    built only when `spacetp schedule` shows it)."""
    tr = table(link["trace"], path, FIELDS)
    size = to_si(tr.get("packet_size", 1500))
    if size is None or size[1] not in (None, "size") or size[0] <= 0:
        raise fail(f"{path}.packet_size", f"{tr.get('packet_size')!r} is not a size above 0")
    bin_s = seconds(tr.get("bin", 0.1), f"{path}.bin", positive=True)
    repeat = tr.get("repeat", True)
    if not isinstance(repeat, bool):
        raise fail(f"{path}.repeat", "true or false")
    dur = None
    if repeat and (tr.get("mahimahi") or tr.get("mahimahi_back")):
        dur = horizon(tr, "duration", path, stop)
    columns = []  # (time_s, {column: values})
    for key, field in (("mahimahi", "rate"), ("mahimahi_back", "rate_back")):
        if tr.get(key) is None:
            continue
        t, r = mahimahi_rate(tr[key], f"{path}.{key}", size[0], bin_s, repeat, dur)
        fields.put(field, {"schedule": steps(t, r)}, f"trace.{key}")
        columns.append((t, {f"{field}_bps": r}))
    for key, field in (("delay_csv", "delay"), ("delay_csv_back", "delay_back")):
        if tr.get(key) is None:
            continue
        t, d = delay_csv(tr[key], f"{path}.{key}")
        fields.put(field, {"schedule": linear(t, d)}, f"trace.{key}")
        columns.append((t, {f"{field}_s": d}))
    if not columns:
        raise fail(path, "give a trace: mahimahi, mahimahi_back, delay_csv or delay_csv_back")

    def sampled():
        import pandas as pd

        frames = [pd.DataFrame({"time_s": t, **cols}) for t, cols in columns]
        df = frames[0]
        for f in frames[1:]:
            df = pd.merge(df, f, on="time_s", how="outer")
        return df.sort_values("time_s").reset_index(drop=True)

    return sampled
