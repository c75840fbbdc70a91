"""The contact plan a constellation's bundle agents route by. Bundles are routed by the
agents' Contact Graph Routing, not by the packets' forwarding state, so the plan must say
when each link may carry them: a GSL while its station may use the satellite (the rule the
routing uses, step by step), an ISL for the whole run; each contact at the link's rate,
its light time the longest the link has during the contact. Written only for scenarios
with bundle agents and no contact plan of their own; the links keep their own delays
(`drive_links` false unless the scenario sets it)."""

from __future__ import annotations

from spacetp import units
from spacetp.linksrc.common import fail

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
    if not isinstance(link.get("delay", 0), dict):
        return units.to_si(link.get("delay", 0))[0]
    sched = link["delay"]["schedule"]
    inside = [d for t, d in sched if t0 <= t <= t1]
    before = [d for t, d in sched if t < t0][-1:]
    after = [d for t, d in sched if t > t1][:1]
    return max(inside + before + after)


def _bytes_per_s(rate: object) -> float:
    """A link's rate (checked by the core already) in bytes/s: a schedule's largest, as
    the core's plan from the links takes it (the agents' belief), and at most what ION
    holds (2^32 - 1 B/s: only a device's far hop is faster, and its device's contact is
    the one that limits)."""
    values = [v for _, v in rate["schedule"]] if isinstance(rate, dict) else [rate]
    return min(max(units.to_si(v)[0] for v in values) / 8, ION_MAX_RATE)


def plan(nodes: list[dict], links: list[dict]) -> str:
    """The plan, in ionrc syntax, over the scenario's `nodes` (ipn numbers: `dtn_node`, or
    the index + 1, as the core numbers them) and its `links`, each with its `usable`
    intervals (`one_way`: from its first end only) and checked settings."""
    number = {n["name"]: n.get("dtn_node", i + 1) for i, n in enumerate(nodes)}
    lines = ["# derived by spacetp from the constellation: GSLs while usable, ISLs always"]
    for link in links:
        fwd = _bytes_per_s(link["rate"])
        back = _bytes_per_s(link.get("rate_back", link["rate"]))
        a, b = (number[x] for x in link["between"])
        for t0, t1 in link["usable"]:
            span = f"+{_num(t0)} +{_num(t1)}"
            lines.append(f"a contact {span} {a} {b} {_num(fwd)}")
            if not link.get("one_way"):
                lines.append(f"a contact {span} {b} {a} {_num(back)}")
            lines.append(f"a range {span} {a} {b} {_num(_longest_delay(link, t0, t1))}")
    return "\n".join(lines) + "\n"


# A scenario's own link with one of these is up or down by its own rules: the plan derived
# here cannot say when, so such a scenario gives its plan itself.
_OWN_AVAILABILITY = ("outages", "up", "up_back", "contacts", "orbit", "ephemeris", "trace")


def add_plan(sc: dict, end: float) -> None:
    """Give `sc` (expanded: the constellation's links with their `usable` intervals, a
    device's far hops `one_way`: devices.py) the derived plan when it has bundle agents and
    no plan of its own, and take those keys off the links (the core has no such fields).
    The scenario's own links are in it for the whole run (to `end`), at their rates, with
    their first delay; one that goes up and down by rules of its own is refused, by path."""
    ours = [x for x in sc["links"] if "usable" in x]
    dtn = sc.get("dtn") if isinstance(sc.get("dtn"), dict) else {}
    own = "contact_plan" in dtn or "contact_plan_file" in dtn
    if wanted(sc) and not own and ours:
        theirs = []
        for i, x in enumerate(sc["links"]):
            if "usable" in x or not isinstance(x, dict) or "rate" not in x:
                continue  # (a link without a rate is refused by the core)
            rule = next((k for k in _OWN_AVAILABILITY if x.get(k)), None)
            if rule is not None:
                raise fail(
                    f"links[{i}].{rule}",
                    "bundles over a constellation route by a plan derived from it, which "
                    "cannot follow this link's own availability: give dtn.contact_plan",
                )
            delay = x.get("delay", 0)
            first = delay["schedule"][0][1] if isinstance(delay, dict) else delay
            theirs.append({**x, "delay": first, "usable": [[0.0, end]]})
        text = plan(sc["nodes"], theirs + ours)
        sc["dtn"] = {**dtn, "contact_plan": text, "drive_links": dtn.get("drive_links", False)}
    for x in ours:
        del x["usable"]
        x.pop("one_way", None)
