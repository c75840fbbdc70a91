"""`Result.to_json` is `json.dumps(summary, indent=2, sort_keys=True)` byte for byte, written
by the core's encoder (CPython's encodes an indent in pure Python); anything that encoder
leaves to `json` still comes out as `json` writes it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import spacetp
from spacetp import _core
from spacetp.result import Result

ASYM_EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "asymmetry.toml"

TRICKY = [
    {},
    [],
    {"b": {}, "a": [1, 2.5, None, True, False, "x", []]},
    {"é": 'ü\u0001\x7f\n\t\r\b\f"\\ /\U0001f600', "Z": 1, "a": 2, "ä": 3},
    {"big": 1e16, "small": 1e-05, "fixed": 1e15, "tiny": 0.0001, "neg0": -0.0, "int": 2**70},
    [float("nan"), float("inf"), -float("inf"), 5e-324, 1.7976931348623157e308, -7],
]


@pytest.mark.parametrize("value", TRICKY)
def test_the_core_writes_what_json_writes(value):
    assert _core.dumps_indent2_sorted(value) == json.dumps(value, indent=2, sort_keys=True)


def test_floats_over_the_whole_range_are_written_as_python_writes_them():
    rng = random.Random(1)
    xs = [rng.uniform(-1, 1) * 10 ** rng.randint(-300, 300) for _ in range(5000)]
    assert _core.dumps_indent2_sorted(xs) == json.dumps(xs, indent=2, sort_keys=True)


def test_what_the_core_leaves_to_json_still_comes_out_as_json_writes_it():
    # A tuple, a non-string key, a subclass: the core's encoder declines, json encodes.
    class Count(int):
        pass

    for value in ({"t": (1, 2)}, {1: "one"}, {"c": Count(3)}):
        assert _core.dumps_indent2_sorted(value) is None
        assert Result(summary=value).to_json() == json.dumps(value, indent=2, sort_keys=True)


def test_a_run_summary_is_written_as_json_writes_it():
    res = spacetp.run(
        {"stop": "2 s", "nodes": [{"name": "a"}, {"name": "b"}],
         "links": [{"between": ["a", "b"], "rate": "10 Mb/s", "delay": "20 ms"}],
         "flows": [{"from": "a", "to": "b", "bytes": "100 kB"}]}
    )  # fmt: skip
    assert res.to_json() == json.dumps(res.summary, indent=2, sort_keys=True)


def test_cycles_deep_nesting_and_lone_surrogates_are_left_to_json():
    # The core declines; json raises (a cycle, too deep) or writes \udc80 as Python does.
    loop: dict = {}
    loop["a"] = loop
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    for value in (loop, deep, {"a": "\udc80"}, {"\ud800": 1}):
        assert _core.dumps_indent2_sorted(value) is None
    assert Result(summary={"a": "\udc80"}).to_json() == '{\n  "a": "\\udc80"\n}'
    with pytest.raises(ValueError, match="Circular reference"):
        Result(summary=loop).to_json()


@pytest.mark.parametrize(
    "name", ["attack", "cfdp-geo", "mars-relay-dtn", "deep-space-ltp", "dumbbell", "markov"]
)
def test_a_summary_never_read_is_written_by_the_core_as_json_writes_the_one_read(name):
    # `to_json` of a summary Python never opened is written from the core's own summary
    # (attacks, CFDP, the DTN's nodes, LTP, many flows, a Markov channel); the same run
    # read into Python and encoded by `json` gives the same text.
    sc = spacetp.load(ASYM_EXAMPLE.with_name(f"{name}.toml"))
    unread, read = spacetp.run(sc), spacetp.run(sc)
    assert read.summary["flows"]
    assert unread.to_json() == json.dumps(read.summary, indent=2, sort_keys=True)


def test_an_unread_summary_pickles_and_a_changed_one_is_written_as_changed():
    import pickle

    res = spacetp.run(spacetp.load(ASYM_EXAMPLE))
    back = pickle.loads(pickle.dumps(res))
    assert back.summary == json.loads(res.to_json())
    back.summary["flows"][0]["name"] = "renamed"
    assert '"name": "renamed"' in back.to_json()
    res.summary = {"a": 1}
    assert res.to_json() == '{\n  "a": 1\n}'


def test_a_result_has_exactly_one_summary():
    with pytest.raises(ValueError, match="needs its summary"):
        Result()
    res = spacetp.run(spacetp.load(ASYM_EXAMPLE))
    with pytest.raises(ValueError, match="needs its summary"):
        Result(summary={"a": 1}, core_summary=res._core_summary)
    with pytest.raises(ValueError, match="needs its summary"):
        res.summary = None


def test_a_summary_written_to_a_file_is_to_json_and_a_newline(tmp_path):
    # Written by the core (the summary never opened in Python), then by Python (opened).
    for opened in (False, True):
        res = spacetp.run(ASYM_EXAMPLE)
        out = tmp_path / f"opened-{opened}.json"
        if opened:
            assert res.flows
        res.write_json(out)
        assert out.read_text() == res.to_json() + "\n"
        assert json.loads(out.read_text()) == res.summary


def test_a_summary_that_cannot_be_written_names_the_file(tmp_path):
    res = spacetp.run(ASYM_EXAMPLE)
    target = tmp_path / "no-such-folder" / "a.json"
    with pytest.raises(OSError, match="no-such-folder"):
        res.write_json(target)
