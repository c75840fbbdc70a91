"""The protocol profiles `spacetp compare`, `spacetp fit` and `spacetp tune` choose from:
every profile `spacetp protocols` lists (TCP, SCPS-TP and QUIC) plus the transports outside
that registry (EXTRA_PROTOCOLS), with the aliases that are the same profile."""

from __future__ import annotations

from spacetp.scenario import ScenarioError

# Transports outside the TCP/QUIC profile registry (`spacetp protocols`), with what the page
# says about them. A new one is one line here.
EXTRA_PROTOCOLS = {
    "ltp": ("ltp", "LTP (RFC 5326) as NASA ION runs it: blocks, checkpoints and reports, no "
            "congestion control ([flows.ltp])"),
    "bp": ("dtn", "the Bundle Protocol (RFC 9171) over LTP: store and forward by contact "
           "graph routing over the plan the links (or [dtn]) give ([flows.bp])"),
}  # fmt: skip


def registry() -> dict[str, dict]:
    """Every profile to compare: `spacetp protocols` plus EXTRA_PROTOCOLS, as {name:
    {"family", "description", "settings" (None outside the registry)}}."""
    from spacetp.simulate import protocols as profiles

    out = {
        k: {"family": v["family"], "description": v["description"], "settings": v["settings"]}
        for k, v in profiles().items()
    }
    for name, (family, desc) in EXTRA_PROTOCOLS.items():
        out.setdefault(name, {"family": family, "description": desc, "settings": None})
    return out


def all_protocols() -> tuple[list[str], dict[str, str]]:
    """(the profiles `--protocols all` runs, {alias: the profile it is the same as}): two
    profiles with the same family and settings (bbr = linux-bbr, quic = quic-cubic) run
    once, under the first name."""
    names, aliases, seen = [], {}, {}
    for name, info in registry().items():
        key = (info["family"], repr(info["settings"])) if info["settings"] else (name,)
        if key in seen:
            aliases[name] = seen[key]
            continue
        seen[key] = name
        names.append(name)
    return names, aliases


def choose(spec: str | list[str] | None) -> tuple[list[str], dict[str, str]]:
    """The profiles of `--protocols`: None or "all" for all of them, else a comma list
    (or a Python list) of names, each checked against the registry."""
    names, aliases = all_protocols()
    if spec is None or spec == "all" or spec == ["all"]:
        return names, aliases
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    known = registry()
    chosen = []
    for s in items:
        if not s:
            raise ScenarioError(f"--protocols {spec}: an empty name in the list")
        if s not in known:
            raise ScenarioError(
                f"--protocols {s}: unknown protocol; use 'all' or names from `spacetp "
                f"protocols`: {', '.join(known)}"
            )
        if s in chosen:
            raise ScenarioError(f"--protocols {s}: listed twice")
        chosen.append(s)
    return chosen, {}
