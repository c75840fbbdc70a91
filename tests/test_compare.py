"""`spacetp compare`: the profiles come from the registry, the runs from the sweep engine (so a
second run computes nothing), the ranking follows the means, the notes say what limited each
profile, the analytic model's number is the registry model's, every number on the page and
in the tables has its unit, and the page loads in headless Chromium with its plots drawn."""

from __future__ import annotations

import csv
import re

import pytest

import spacetp
from chromium import CHROMIUM, blank, page_check
from conftest import EXAMPLES
from spacetp import compare as cmp
from spacetp.models import evaluate

GEO = str(EXAMPLES / "geo.toml")
ASYM = str(EXAMPLES / "asymmetry.toml")
FEW = "newreno,scps-tp,cubic,ltp"
RAW_FLOAT = re.compile(r"\d\.\d+e[+-]\d+|\d{6,}\.\d")  # 1.947e+05, 194700.5


@pytest.fixture(scope="module")
def geo(tmp_path_factory):
    """One comparison on the GEO example, through the command line."""
    from conftest import spacetp_cli

    out = tmp_path_factory.mktemp("compare-geo")
    r = spacetp_cli(
        "compare", GEO, "--protocols", FEW, "--reps", "2", "--out", str(out), "--no-progress"
    )
    return out, r


def test_compare_writes_the_page_figures_and_tables(geo):
    out, r = geo
    assert r.returncode == 0, r.stderr
    for name in ("report.html", "ranking.png", "ranking.svg", "window.png"):
        assert (out / name).stat().st_size > 5000, name
    for name in ("window.svg", "window.csv", "runs.csv", "plotly.min.js"):
        assert (out / name).exists(), name
    rows = list(csv.DictReader((out / "ranking.csv").open()))
    assert [r["protocol"] for r in rows] != [] and {r["protocol"] for r in rows} == set(
        FEW.split(",")
    )
    times = [float(r["completion_s"]) for r in rows]
    assert times == sorted(times), "ranked by completion time, best first"
    assert "page: " in r.stdout and "ranked by completion time" in r.stdout


def test_the_ranking_is_the_mean_of_the_runs(geo):
    out, _ = geo
    runs = list(csv.DictReader((out / "runs.csv").open()))
    rows = {r["protocol"]: r for r in csv.DictReader((out / "ranking.csv").open())}
    for proto, row in rows.items():
        mine = [float(r["flows[0].completion_s"]) for r in runs if r["flows[0].protocol"] == proto]
        assert len(mine) == 2
        assert float(row["completion_s"]) == pytest.approx(sum(mine) / 2)
        # the 95% CI of two values: t(0.975, 1) x |a - b| / 2
        assert float(row["completion_s_ci95"]) == pytest.approx(
            12.706 * abs(mine[0] - mine[1]) / 2, rel=1e-3
        )


def test_numbers_have_units_never_raw_floats(geo):
    out, r = geo
    page = (out / "report.html").read_text()
    text = re.sub(r"<script.*?</script>|<div id=.*?</div>\s*</div>", "", page, flags=re.S)
    assert not RAW_FLOAT.findall(text)
    assert not RAW_FLOAT.findall(r.stdout)
    assert re.search(r"\d s ± [\d.<]+ s", text) and " Mb/s" in text and " kB" in text


def test_a_second_run_computes_nothing(geo):
    out, _ = geo
    c = cmp.compare(GEO, protocols=FEW, reps=2, out=out, write=False)
    assert c.sweep.stats["computed"] == 0 and c.sweep.stats["cached"] == 8


def test_the_profiles_are_the_registry_plus_ltp_and_bp_with_aliases_once():
    names, aliases = cmp.all_protocols()
    registry = spacetp.protocols()
    assert set(names) | set(aliases) == set(registry) | {"ltp", "bp"}
    assert aliases == {"bbr": "linux-bbr", "quic-cubic": "quic"}
    for alias, kept in aliases.items():
        assert registry[alias]["settings"] == registry[kept]["settings"]


def test_a_new_transport_is_one_entry(monkeypatch):
    monkeypatch.setitem(cmp.EXTRA_PROTOCOLS, "newtp", ("other", "a new transport"))
    assert "newtp" in cmp.all_protocols()[0]
    assert cmp.choose("newreno,newtp")[0] == ["newreno", "newtp"]


@pytest.mark.parametrize(
    "spec, message",
    [("newreno,tcp-x", "--protocols tcp-x: unknown protocol"), ("newreno,,ltp", "empty name")],
)
def test_bad_protocol_lists_are_one_line(cli, spec, message):
    r = cli("compare", GEO, "--protocols", spec)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_profiles_that_cannot_run_are_listed_with_the_reason(tmp_path):
    # mars.toml has [flows.tcp] settings, which QUIC and LTP refuse
    c = cmp.compare(EXAMPLES / "mars.toml", protocols="newreno,quic,ltp", reps=1, out=tmp_path)
    assert list(c.table["protocol"]) == ["newreno"]
    reasons = dict(zip(c.failed["protocol"], c.failed["error"], strict=True))
    assert "TCP settings do not apply to QUIC" in reasons["quic"]
    assert "not LTP settings" in reasons["ltp"]
    assert "Not run on this scenario" in c.page.read_text()


def test_notes_say_what_limited_each_profile():
    # A 5 kb/s return channel starves newreno's ACKs; LTP's few reports do not need it.
    c = cmp.compare(ASYM, protocols="newreno,ltp,winnt", reps=1, write=False)
    notes = dict(zip(c.table["protocol"], c.table["notes"], strict=True))
    assert notes["newreno"].startswith("ACK-starved return")
    assert notes["ltp"].startswith("fills the link")
    g = cmp.compare(GEO, protocols="winnt,scps-tp", reps=1, write=False)
    notes = dict(zip(g.table["protocol"], g.table["notes"], strict=True))
    assert "window-limited: receive buffer 8.76 kB" in notes["winnt"]
    assert "held to 1.5 Mb/s by its rate control" in notes["scps-tp"]


def test_the_model_beside_a_reno_profile_is_pftk_with_the_paths_numbers():
    c = cmp.compare(GEO, protocols="newreno,cubic,quic-newreno", reps=1, write=False)
    row = c.table.set_index("protocol").loc["newreno"]
    p = 1 - (1 - 1e-7) ** (8 * 1500)  # BER 1e-7 on 1500-byte packets
    t0 = max(1.0, 2 * row["rtt"])  # the profile's min_rto, at least two RTTs
    expected = evaluate("pftk", rtt=row["rtt"], p=p, t0=t0, w_max=300000 / 1460)
    assert row["model"] == "pftk"
    assert row["model_bps"] == pytest.approx(float(expected) * 1460 * 8)
    assert 0.5 < row["goodput"] / row["model_bps"] < 2.0
    others = c.table.set_index("protocol")
    assert others.loc["cubic", "model"] == "" and others.loc["quic-newreno", "model"] == ""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_page_loads_in_chromium_with_its_plots_drawn(geo):
    out, _ = geo
    info = page_check(out / "report.html")
    assert info["errors"] == []
    assert info["plots"] == info["drawn"] == 2
    assert all(n > 0 for n in info["traces"])
    assert not blank(info["screenshot"])
    assert not any(blank(info["screenshot"], box) for box in info["boxes"])
