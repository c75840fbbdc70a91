"""Constellations: shells, +Grid ISLs, stations by city, routing every step, flows over the
changing paths, `spacetp schedule`, and bad input (the comparison with Hypatia's satgenpy:
test_constellation_vs_satgenpy.py)."""

from __future__ import annotations

import copy
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import spacetp
from spacetp.constellation import config, expand, geometry, pair_series, routing
from spacetp.scenario import dumps

ROOT = Path(__file__).resolve().parents[1]
KUIPER = ROOT / "examples" / "kuiper-pair.toml"
PAIR = ("Rio de Janeiro", "Saint Petersburg")


def kuiper(stop: str = "20 s") -> dict:
    sc = spacetp.load(KUIPER)
    sc["stop"] = stop
    return sc


def test_plus_grid_links_each_satellite_to_four_neighbours():
    links = geometry.plus_grid(0, 34, 34)
    assert len(links) == 2 * 34 * 34
    degree = np.bincount(np.array(links).ravel(), minlength=34 * 34)
    assert (degree == 4).all()
    # Satellite 0 (plane 0, slot 0): slot 1 and slot 33 of its plane, slot 0 of planes 1, 33.
    assert {b for a, b in links if a == 0} | {a for a, b in links if b == 0} == {1, 33, 34, 33 * 34}


def test_the_shell_is_at_its_altitude_and_inclination():
    con = config.read(kuiper("1 s"))
    geo = geometry.build(con)
    r = np.linalg.norm(geo.sat_pos, axis=-1)
    assert abs(r.mean() - (6378.135 + 630)) < 10, r.mean()
    lat = np.degrees(np.arcsin(geo.sat_pos[..., 2] / r))
    assert 50.5 < lat.max() <= 52.0, lat.max()


def test_each_path_is_its_links_and_its_rtt_their_length_there_and_back_over_c():
    # Independent of the search: walk each step's path and add up its links' lengths from
    # the positions; the route's length must be that sum, and no other path may be shorter
    # than the one taken (checked against the best over every pair of usable satellites).
    sc = kuiper("5 s")
    con = config.read(sc)
    geo = geometry.build(con)
    s = len(geo.sat_names)
    a, b = (geo.gs_names.index(n) for n in PAIR)
    for step in routing.steps(geo, [b]):
        nodes = routing.path(step, 0, s + a, s + b)
        assert nodes and nodes[0] == s + a and nodes[-1] == s + b
        pos = [geo.sat_pos[n, step.k] if n < s else geo.gs_pos[n - s] for n in nodes]
        length = sum(np.linalg.norm(p - q) for p, q in zip(pos, pos[1:], strict=False))
        assert step.dist_km[0, s + a] == pytest.approx(length, rel=1e-9)
        assert all(n < s for n in nodes[1:-1]), "no station relays"
    df = pair_series(sc, [PAIR])
    there_and_back = df["rtt_s"] * routing.C_KM_S / 2
    assert (there_and_back > 9000).all() and (there_and_back < 20000).all()


def test_a_path_that_shortens_under_a_flow_reorders_it_without_a_drop():
    # 5 Mb/s everywhere and a 100 kB window: the path is full (its BDP is 70 kB) and no
    # queue overflows. At 3.4 s the path drops from 14 to 12 hops (113 -> 96 ms): segments
    # on the new path overtake those on the old, and SACK recovery resends one.
    sc = kuiper("20 s")
    sc["constellation"]["gsl"]["rate"] = sc["constellation"]["isl"]["rate"] = "5 Mb/s"
    f = sc["flows"][0]
    f.update(protocol="sack", bytes="5 MB", receive_buffer="100 kB")
    changes = pair_series(sc, [PAIR]).query("changed")
    assert list(changes["t_s"]) == [3.4]
    res = spacetp.run(sc)
    flow = res.flows[0]
    assert flow["complete"] and flow["bytes_undelivered"] == 0
    assert sum(lk["queue_drops"] + lk["error_drops"] for lk in res.links) == 0
    assert flow["retransmitted_segments"] >= 1 and flow["tcp"]["fast_retransmits"] >= 1
    # The same without re-routing (one routing step for the whole run): nothing resent.
    sc["constellation"]["step"] = "30 s"
    still = spacetp.run(sc).flows[0]
    assert still["complete"] and still["retransmitted_segments"] == 0


