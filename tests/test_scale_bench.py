"""benches/scale.py: its repetitions go in turns over every file (this machine's speed drifts
within minutes, and a ratio of two files measured minutes apart is the drift's), it keeps
each file's best run and its setup's, and its constant-share scenario gives each flow the
same share of a link that grows with N."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from spacetp.scenario import loads

BENCH = Path(__file__).resolve().parents[1] / "benches" / "scale.py"
spec = importlib.util.spec_from_file_location("scale_bench", BENCH)
scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(scale)


def test_repetitions_go_in_turns_and_keep_each_files_best(tmp_path, monkeypatch):
    files = {}
    for name in ("a", "b"):
        files[name] = tmp_path / f"{name}.toml"
        files[name].write_text('name = "x"\nstop = "2 s"\n')
    order = []
    walls = iter([0.5, 0.2, 0.02, 0.03, 0.4, 0.3, 0.01, 0.05])

    def run_once(path):
        order.append(path.name)
        return {"wall": next(walls), "rss_mb": 1.0, "traversals": 10}

    monkeypatch.setattr(scale, "run_once", run_once)
    best = scale.measure(files, reps=2)
    turn = ["a.toml", "b.toml", "a-setup.toml", "b-setup.toml"]
    assert order == turn + turn
    assert (tmp_path / "a-setup.toml").read_text() == 'name = "x"\nstop = "1 us"\n'
    assert best["a"]["wall"] == 0.4 and best["a"]["setup"] == 0.01
    assert best["b"]["wall"] == 0.2 and best["b"]["setup"] == 0.03


def test_constant_share_scenario_scales_the_link_with_the_flows():
    sc = loads(scale.flows_scenario(100, "1000 Mb/s"))
    assert len(sc["flows"]) == 100
    assert sc["links"][0]["rate"] == "1000 Mb/s"
    assert loads(scale.flows_scenario(10))["links"][0]["rate"] == "1 Gb/s"
