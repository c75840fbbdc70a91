"""What a scenario's path looks like to one flow, read from the scenario itself (no run): the
links it crosses from sender to receiver, the bottleneck rate each way, the propagation round
trip, the loss probability of a full data packet and of an ACK, and what makes the path
change over time (delay schedules, outages, bursty or scripted losses).

`spacetp compare` uses these facts as the inputs of the analytic models and for its warning
on transfers too short to fill the path (`short_transfer`). Only declared `[[links]]` are
followed: a path through `[topology]` templates (expanded by the core) gives `None`, and the
page says that the models were not applied.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from spacetp import units
from spacetp.human import number, size

DEFAULT_MTU = 1500
ACK_BYTES = 40  # an IPv4 + TCP header without options


@dataclass
class PathFacts:
    """The path of one flow: `hops` as (link index, "forward" | "back"), the bottleneck
    rate of the data direction (`rate_bps`, at `bottleneck`) and of the return direction
    (`ack_rate_bps`, at `ack_bottleneck`), `rtt_s` (propagation both ways, no queueing,
    no serialisation), `loss` of a full `mtu`-byte data packet and `ack_loss` of a 40-byte
    ACK over the whole path (None when the error model has no single rate: Gilbert-Elliott,
    Markov slots, scripted drops), `mtu`, `bytes` (None: unlimited) and `varying`, the
    reasons why a steady-state model does not describe this path."""

    hops: list[tuple[int, str]]
    rate_bps: float
    ack_rate_bps: float
    bottleneck: tuple[int, str]
    ack_bottleneck: tuple[int, str]
    rtt_s: float
    loss: float | None
    ack_loss: float | None
    mtu: int
    bytes: float | None
    loss_text: str = ""
    varying: list[str] = field(default_factory=list)

    @property
    def bdp_bytes(self) -> float:
        return self.rate_bps * self.rtt_s / 8.0

    def summary_index(self, hop: tuple[int, str]) -> int:
        """Index in the run summary's `links` list of a (link, direction): 2i or 2i + 1."""
        return 2 * hop[0] + (0 if hop[1] == "forward" else 1)


START_BDPS = 2.0  # a transfer under this many bandwidth-delay products ranks start-up


def short_transfer(pf: PathFacts | None) -> str:
    """A warning when the transfer is under START_BDPS bandwidth-delay products, else "":
    it ends before a window could fill the path, so a ranking of such transfers says who
    starts fastest, not who moves data fastest."""
    if pf is None or pf.bytes is None or not pf.bdp_bytes:
        return ""
    if pf.bytes >= START_BDPS * pf.bdp_bytes:
        return ""
    return (
        f"The transfer ({size(pf.bytes)}) is under {START_BDPS:g}x the path's "
        f"bandwidth-delay product ({size(pf.bdp_bytes)}): it ends before a window "
        "could fill the path, so this ranks only start-up (the initial window, slow start, "
        "the handshake), not the steady rate a longer transfer would see."
    )


def _si(value, what: str) -> float | None:
    q = units.to_si(value)
    return None if q is None else q[0]


def _delay(link: dict, direction: str, varying: list[str], i: int) -> float:
    d = link.get("delay_back") if direction == "back" else None
    d = link.get("delay", 0) if d is None else d
    if isinstance(d, dict):
        sched = d.get("schedule") or []
        values = [_si(v, "delay") or 0.0 for _, v in sched]
        varying.append(f"links[{i}] has a delay schedule")
        return max(values) if values else 0.0
    return _si(d, "delay") or 0.0


def _rate(link: dict, direction: str) -> float:
    r = link.get("rate_back") if direction == "back" else None
    r = link.get("rate") if r is None else r
    return _si(r, "rate") or float("inf")


def _errors(link: dict, direction: str) -> dict:
    if direction == "back" and "errors_back" in link:
        return link.get("errors_back") or {}
    return link.get("errors") or {}