def test_only_what_packets_can_reach_is_built_and_the_run_is_deterministic():
    sc = kuiper("20 s")
    out = expand(sc)
    names = {n["name"] for n in out["nodes"]}
    assert set(PAIR) <= names and len(names) < 40, len(names)  # of 1158 nodes
    # Every forwarding entry's hop is a neighbour by one of the built links, and leads to
    # the destination or to a node whose own entry toward it is already in force: a packet
    # never reaches a node the expansion gave no forwarding state.
    ends = {frozenset(lk["between"]) for lk in out["links"]}
    first = {(e["node"], e["to"]): e["schedule"][0][0] for e in out["forwarding"]}
    for e in out["forwarding"]:
        for t, nxt in e["schedule"]:
            assert nxt == "" or frozenset((e["node"], nxt)) in ends
            assert nxt in ("", e["to"]) or first[(nxt, e["to"])] <= t, (e["node"], t, nxt)
    # The link delay follows the satellites: a GSL's changes over 20 s.
    gsl = next(lk for lk in out["links"] if PAIR[0] in lk["between"])
    delays = [d for _, d in gsl["delay"]["schedule"]]
    assert max(delays) - min(delays) > 5e-5  # 81 us here
    res = spacetp.run(sc)
    assert res.to_json() == spacetp.run(sc).to_json()
    # What limited the flow is named by the setting a user changes, not an expanded link.
    top = res.flows[0]["limits"][0]
    assert (top["state"], top["setting"]) == ("link", "constellation.gsl.rate"), top


