"""The protocol profiles `spacetp compare`, `spacetp fit` and `spacetp tune` choose from:
every protocol of every transport in the core's registry (`spacetp protocols`: TCP and
SCPS-TP, QUIC, LTP, bp), with the aliases that are the same profile. A new transport in the
registry is listed here with no line of Python."""

from __future__ import annotations

from spacetp.scenario import ScenarioError


def registry() -> dict[str, dict]:
    """Every profile to compare, as `spacetp protocols` lists them: {name: {"family",
    "description", "settings" (None when the path gives them: LTP)}}."""
    from spacetp.simulate import protocols as profiles

    return {
        k: {"family": v["family"], "description": v["description"], "settings": v["settings"]}
        for k, v in profiles().items()
    }


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
