"""Scenario files are read by the core's TOML reader (toml_edit) when they can be: the dict
must be tomllib's, key order included; a date or an error is left to tomllib (its datetime
objects, its words)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import spacetp
from spacetp import _core

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for d in ("examples", "benches", "tests") for p in (ROOT / d).rglob("*.toml"))

ORDERS = [
    "[x.y]\nz = 1\n[x]\nw = 2\n",
    "b = 1\na = 2\n[[f]]\nq = 1\n[f.t]\nr = 2\n[[f]]\nq = 3\n",
    "[t]\nb = 1\n[s]\na = 1\n[t.c]\nd = 1\n",
    "a.b = 1\nc = 2\na.d = 3\n",
    'k = inf\nl = -inf\nm = -0.0\nn = 0x10\no = 1_000\np = """two\nlines"""\nq = \'raw\\n\'\n',
    "x = [1, 'a', [true, 2.5], {y = 1, z = [{}]}]\n",
]


def same(a, b) -> bool:
    # json keeps order and tells 1 from 1.0 and True; NaN aside, it is a faithful check.
    return json.dumps(a) == json.dumps(b)


@pytest.mark.parametrize("text", ORDERS)
def test_the_core_reads_what_tomllib_reads_in_the_same_order(text):
    assert same(_core.toml_loads(text), tomllib.loads(text))


def test_every_shipped_scenario_reads_the_same():
    assert len(FILES) > 20
    for f in FILES:
        text = f.read_text()
        got = _core.toml_loads(text)
        assert got is not None, f
        assert same(got, tomllib.loads(text)), f


def test_dates_and_errors_are_left_to_tomllib():
    assert _core.toml_loads("a = 1979-05-27T07:32:00Z\n") is None
    assert spacetp.loads("a = 1979-05-27T07:32:00Z\n")["a"].year == 1979
    assert _core.toml_loads("a = \n") is None
    with pytest.raises(spacetp.ScenarioError, match="not valid TOML: Invalid value"):
        spacetp.loads("a = \n")


def test_a_byte_order_mark_and_lone_surrogates_are_left_to_tomllib():
    assert _core.toml_loads("\ufeffa = 1\n") is None
    with pytest.raises(spacetp.ScenarioError, match="not valid TOML"):
        spacetp.loads("\ufeffa = 1\n")
    assert _core.toml_loads("a = '\udc80'\n") is None
    assert spacetp.loads("a = '\udc80'\n") == tomllib.loads("a = '\udc80'\n")
