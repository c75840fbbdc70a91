"""What `spacetp schedule` shows: each link direction's schedules as the core will read them
(`_core.link_schedules`), sampled on a grid beside the orbit or ephemeris columns that
produced them, as a table, a CSV and a figure."""

from __future__ import annotations

import json
from typing import Any

import numpy as np


def core_schedules(resolved: dict) -> list[dict]:
    """Every link's two directions as the world builds them (rate, delay, down)."""
    from spacetp import _core
    from spacetp.errors import ScenarioError

    try:
        return json.loads(_core.link_schedules(json.dumps(resolved)))["links"]
    except ValueError as e:
        raise ScenarioError.from_core(e) from None


def varies(link: dict) -> bool:
    return any(
        len(d["rate_bps"]) > 1 or len(d["delay_s"]) > 1 or d["down"] for d in link["directions"]
    )


def _step(points: list, t: np.ndarray) -> np.ndarray:
    pt = np.array([p[0] for p in points])
    pv = np.array([p[1] for p in points])
    i = np.searchsorted(pt, t, side="right") - 1
    return pv[np.clip(i, 0, len(pv) - 1)]


def _linear(points: list, t: np.ndarray) -> np.ndarray:
    return np.interp(t, [p[0] for p in points], [p[1] for p in points])


def _up(down: list, t: np.ndarray) -> np.ndarray:
    up = np.ones(len(t), dtype=bool)
    for s, e in down:
        e = np.inf if e is None else e
        up &= ~((t >= s) & (t < e))
    return up


def horizon(sc: dict, links: list[dict], tables: dict) -> float:
    from spacetp.units import to_si

    if sc.get("stop") is not None and to_si(sc["stop"]):
        return to_si(sc["stop"])[0]
    last = [0.0]
    for lk in links:
        for d in lk["directions"]:
            last += [d["rate_bps"][-1][0], d["delay_s"][-1][0]]
            last += [x for iv in d["down"] for x in iv if x is not None]
    for t in tables.values():
        for df in t.values():
            last.append(float(df["time_s"].max()))
    return max(last) or 1.0


def sample(link: dict, t: np.ndarray, tables: dict[str, Any] | None):
    """One link's columns over `t`: delay, rate and up of each direction, and the columns of
    its orbit or ephemeris table (matched to the nearest earlier sample)."""
    import pandas as pd

    f, b = link["directions"]
    df = pd.DataFrame(
        {
            "time_s": t,
            "delay_s": _linear(f["delay_s"], t),
            "delay_back_s": _linear(b["delay_s"], t),
            "rate_bps": _step(f["rate_bps"], t),
            "rate_back_bps": _step(b["rate_bps"], t),
            "up": _up(f["down"], t),
            "up_back": _up(b["down"], t),
        }
    )
    for src, tab in (tables or {}).items():
        if src == "trace":
            continue
        extra = tab.drop(columns=[c for c in tab.columns if c in df.columns and c != "time_s"])
        df = pd.merge_asof(df, extra.sort_values("time_s"), on="time_s", direction="backward")
    df.insert(0, "link", f"links[{link['index']}] {link['between'][0]}-{link['between'][1]}")
    return df


def windows(t: np.ndarray, up: np.ndarray) -> list[tuple[float, float]]:
    """Maximal up intervals of a sampled series."""
    out, s = [], None
    for ti, u in zip(t.tolist(), up.tolist(), strict=True):
        if u and s is None:
            s = ti
        elif not u and s is not None:
            out.append((s, ti))
            s = None
    if s is not None:
        out.append((s, float(t[-1])))
    return out


def mahimahi(direction: dict, end: float, packet_bytes: int = 1500) -> list[int]:
    """A direction's rate schedule as a Mahimahi packet-delivery trace over [0, end]: one
    line (a millisecond) per `packet_bytes` the link can deliver, none while it is down."""
    ms = np.arange(0, int(np.ceil(end * 1000)) + 1) / 1000.0
    rate = _step(direction["rate_bps"], ms[:-1]) * _up(direction["down"], ms[:-1])
    bits = np.concatenate([[0.0], np.cumsum(rate * 1e-3)])
    opportunities = np.floor(bits / (8 * packet_bytes)).astype(int)
    out: list[int] = []
    for k in np.flatnonzero(np.diff(opportunities)):
        out += [int(k + 1)] * int(opportunities[k + 1] - opportunities[k])
    return out


def up_windows(down: list, end: float) -> list[tuple[float, float]]:
    """The up intervals within [0, end] of a direction's down intervals (exact times)."""
    out, cursor = [], 0.0
    for s, e in down:
        e = end if e is None else min(e, end)
        if s > cursor and cursor < end:
            out.append((cursor, min(s, end)))
        cursor = max(cursor, e)
    if cursor < end:
        out.append((cursor, end))
    return out


def plot(frames: list, path: str, title: str) -> None:
    """Elevation (when known), delay, rate, and the up windows shaded, for each link."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    has_el = any("elevation_deg" in df.columns for df in frames)
    rows = 3 if has_el else 2
    fig, axes = plt.subplots(rows, 1, figsize=(9, 2.3 * rows + 0.6), sharex=True)
    ax_el = axes[0] if has_el else None
    ax_d, ax_r = axes[-2], axes[-1]
    for df in frames:
        label = df["link"].iloc[0]
        t = df["time_s"].to_numpy()
        for ax in axes:
            for s, e in windows(t, df["up"].to_numpy()):
                ax.axvspan(s, e, color="tab:green", alpha=0.08, lw=0)
        if ax_el is not None and "elevation_deg" in df.columns:
            ax_el.plot(t, df["elevation_deg"], label=label)
        ax_d.plot(t, df["delay_s"] * 1e3, label=f"{label} forward")
        if not np.allclose(df["delay_s"], df["delay_back_s"]):
            ax_d.plot(t, df["delay_back_s"] * 1e3, ls="--", label=f"{label} back")
        ax_r.step(t, df["rate_bps"] / 1e6, where="post", label=f"{label} forward")
        if not np.allclose(df["rate_bps"], df["rate_back_bps"]):
            ax_r.step(t, df["rate_back_bps"] / 1e6, where="post", ls="--", label=f"{label} back")
    if ax_el is not None:
        ax_el.set_ylabel("elevation (deg)")
        ax_el.axhline(0, color="grey", lw=0.5)
    ax_d.set_ylabel("one-way delay (ms)")
    ax_r.set_ylabel("rate (Mb/s)")
    ax_r.set_xlabel("simulated time (s); shaded: link up")
    ax_d.legend(fontsize=7, loc="best")
    ax_r.legend(fontsize=7, loc="best")
    axes[0].set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
