"""`spacetp gateway --config gw.toml`: the gateway's settings in one TOML file.

The keys are the command's long options with `_` for `-` (`keepalive_interval` for
`--keepalive-interval`), so the file and the flags are one vocabulary and every flag overrides
the file. `tcp` and `quic` are tables (the flags take the same as JSON text). Unknown keys and
values of the wrong kind are refused with the file, the key and what is allowed; the relay's
own settings are then checked by the core, as for the flags (`spacetp._core.gateway_check`).
Process-level options (`--link-fd`, `--link-state-fd`, `--make-cert`, `--cleanup`,
`--check`) are flags only.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from spacetp.live.gateway_net import INTERCEPT_PORT

# key: (kind, default, what it is). Kinds: str, int, number, bool, list (of strings), table.
KEYS: dict[str, tuple[str, Any, str]] = {
    "protocol": (
        "str",
        "scps-tp",
        "what crosses the link: an SCPS-TP or TCP profile, or quic, "
        "quic-cubic, quic-bbr, quic-newreno",
    ),
    "local": ("str", None, "this gateway's IPv4 address on the space link"),
    "peer": ("str", None, "the peer gateway's address on the space link"),
    "listen": ("list", [], "ADDRESS:PORT=SCPS_PORT rules: accept kernel TCP, carry it to the peer"),
    "forward": ("list", [], "SCPS_PORT=ADDRESS:PORT rules: relay to a kernel-TCP destination"),
    "forward_original": ("bool", False, "relay connections for other hosts to that host"),
    "intercept": ("list", [], "LAN interfaces whose TCP is intercepted (nftables tproxy)"),
    "intercept_port": ("int", INTERCEPT_PORT, "port of the transparent socket"),
    "tcp": ("table", None, "overrides of the profile ([flows.tcp] of scenarios)"),
    "quic": ("table", None, "QUIC overrides ([flows.quic] of scenarios)"),
    "quic_port": ("int", None, "UDP port of the QUIC tunnel (default 4433)"),
    "tls_cert": ("str", None, "the PEM certificate both QUIC gateways share"),
    "tls_key": ("str", None, "its private key (PEM)"),
    "mtu": ("int", 1500, "largest IP packet on the space link"),
    "tun": ("str", None, "TUN device to create as the space link"),
    "space_if": ("list", [], "interfaces the space link arrives on (with tun)"),
    "udp": ("str", None, "LOCAL_ADDR:PORT,PEER_ADDR:PORT: IPv4 packets in UDP datagrams"),
    "link_state_udp": ("str", None, "ADDRESS:PORT where link-state notices arrive"),
    "duration": ("number", None, "stop after this many seconds"),
    "drain": ("number", None, "seconds open transfers may finish after SIGTERM"),
    "keepalive": ("number", None, "seconds of silence before keepalive probes (default 120)"),
    "keepalive_interval": ("number", None, "seconds between probes (default 30)"),
    "keepalive_probes": ("int", None, "unanswered probes before both ends are reset (default 4)"),
    "after_crash": ("str", "open", "what leftover rules do after a crash: open or closed"),
    "stats": ("str", None, "write the counters as JSON to this file at the stop"),
    "metrics": ("str", None, "ADDRESS:PORT of the Prometheus metrics endpoint (/metrics)"),
}

_KINDS = {
    "str": ((str,), "a string"),
    "int": ((int,), "a whole number"),
    "number": ((int, float), "a number"),
    "bool": ((bool,), "true or false"),
    "list": ((list,), "a list of strings"),
    "table": ((dict,), "a table"),
}


def load(path: Path) -> dict[str, Any]:
    """The file's settings, checked for unknown keys and kinds; ValueError names the file and
    the key."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    for key, value in data.items():
        if key not in KEYS:
            raise ValueError(f"{path}: unknown key `{key}`; the keys are: {', '.join(KEYS)}")
        kind = KEYS[key][0]
        types, want = _KINDS[kind]
        ok = isinstance(value, types) and not (kind != "bool" and isinstance(value, bool))
        if ok and kind == "list":
            ok = all(isinstance(x, str) for x in value)
        if not ok:
            raise ValueError(f"{path}: {key}: {value!r} is not {want} ({KEYS[key][2]})")
    return data


def resolve(file: dict[str, Any], flags: dict[str, Any]) -> dict[str, Any]:
    """Every setting: the flag where one was given (not None; a list flag replaces the file's
    list), else the file's value, else the default."""
    out = {}
    for key, (_, default, _) in KEYS.items():
        flag = flags.get(key)
        out[key] = flag if flag is not None else file.get(key, default)
    return out


def reference() -> str:
    """The keys as a Markdown table (docs/live.md's)."""
    rows = ["| key | kind | default | meaning |", "|---|---|---|---|"]
    for key, (kind, default, what) in KEYS.items():
        d = "none" if default in (None, []) else f"`{default}`".lower()
        rows.append(f"| `{key}` | {kind} | {d} | {what} |")
    return "\n".join(rows)
