"""One GSL device per node, as Hypatia's ns-3 model has it (`gsl.device = "per_node"`): all
the GSLs of a satellite, or of a station, leave through one device whose queue and rate they
share. The expanded network gets, for each node X with GSLs, a device node `X~gsl`:

    X --(device: the GSL rate and queue, no delay)--> X~gsl --(the GSL's delay)--> Y

where Y is any node X may reach by a GSL. X's forwarding entries that lead over a GSL lead
to its device instead; the device forwards to the GSL neighbour X chooses at the instant a
packet leaves the device's queue, and keeps the last one while X's path goes elsewhere (over
an ISL, or none), so what was queued still leaves over a GSL. Hypatia's device fixes each
packet's neighbour when it is queued: on a handover from one satellite to the next, what
was queued goes to the old one there and to the new one here (a queue's worth of packets at
each handover). A device adds no loop: X reaches it only when X's own state leads over it.
The hop from a device to the far end is a link of its own whose rate is far above the
device's (FAR_RATE), so the device's link is the only queue on the way; bundles see it as a
contact from the device only (contacts.py), so they too leave through the device. (A bundle
hop's LTP reports come back over the far hop itself: small, and not through a device.)"""

from __future__ import annotations

GSL_ORIGIN = "constellation.gsl"
FAR_RATE = "1000 Gb/s"  # the device serialised the packet; this hop adds 12 ns per 1500 B


def device(name: str) -> str:
    return f"{name}~gsl"


def per_node(part: dict, end: float) -> dict:
    """`part` (nodes, links, forwarding, with their settings) with a device node for every
    node that has GSLs, its GSLs leaving through it."""
    gsls = [lk for lk in part["links"] if lk["origin"] == GSL_ORIGIN]
    if not gsls:
        return part
    gsl_pairs = {frozenset(lk["between"]) for lk in gsls}
    ends = sorted({x for lk in gsls for x in lk["between"]})
    links = [lk for lk in part["links"] if lk["origin"] != GSL_ORIGIN]
    for x in ends:
        proto = next(lk for lk in gsls if x in lk["between"])
        links.append(
            {
                "between": [x, device(x)],
                "origin": GSL_ORIGIN,
                "delay": "0 s",
                "rate": proto["rate"],
                "queue": proto["queue"],
                "queue_back": proto["queue"],
                "usable": [[0.0, end]],
            }
        )
    for lk in gsls:
        a, b = lk["between"]
        for src, dst in ((a, b), (b, a)):
            far = {k: v for k, v in lk.items() if k not in ("between", "rate")}
            links.append({"between": [device(src), dst], "rate": FAR_RATE, "one_way": True, **far})
    forwarding = []
    for e in part["forwarding"]:
        node, own, dev = e["node"], [], []
        for t, hop in e["schedule"]:
            over_gsl = hop and frozenset((node, hop)) in gsl_pairs
            if over_gsl and (not dev or dev[-1][1] != hop):
                dev.append([t, hop])
            hop = device(node) if over_gsl else hop
            if not own or own[-1][1] != hop:
                own.append([t, hop])
        forwarding.append({**e, "schedule": own})
        if dev:
            forwarding.append({"node": device(node), "to": e["to"], "schedule": dev})
    nodes = part["nodes"] + [{"name": device(x)} for x in ends]
    return {**part, "nodes": nodes, "links": links, "forwarding": forwarding}
