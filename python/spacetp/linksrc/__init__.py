"""Link sources the Python front turns into explicit schedules before a run: `orbit` (SGP4
over TLEs, elements or a Walker shell; `pip install spacetp[orbits]`), `ephemeris` (JPL
DE421), `trace` (Mahimahi and delay CSV files) and the file of `contacts` (whose plan the
core reads itself, with spacetp-dtn).

`resolve(scenario)` is applied wherever a scenario goes to the core (`spacetp.scenario
.to_json`: `spacetp run`, `spacetp.run`, `validate`; sweep workers; `spacetp emulate`), so the
core only ever sees rates, delays, up/down and error rates as values or schedules, and the
schedules are computed once per scenario (cached by the link's content)."""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

from spacetp.linksrc.common import Fields, fail

SOURCES = ("orbit", "ephemeris", "trace")
FILE_KEYS = {
    "trace": ("mahimahi", "mahimahi_back", "delay_csv", "delay_csv_back"),
    "contacts": ("file",),
}
_CACHE: OrderedDict[str, tuple[dict, Any]] = OrderedDict()
_CACHE_SIZE = 32


def _link_likes(sc: dict) -> list[tuple[dict, str, str]]:
    """(container, key, path) of every link-like table: links[i], topology.core/access."""
    out = []
    links = sc.get("links")
    if isinstance(links, list):
        out += [(links, i, f"links[{i}]") for i, lk in enumerate(links) if isinstance(lk, dict)]
    topo = sc.get("topology")
    if isinstance(topo, dict):
        out += [
            (topo, k, f"topology.{k}") for k in ("core", "access") if isinstance(topo.get(k), dict)
        ]
    return out


def needs_resolution(sc: dict) -> bool:
    if sc.get("constellation") is not None:
        return True
    for parent, key, _ in _link_likes(sc):
        lk = parent[key]
        if any(lk.get(s) is not None for s in SOURCES):
            return True
        c = lk.get("contacts")
        if isinstance(c, dict) and c.get("file") is not None:
            return True
    return False


def anchor_paths(sc: dict, base: Path) -> None:
    """Make the relative file names of traces and contact plans relative to `base` (the
    scenario file's folder), in place."""
    for parent, key, _ in _link_likes(sc):
        lk = parent[key]
        for src, keys in FILE_KEYS.items():
            block = lk.get(src)
            if not isinstance(block, dict):
                continue
            for k in keys:
                v = block.get(k)
                if isinstance(v, str) and v and not Path(v).is_absolute():
                    block[k] = str(base / v)


def _require_orbits(what: str, path: str) -> None:
    try:
        import sgp4  # noqa: F401
        import skyfield  # noqa: F401

        if what == "ephemeris":
            import skyfield_data  # noqa: F401
    except ImportError:
        raise fail(
            path,
            f"{'orbits' if what == 'orbit' else 'ephemerides'} need the optional packages: "
            "pip install spacetp[orbits] (sgp4, skyfield, skyfield-data)",
        ) from None


def _file_stamps(link: dict) -> list:
    """What the files a link reads are now (name, size, modification time): a cached result
    is reused only while they are unchanged."""
    out = []
    for src, keys in FILE_KEYS.items():
        block = link.get(src)
        if not isinstance(block, dict):
            continue
        for k in keys:
            v = block.get(k)
            if isinstance(v, str):
                try:
                    st = Path(v).stat()
                    out.append([v, st.st_size, st.st_mtime_ns])
                except OSError:
                    out.append([v, None, None])
    return out


def resolve_link(link: dict, path: str, stop: Any) -> tuple[dict, dict[str, Any]]:
    """The link with its sources turned into fields, and for each source a maker of its
    sampled table (called by `resolve_with_tables` alone: a run needs no pandas)."""
    key = json.dumps([link, stop, _file_stamps(link)], sort_keys=True, default=str)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return copy.deepcopy(hit[0]), hit[1]
    fields = Fields(link, path)
    tables: dict[str, Any] = {}
    if link.get("orbit") is not None:
        _require_orbits("orbit", f"{path}.orbit")
        from spacetp.linksrc import orbit

        tables["orbit"] = orbit.resolve(link, f"{path}.orbit", stop, fields)
    if link.get("ephemeris") is not None:
        _require_orbits("ephemeris", f"{path}.ephemeris")
        from spacetp.linksrc import ephemeris

        tables["ephemeris"] = ephemeris.resolve(link, f"{path}.ephemeris", stop, fields)
    if link.get("trace") is not None:
        from spacetp.linksrc import traces

        tables["trace"] = traces.resolve(link, f"{path}.trace", stop, fields)
    out = fields.apply()
    for s in SOURCES:
        out.pop(s, None)
    c = out.get("contacts")
    if isinstance(c, dict) and c.get("file") is not None:
        if c.get("plan") is not None:
            raise fail(f"{path}.contacts", "give `plan` or `file`, not both")
        try:
            text = Path(c["file"]).read_text(encoding="utf-8")
        except OSError as e:
            raise fail(f"{path}.contacts.file", f"cannot read {c['file']}: {e.strerror}") from None
        out["contacts"] = {k: v for k, v in c.items() if k != "file"} | {"plan": text}
    _CACHE[key] = (copy.deepcopy(out), tables)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out, tables


def resolve(sc: dict) -> dict:
    """`sc` with every link source turned into explicit fields (the same dict when there is
    none; a copy otherwise)."""
    return _resolve_all(sc)[0]


def resolve_with_tables(sc: dict) -> tuple[dict, dict[str, dict[str, Any]]]:
    """`resolve`, and {link path: {source: sampled table}} for `spacetp schedule`."""
    out, makers = _resolve_all(sc)
    return out, {p: {src: make() for src, make in t.items()} for p, t in makers.items()}


def _resolve_all(sc: dict) -> tuple[dict, dict[str, dict[str, Any]]]:
    """`resolve`, and {link path: {source: maker of its sampled table}}."""
    if not isinstance(sc, dict) or not needs_resolution(sc):
        return sc, {}
    if sc.get("constellation") is not None:
        _require_orbits("orbit", "constellation")
        from spacetp.constellation import expand

        sc = expand(sc)
    out = copy.deepcopy(sc)
    tables = {}
    for parent, key, path in _link_likes(out):
        lk = parent[key]
        c = lk.get("contacts")
        if not any(lk.get(s) is not None for s in SOURCES) and not (
            isinstance(c, dict) and c.get("file") is not None
        ):
            continue
        parent[key], t = resolve_link(lk, path, out.get("stop"))
        if t:
            tables[path] = t
    return out, tables


def resolve_json(text: str) -> str:
    """The same on a scenario's JSON text (sweep workers), unchanged when nothing needs it."""
    if not any(f'"{k}"' in text for k in (*SOURCES, "file", "constellation")):
        return text
    try:
        sc = json.loads(text)
    except ValueError:
        return text
    return json.dumps(resolve(sc)) if needs_resolution(sc) else text