def test_schedule_draws_each_pairs_rtt_hops_and_path_changes(tmp_path):
    png, csv = tmp_path / "k.png", tmp_path / "k.csv"
    r = subprocess.run(
        [sys.executable, "-m", "spacetp.cli", "schedule", str(KUIPER), "--set", 'stop="10 s"',
         "--plot", str(png), "--csv", str(csv)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "Rio de Janeiro -> Saint Petersburg" in r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import pandas as pd

    df = pd.read_csv(csv)
    assert len(df) == 101 and set(df.columns) >= {"t_s", "rtt_s", "hops", "path", "changed"}
    assert df["changed"].sum() == 1 and df["hops"].tolist()[:34] == [14] * 34
    # Never faster than light along the ground's great circle (10 916 km), there and back.
    great_circle_km = 6371.0 * math.acos(
        math.sin(math.radians(-22.90278)) * math.sin(math.radians(59.929858))
        + math.cos(math.radians(-22.90278)) * math.cos(math.radians(59.929858))
        * math.cos(math.radians(30.326228 + 43.2075))
    )  # fmt: skip
    assert df["rtt_s"].min() > 2 * great_circle_km / routing.C_KM_S


@pytest.mark.parametrize(
    "change, message",
    [
        (("constellation.shells[0].walker.inclination", 200),
         "constellation.shells[0].walker.inclination: 200 is not an inclination"),
        (("constellation.shells[0].walker.planes", 0),
         "constellation.shells[0].walker.planes: 0 is not a number of planes"),
        (("constellation.cities", ["Rio de Janeiro", "Atlantis"]),
         "constellation.cities[1]: unknown city 'Atlantis'"),
        (("constellation.shells[0].isls", "+mesh"),
         "constellation.shells[0].isls: '+mesh': must be one of +grid, none"),
        (("constellation.step", "0 s"), "constellation.step: '0 s' must be above 0"),
        (("flows[0].to", "Lima"), "flows[0].to: 'Lima' is no ground station"),
        (("constellation.gsl.rate", "fast"), 'constellation.gsl.rate: "fast" is not a rate'),
        (("constellation.isl.queue", {"packets": 0}),
         "constellation.isl.queue.packets: must be at least 1"),
        (("constellation.cities", [*PAIR, "Saint Petersburg"]),
         "ground station 'Saint Petersburg' is given twice"),
        (("constellation.gsl.device", "one"),
         "constellation.gsl.device: 'one': must be one of per_link, per_node"),
    ],
)  # fmt: skip
def test_bad_constellations_name_the_field_and_exit_2(tmp_path, change, message):
    sc = kuiper("5 s")
    path, value = change
    spacetp.set_value(sc, path, value)
    with pytest.raises(spacetp.ScenarioError) as e:
        spacetp.run(sc)
    assert message in str(e.value)
    f = tmp_path / "bad.toml"
    f.write_text(dumps(sc))
    r = subprocess.run([sys.executable, "-m", "spacetp.cli", "run", str(f)],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_the_city_table_finds_english_and_local_names():
    from spacetp.constellation.cities import city

    assert city("Moscow", "x")["lat"] == pytest.approx(55.754996)
    assert city("Sankt-Peterburg-(Saint-Petersburg)", "x")["lon"] == pytest.approx(30.326228)
    assert city("saint petersburg", "x")["name"] == "saint petersburg"
    assert math.isclose(city("Paris", "x")["lat"], 48.85341)


def test_a_shell_given_as_tles_routes_as_the_walker_shell_they_were_written_from():
    from sgp4.exporter import export_tle

    from spacetp.linksrc.satellites import satellites

    sc = kuiper("3 s")
    walker = sc["constellation"]["shells"][0]["walker"]
    lines = []
    for s in satellites({"walker": walker}, "w"):
        l1, l2 = export_tle(s.satrec)
        lines += [s.name, l1, l2]
    tle = copy.deepcopy(sc)
    tle["constellation"]["start"] = walker["epoch"]
    tle["constellation"]["shells"][0] = {"name": "K1", "tle": "\n".join(lines),
                                         "planes": 34, "per_plane": 34}  # fmt: skip
    a, b = pair_series(sc, [PAIR]), pair_series(tle, [PAIR])
    assert (a["path"] == b["path"]).all()
    assert np.allclose(a["rtt_s"], b["rtt_s"], atol=2e-6)  # TLE fields are rounded
    tle["constellation"]["shells"][0]["per_plane"] = 33
    with pytest.raises(spacetp.ScenarioError, match=r"shells\[0\]\.tle: 1156 satellites"):
        pair_series(tle, [PAIR])


def test_a_workload_between_stations_runs_and_each_pair_is_summarised():
    from spacetp.constellation import view

    sc = kuiper("20 s")
    sc["constellation"]["cities"].append("Paris")
    sc.pop("flows")
    sc["workloads"] = [{"kind": "file_requests", "server": "Rio de Janeiro",
                        "clients": ["Saint Petersburg", "Paris"], "direction": "get",
                        "size": {"constant": "200 kB"}, "interval": {"constant": "2 s"},
                        "count": 2,
                        "protocol": "linux-cubic"}]  # fmt: skip
    assert view.default_pairs(sc) == [("Rio de Janeiro", "Saint Petersburg"),
                                      ("Rio de Janeiro", "Paris")]  # fmt: skip
    res = spacetp.run(sc)
    assert res.flows and all(f["complete"] for f in res.flows)
    rows = view.summary_rows(pair_series(sc, view.default_pairs(sc)))
    assert [r["no path"] for r in rows] == ["0.0 s", "0.0 s"]
    # A pair without a path for part of the run: its time is counted by steps, whatever
    # the number of pairs in the table.
    import pandas as pd

    df = pd.DataFrame({"from": ["a", "c"] * 4, "to": ["b", "d"] * 4,
                       "t_s": [0.0, 0.0, 0.5, 0.5, 1.0, 1.0, 1.5, 1.5],
                       "rtt_s": [0.1, 0.1, float("nan"), 0.1, float("nan"), 0.1, 0.1, 0.1],
                       "hops": [3, 3, 0, 3, 0, 3, 3, 3], "changed": [False] * 8})  # fmt: skip
    assert [r["no path"] for r in view.summary_rows(df)] == ["1.0 s", "0.0 s"]


def test_a_change_of_link_rate_reuses_the_routing_and_applies_the_new_rate(monkeypatch):
    expand_module = sys.modules["spacetp.constellation.expand"]
    calls = []
    real = expand_module._expanded
    monkeypatch.setattr(expand_module, "_expanded", lambda sc: calls.append(1) or real(sc))
    expand_module._CACHE.clear()
    sc = kuiper("5 s")
    a = expand(sc)
    sc["constellation"]["gsl"]["rate"] = "5 Mb/s"
    b = expand(sc)
    assert len(calls) == 1, "the routing is computed once"
    gsl = [lk for lk in b["links"] if lk["origin"] == "constellation.gsl"]
    assert gsl and all(lk["rate"] == "5 Mb/s" for lk in gsl)
    assert all(lk["rate"] == "20 Mb/s" for lk in a["links"])


def test_bundles_take_a_gsl_only_while_its_station_may_use_the_satellite():
    # Bundle agents route by Contact Graph Routing over a contact plan, not by the packets'
    # forwarding state. Saint Petersburg may use K1-5-7 only from 3.4 s on (the path change
    # of kuiper-pair.toml), and the shorter way is through it: a plan with every link up
    # the whole run sent the first 2.6 s of bundles down a GSL out of reach. The derived
    # plan opens that GSL at 3.4 s, so the bundles go the way that exists then.
    sc = kuiper("10 s")
    sc["flows"][0].update(protocol="bp", bytes="5 MB", bp={"bundle_size": "100 kB"})
    out = expand(sc)
    plan = out["dtn"]["contact_plan"]
    number = {n["name"]: i + 1 for i, n in enumerate(out["nodes"])}
    late = f"a contact +3.4 +10 {number['K1-5-7']} {number['Saint Petersburg']} 2500000"
    assert late in plan.splitlines(), plan
    assert out["dtn"]["drive_links"] is False  # the links keep the satellites' delays
    res = spacetp.run(sc)
    flow = res.flows[0]
    assert flow["complete"] and flow["bytes_delivered"] == 5_000_000
    assert flow["completion_s"] < 3.4, flow["completion_s"]
    sent = {lk["name"]: lk["tx_packets"] for lk in res.links}
    assert sent.get("K1-5-7->Saint Petersburg", 0) == 0, sent
    assert sent["K1-4-8->Saint Petersburg"] > 3000
    # A scenario's own plan is kept.
    sc["dtn"] = {"contact_plan": "a contact +0 +10 1 2 1000\n"}
    assert expand(sc)["dtn"] == sc["dtn"]


def test_one_gsl_device_per_node_shares_a_stations_rate_among_its_satellites():
    # From Rio de Janeiro, Lagos is reached through K1-8-31 and Bogota through K1-20-20:
    # with a link per station-satellite pair (a beam each) the two flows get 20 Mb/s each;
    # with Hypatia's one GSL device per node they share Rio's 20 Mb/s.
    sc = kuiper("10 s")
    sc["constellation"]["cities"] = ["Rio de Janeiro", "Lagos", "Bogota"]
    f = sc["flows"][0]
    sc["flows"] = [dict(f, to=t, bytes="100 MB") for t in ("Lagos", "Bogota")]
    first = {e["to"]: e["schedule"][0][1] for e in expand(sc)["forwarding"]
             if e["node"] == "Rio de Janeiro"}  # fmt: skip
    assert first["Lagos"] != first["Bogota"], first
    delivered = {}
    for device in ("per_link", "per_node"):
        sc["constellation"]["gsl"]["device"] = device
        res = spacetp.run(sc)
        delivered[device] = sum(x["bytes_delivered"] for x in res.flows) * 8 / 10  # b/s
    assert delivered["per_link"] > 30e6, delivered
    assert 15e6 < delivered["per_node"] <= 20e6, delivered
    out = expand(sc)
    names = {n["name"] for n in out["nodes"]}
    assert {"Rio de Janeiro~gsl", first["Lagos"] + "~gsl"} <= names
    # Rio's entries lead to its device; the device's to the satellite Rio chose.
    rio = {e["to"]: e["schedule"] for e in out["forwarding"] if e["node"] == "Rio de Janeiro"}
    assert all(h == "Rio de Janeiro~gsl" for s in rio.values() for _, h in s), rio
    dev = {e["to"]: e["schedule"][0][1] for e in out["forwarding"]
           if e["node"] == "Rio de Janeiro~gsl"}  # fmt: skip
    assert dev == first
    # One queue serves GSLs of different delays: a BDP-sized one is refused.
    sc["constellation"]["gsl"]["queue"] = {"bdp": 1.0}
    with pytest.raises(spacetp.ScenarioError, match=r"constellation\.gsl\.queue\.bdp: with"):
        expand(sc)


def test_the_bundles_plan_covers_scheduled_rates_a_run_ending_at_a_change_and_own_links():
    sc = kuiper("3.4 s")  # Saint Petersburg's GSL to K1-5-7 opens at the last instant
    sc["flows"][0].update(protocol="bp", bytes="1 MB", bp={"bundle_size": "100 kB"})
    plan = expand(sc)["dtn"]["contact_plan"]
    assert "+3.4 +3.4" not in plan  # an empty contact would be refused
    assert spacetp.run(sc).flows[0]["complete"]
    # A rate schedule: the agents believe its largest rate, as the core's own plan does.
    sc["stop"] = "10 s"
    sc["constellation"]["gsl"]["rate"] = {"schedule": [["0 s", "20 Mb/s"], ["5 s", "40 Mb/s"]]}
    out = expand(sc)
    number = {n["name"]: i + 1 for i, n in enumerate(out["nodes"])}
    rio = number["Rio de Janeiro"]
    gsl = [ln for ln in out["dtn"]["contact_plan"].splitlines()
           if ln.startswith("a contact") and ln.split()[4] == str(rio)]  # fmt: skip
    assert gsl and all(ln.endswith(" 5000000") for ln in gsl), gsl
    # The scenario's own links are in the plan for the whole run; one with rules of its
    # own for being up is refused by path.
    sc["links"] = [{"between": list(PAIR), "rate": "100 Mb/s", "delay": "40 ms"}]
    out = expand(sc)
    a, b = (number[n] for n in PAIR)
    assert f"a contact +0 +10 {a} {b} 12500000" in out["dtn"]["contact_plan"].splitlines()
    sc["links"][0]["outages"] = [["1 s", "2 s"]]
    with pytest.raises(spacetp.ScenarioError, match=r"links\[0\]\.outages: bundles over a"):
        expand(sc)
