"""Ground stations by city name, from the table Hypatia's satgenpy ships (`cities.txt`
beside this file, with its provenance): "Paris", "Moscow", "Saint Petersburg" and
"Sankt-Peterburg-(Saint-Petersburg)" all find their city."""

from __future__ import annotations

import difflib
import unicodedata
from functools import cache
from pathlib import Path

from spacetp.linksrc.common import fail


def _norm(text: str) -> str:
    """Lower case, accents off, hyphens as spaces, spaces collapsed."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(plain.replace("-", " ").lower().split())


def _keys(name: str) -> set[str]:
    """The spellings a user may give: the table's name, its parts before and inside the
    parentheses or around a double hyphen ("Guangzhou--Guangdong"), any case or accent."""
    keys = {_norm(name), _norm(name.replace("(", "").replace(")", ""))}
    if "(" in name:
        head, _, inner = name.partition("(")
        keys |= {_norm(head), _norm(inner.rstrip(")"))}
    if "--" in name:
        keys |= {_norm(part) for part in name.split("--")}
    return {k for k in keys if k}


@cache
def table() -> dict[str, dict]:
    """Every spelling -> the city's station (name as the user is shown it)."""
    out: dict[str, dict] = {}
    for line in (Path(__file__).parent / "cities.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        _id, name, lat, lon, elev = line.split(",")
        st = {"name": name, "lat": float(lat), "lon": float(lon), "alt_m": float(elev), "mask": 0.0}
        for k in _keys(name):
            out.setdefault(k, st)
    return out


def city(name: str, path: str) -> dict:
    """The station of city `name`, named as given; an unknown one names the closest."""
    st = table().get(_norm(name))
    if st is None:
        close = difflib.get_close_matches(_norm(name), list(table()), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise fail(
            path,
            f"unknown city {name!r}: the table (Hypatia's 100 most populous cities) has no "
            f"such name{hint} Give it as a station instead: {{ name, lat, lon }}",
        )
    return dict(st) | {"name": name}
