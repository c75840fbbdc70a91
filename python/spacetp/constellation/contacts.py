"""The contact plan a constellation's bundle agents route by. Bundles are routed by the
agents' Contact Graph Routing, not by the packets' forwarding state, so the plan must say
when each link may carry them: a GSL while its station may use the satellite (the rule the
routing uses, step by step), an ISL for the whole run; each contact at the link's rate,
its light time the longest the link has during the contact. Written only for scenarios
with bundle agents and no contact plan of their own; the links keep their own delays
(`drive_links` false unless the scenario sets it)."""

from __future__ import annotations

from spacetp import units

ION_MAX_RATE = 4_294_967_295.0  # bytes/s, a 32-bit field


def wanted(sc: dict) -> bool:
    """Whether the run has bundle agents: a `[dtn]` table, a bp flow, CFDP over bundles."""
    if sc.get("dtn") is not None:
        return True
    for f in sc.get("flows") or []:
        if not isinstance(f, dict):
            continue
        cfdp = f.get("cfdp") if isinstance(f.get("cfdp"), dict) else {}
        carrier = cfdp.get("carrier", "bp" if f.get("protocol") == "cfdp-bp" else None)
        if f.get("protocol") == "bp" or (
            f.get("protocol") in ("cfdp", "cfdp-bp") and carrier == "bp"
        ):
            return True
    return False


def _num(x: float) -> str:
    return f"{x:.9f}".rstrip("0").rstrip(".")


def _longest_delay(link: dict, t0: float, t1: float) -> float:
    """The link's longest delay over [t0, t1] (its samples there, and the ones either side,
    between which it is linear; a device's link has one fixed delay)."""
    if not isinstance(link["delay"], dict):
        return units.to_si(link["delay"])[0]
    sched = link["delay"]["schedule"]
    inside = [d for t, d in sched if t0 <= t <= t1]
    before = [d for t, d in sched if t < t0][-1:]
    after = [d for t, d in sched if t > t1][:1]
    return max(inside + before + after)


def plan(nodes: list[dict], links: list[dict]) -> str | None:
    """The plan, in ionrc syntax, over the scenario's `nodes` (ipn numbers: `dtn_node`, or
    the index + 1, as the core numbers them) and the constellation's `links` (with their
    `usable` intervals and settings). None when a link's rate is not one: the core names
    that field."""
    number = {n["name"]: n.get("dtn_node", i + 1) for i, n in enumerate(nodes)}
    lines = ["# derived by spacetp from the constellation: GSLs while usable, ISLs always"]
    for link in links:
        rate = units.to_si(link.get("rate"))
        if rate is None or rate[1] not in ("rate", None):
            return None
        # ION holds rates up to 2^32 - 1 B/s; only a device's far hop is faster (its
        # device's contact is the one that limits).
        bytes_per_s = min(rate[0] / 8, ION_MAX_RATE)
        a, b = (number[x] for x in link["between"])
        for t0, t1 in link["usable"]:
            span = f"+{_num(t0)} +{_num(t1)}"
            lines.append(f"a contact {span} {a} {b} {_num(bytes_per_s)}")
            if not link.get("one_way"):
                lines.append(f"a contact {span} {b} {a} {_num(bytes_per_s)}")
            lines.append(f"a range {span} {a} {b} {_num(_longest_delay(link, t0, t1))}")
    return "\n".join(lines) + "\n"


def add_plan(sc: dict) -> None:
    """Give `sc` (expanded: its nodes and links written with their `usable` intervals, a
    device's far hops `one_way`: devices.py) the derived plan when it has bundle agents and
    no plan of its own, and take those keys off the links (the core has no such fields)."""
    links = [x for x in sc["links"] if "usable" in x]
    dtn = sc.get("dtn") if isinstance(sc.get("dtn"), dict) else {}
    own = "contact_plan" in dtn or "contact_plan_file" in dtn
    if wanted(sc) and not own and links:
        text = plan(sc["nodes"], links)
        if text is not None:
            sc["dtn"] = {**dtn, "contact_plan": text, "drive_links": dtn.get("drive_links", False)}
    for x in links:
        del x["usable"]
        x.pop("one_way", None)