def packet_loss(errors: dict, nbytes: float) -> float | None:
    """Probability that one packet of `nbytes` bytes is lost to an error model: BER over its
    bits, PER as it is, 0 without errors; None for the models with no single rate."""
    if not errors:
        return 0.0
    if set(errors) - {"ber", "per"}:
        return None
    survive = 1.0
    if "ber" in errors:
        survive *= (1.0 - float(errors["ber"])) ** (8 * nbytes)
    if "per" in errors:
        survive *= 1.0 - float(errors["per"])
    return 1.0 - survive


def _route(links: list[dict], src: str, dst: str) -> list[tuple[int, str]] | None:
    """The fewest-hop path over declared links (the core routes by fewest hops too)."""
    adj: dict[str, list[tuple[str, int, str]]] = {}
    for i, li in enumerate(links):
        a, b = li["between"]
        adj.setdefault(a, []).append((b, i, "forward"))
        adj.setdefault(b, []).append((a, i, "back"))
    prev: dict[str, tuple[str, int, str]] = {}
    seen, todo = {src}, deque([src])
    while todo:
        n = todo.popleft()
        if n == dst:
            break
        for m, i, d in adj.get(n, []):
            if m not in seen:
                seen.add(m)
                prev[m] = (n, i, d)
                todo.append(m)
    if dst not in seen:
        return None
    hops, n = [], dst
    while n != src:
        p, i, d = prev[n]
        hops.append((i, d))
        n = p
    return hops[::-1]


def _flip(d: str) -> str:
    return "back" if d == "forward" else "forward"


def facts(scenario: dict, flow: int = 0) -> PathFacts | None:
    """The facts of `flows[flow]`'s path, or None when the path is not made of declared
    links (a `[topology]`) or the scenario has no such flow."""
    flows = scenario.get("flows") or []
    if flow >= len(flows) or scenario.get("topology"):
        return None
    f = flows[flow]
    links = scenario.get("links") or []
    hops = _route(links, f["from"], f["to"])
    if not hops:
        return None
    mtu = int(_si(f.get("mtu", DEFAULT_MTU), "mtu") or DEFAULT_MTU)
    varying: list[str] = []
    rtt = 0.0
    fwd, back = [], []
    survive_data = survive_ack = 1.0
    unknown_loss = False
    texts = []
    for i, d in hops:
        li = links[i]
        rtt += _delay(li, d, varying, i) + _delay(li, _flip(d), varying, i)
        fwd.append((_rate(li, d), (i, d)))
        back.append((_rate(li, _flip(d)), (i, _flip(d))))
        if li.get("outages"):
            varying.append(f"links[{i}] has outages")
        err, err_back = _errors(li, d), _errors(li, _flip(d))
        p, q = packet_loss(err, mtu), packet_loss(err_back, ACK_BYTES)
        if p is None or q is None:
            unknown_loss = True
            kinds = ", ".join(sorted(set(err) | set(err_back)))
            varying.append(f"links[{i}] loses packets by a model with no single rate ({kinds})")
        else:
            survive_data *= 1.0 - p
            survive_ack *= 1.0 - q
        if "ber" in err:
            texts.append(f"BER {number(err['ber'])} on links[{i}]")
        elif "per" in err:
            texts.append(f"PER {number(err['per'])} on links[{i}]")
    rate, bottleneck = min(fwd, key=lambda x: x[0])
    ack_rate, ack_bottleneck = min(back, key=lambda x: x[0])
    loss = None if unknown_loss else 1.0 - survive_data
    ack_loss = None if unknown_loss else 1.0 - survive_ack
    nbytes = f.get("bytes")
    return PathFacts(
        hops=hops,
        rate_bps=rate,
        ack_rate_bps=ack_rate,
        bottleneck=bottleneck,
        ack_bottleneck=ack_bottleneck,
        rtt_s=rtt,
        loss=loss,
        ack_loss=ack_loss,
        mtu=mtu,
        bytes=None if nbytes is None else _si(nbytes, "bytes"),
        loss_text=", ".join(texts),
        varying=list(dict.fromkeys(varying)),
    )
