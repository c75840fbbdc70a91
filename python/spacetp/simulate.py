"""Running scenarios from Python."""

from __future__ import annotations

import json
from pathlib import Path

from spacetp.result import Result
from spacetp.scenario import ScenarioError, copy_of, load, to_json


def run(
    scenario: dict | str | Path,
    seed: int | None = None,
    *,
    pcap: dict[str, str] | None = None,
    keylog: str | Path | None = None,
    qlog: str | Path | None = None,
    trace_interval: str | None = None,
    trace_segments: bool = False,
    copy: bool = True,
) -> Result:
    """Simulate `scenario` (a dict, or the path of a TOML file).

    seed: overrides the scenario's seed. pcap: {link selector: file}, a selector being a link
    index ("1"), "links[1]" or "a-b". keylog: write the TLS secrets of every QUIC connection
    to this file (SSLKEYLOGFILE format: `tshark -o tls.keylog_file:FILE` decrypts the pcaps).
    qlog: write a qlog (JSON-SEQ, which qvis reads) of each end of every QUIC connection into
    this folder. trace_interval: sample every flow's sender state this often (e.g.
    "100 ms"); trace_segments: log every data segment sent. copy=False: the caller gives
    the dict up, which the run changes and the result keeps (no copy: 6 ms for a file of
    10 000 flows; `spacetp run` reads its file for this run only).
    """
    from spacetp import _core

    if isinstance(scenario, str | Path):
        sc = load(scenario)
    else:
        sc = copy_of(scenario) if copy else scenario
    if seed is not None:
        if not isinstance(seed, int) or seed < 0:
            raise ScenarioError(f"seed: {seed!r} must be a whole number >= 0")
        sc["seed"] = seed
    if trace_interval is not None or trace_segments:
        tr = sc.setdefault("trace", {})
        if trace_interval is not None:
            tr["interval"] = trace_interval
        if trace_segments:
            tr["segments"] = True
    taps = [(str(k), str(v)) for k, v in (pcap or {}).items()]
    try:
        raw = _core.run_json(
            to_json(sc),
            taps,
            None if keylog is None else str(keylog),
            None if qlog is None else str(qlog),
        )
    except ValueError as e:
        raise ScenarioError.from_core(e) from None
    return Result.from_core(raw, sc)


def protocols() -> dict[str, dict]:
    """Every protocol profile: {name: {"description": ..., "settings": {...}, "family": ...}}.
    The family says where a profile comes from: "textbook" (the papers' and ns-3's
    mechanisms), "linux" (what a Linux kernel does), "draft", "scps", "windows" or "quic"."""
    from spacetp import _core

    return {
        name: {"description": desc, "settings": json.loads(cfg), "family": family}
        for name, desc, cfg, family in _core.protocols()
    }


def linux_base() -> list[tuple[str, str]]:
    """What the linux-* profiles share, setting by setting, with where Linux sets it."""
    from spacetp import _core

    return [tuple(x) for x in _core.linux_base()]


def scps_ri_base() -> list[tuple[str, str]]:
    """The scps-ri* profiles' settings, with where the SCPS Reference Implementation sets them."""
    from spacetp import _core

    return [tuple(x) for x in _core.scps_ri_base()]
