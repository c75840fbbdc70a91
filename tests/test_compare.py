"""`spacetp compare`: the profiles come from the registry, the runs from the sweep engine (so a
second run computes nothing), the ranking follows the means, the column "what limited it" is
the engine's limit analysis over the runs, failed runs are counted and named (never averaged
in), intervals never go below zero, the axis turns logarithmic when times span more than 10x,
a transfer under 2 BDPs is warned about, the analytic model's number is the registry model's
with the scenario's settings, every number on the page and in the tables has its unit, the
terminal table fits 80 columns, and the page loads in headless Chromium with every plot
drawn and none empty."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys

import pytest

import spacetp
from chromium import CHROMIUM, blank, page_check
from conftest import EXAMPLES
from spacetp import compare as cmp
from spacetp import compare_figures
from spacetp.models import evaluate
from spacetp.stats import bootstrap_ci, ci95

GEO = str(EXAMPLES / "geo.toml")
FEW = "newreno,scps-tp,cubic,ltp"
RAW_FLOAT = re.compile(r"\d\.\d+e[+-]\d+|\d{6,}\.\d")  # 1.947e+05, 194700.5

# The Ka GEO link (#37): 100 Mb/s down, 10 Mb/s return, 285 ms each way, bursty
# loss; a 5 MB file on a 7.13 MB pipe. LTP waits for one of its 10 export sessions.
KA = """
name = "Ka GEO 100/10 Mb/s, 285 ms, bursty loss"
seed = 1
[[nodes]]
name = "server"
[[nodes]]
name = "terminal"
[[links]]
between = ["server", "terminal"]
rate = "100 Mb/s"
rate_back = "10 Mb/s"
delay = "285 ms"
errors = { gilbert_elliott = { p_good_to_bad = 1e-4, p_bad_to_good = 0.1, loss_bad = 0.5 } }
[[flows]]
from = "server"
to = "terminal"
protocol = "newreno"
bytes = "5 MB"
"""

# Heavy loss and two retries: some runs abort (RFC 6298's R2), the others finish.
FAILING = """
name = "lossy, few retries"
seed = 1
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "1 Mb/s"
delay = "50 ms"
errors = { per = 0.15 }
[[flows]]
from = "a"
to = "b"
protocol = "newreno"
bytes = "200 kB"
[flows.tcp]
max_retries = 2
"""


@pytest.fixture(scope="module")
def ka(tmp_path_factory):
    d = tmp_path_factory.mktemp("ka")
    (d / "ka.toml").write_text(KA)
    # As configured: the profiles as the issue ranked them (ION's 10 sessions, quinn's
    # 1.25 MB window); tests/test_fit.py ranks them fitted.
    c = cmp.compare(
        d / "ka.toml", protocols="ltp,bp,quic,linux-cubic,winnt", reps=4, out=d / "out",
        as_configured=True,
    )  # fmt: skip
    return c


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
        # the bootstrap interval of two values: the means of (a, a), (a, b), (b, b)
        assert float(row["completion_s_ci95_low"]) == pytest.approx(min(mine))
        assert float(row["completion_s_ci95_high"]) == pytest.approx(max(mine))


def test_intervals_never_go_below_zero():
    # One run ten times slower than the others, as hybla's 72.6 min ± 512 min on the Ka link
    times = [60.0, 62.0, 61.0, 63.0, 600.0]
    n = len(times)
    mean = sum(times) / n
    std = (sum((t - mean) ** 2 for t in times) / (n - 1)) ** 0.5
    assert mean - float(ci95(std, n)) < 0  # Student's t went below zero
    lo, hi = bootstrap_ci(times)
    assert min(times) <= lo < mean < hi <= max(times)
    assert bootstrap_ci(times) == (lo, hi), "seeded: the same interval every time"


def test_the_page_intervals_are_positive_and_the_axis_log_beyond_10x(geo, ka):
    out, _ = geo
    for row in csv.DictReader((out / "ranking.csv").open()):
        for col in ("completion_s", "goodput_bps"):
            lo, hi = float(row[f"{col}_ci95_low"]), float(row[f"{col}_ci95_high"])
            assert 0 < lo <= float(row[col]) <= hi, (row["protocol"], col)
    c = ka  # 983 ms (bp) to 5.5 min (winnt): more than 10x
    t = c.table
    assert t["completion"].max() > 10 * t["completion"].min()
    assert compare_figures.log_axis(c)
    assert compare_figures.ranking_figure(c).layout.xaxis.type == "log"
    assert "log scale" in c.page.read_text()
    near = cmp.compare(GEO, protocols="ltp,linux-cubic", reps=1, write=False)
    assert not compare_figures.log_axis(near)
    assert compare_figures.ranking_figure(near).layout.xaxis.type == "linear"


def test_numbers_have_units_never_raw_floats(geo):
    out, r = geo
    page = (out / "report.html").read_text()
    text = re.sub(r"<script.*?</script>|<div id=.*?</div>\s*</div>", "", page, flags=re.S)
    assert not RAW_FLOAT.findall(text)
    assert not RAW_FLOAT.findall(r.stdout)
    assert re.search(r"\d s \([\d.]+–[\d.]+\)", text) and " Mb/s" in text and " kB" in text


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


def test_every_transport_of_the_core_registry_is_a_profile_to_compare():
    # compare, fit and tune list what the core's transport registry lists: no Python list
    from spacetp import _core

    transports = json.loads(_core.transports())
    names, aliases = cmp.all_protocols()
    for t in transports:
        assert set(t["protocols"]) <= set(names) | set(aliases), t
    assert [t["settings_key"] for t in transports] == ["tcp", "quic", "ltp", "bp", "cfdp"]
    assert cmp.choose("newreno,ltp,bp")[0] == ["newreno", "ltp", "bp"]


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
    assert "TCP settings do not apply to LTP" in reasons["ltp"]
    assert "Not run on this scenario" in c.page.read_text()


def test_what_limited_it_is_the_engines_analysis_over_the_runs(ka):
    # The Ka case: ltp waited for one of its 10 export sessions (no
    # "loss-limited" note), quic for its 1.25 MB stream window.
    t = ka.table.set_index("protocol")
    assert t.loc["ltp", "limit"] == "ltp_sessions" and t.loc["ltp", "limit_share"] > 0.5
    assert "limited by LTP export sessions for" in t.loc["ltp", "limited_by"]
    assert "raise flows[0].ltp.max_export_sessions (10)" in t.loc["ltp", "limited_by"]
    assert t.loc["quic", "limit"] == "receive_window"
    assert "flows[0].quic.stream_receive_window (1.25 MB)" in t.loc["quic", "limited_by"]
    # the share is the mean over the runs, of the sweep's per-run shares
    runs = ka.sweep.runs
    ltp = runs[runs["flows[0].protocol"] == "ltp"]
    assert (ltp["flows[0].limit"] == "ltp_sessions").all()
    assert t.loc["ltp", "limit_share"] == pytest.approx(ltp["flows[0].limit_share"].mean())
    page = ka.page.read_text()
    assert "loss-limited" not in page and "of the link</td>" not in page
    assert f"for {100 * t.loc['ltp', 'limit_share']:.0f}% of the time" in page
    # ranking.csv carries it too
    rows = {r["protocol"]: r for r in csv.DictReader((ka.out / "ranking.csv").open())}
    assert rows["ltp"]["limit"] == "ltp_sessions" and "export sessions" in rows["ltp"]["limited_by"]


def test_when_the_link_leads_the_largest_liftable_state_is_named_after_it():
    g = cmp.compare(GEO, protocols="linux-cubic,ltp", reps=2, write=False)
    t = g.table.set_index("protocol")
    assert t.loc["ltp", "limit"] == "link"
    cubic = t.loc["linux-cubic"]
    assert cubic["limit"] == "link" and cubic["liftable_share"] >= 0.1
    assert "; then limited by" in cubic["limited_by"]
    assert cubic["limit_label"].startswith("link ") and ", " in cubic["limit_label"]


def test_the_model_follows_the_scenarios_own_settings():
    # --set 'flows[0].tcp.scps.rate="50 Mb/s"': the model is no longer held to 1.5 Mb/s
    plain = cmp.compare(GEO, protocols="scps-tp", reps=1, write=False, as_configured=True)
    plain = plain.table.iloc[0]
    sc = spacetp.load(GEO)
    spacetp.set_value(sc, "flows[0].tcp.scps.rate", "50 Mb/s")
    fast = cmp.compare(sc, protocols="scps-tp", reps=1, write=False).table.iloc[0]
    assert plain["model"] == fast["model"] == "rate bound"
    assert plain["model_bps"] < 1.5e6 < fast["model_bps"]
    assert "rate control" not in fast["limited_by"]
    # Fitted (the default), the rate is the link's (2 Mb/s), and so is the model's.
    fitted = cmp.compare(GEO, protocols="scps-tp", reps=1, write=False).table.iloc[0]
    assert 1.5e6 < fitted["model_bps"] <= 2e6
    assert "tcp.scps.rate 2 Mb/s (was 1.5 Mb/s)" in fitted["fitted"]


def test_failed_runs_are_counted_and_named_never_averaged_in(tmp_path, cli):
    (tmp_path / "lossy.toml").write_text(FAILING)
    out = tmp_path / "out"
    r = cli("compare", str(tmp_path / "lossy.toml"), "--protocols", "newreno,sack", "--reps",
            "10", "--out", str(out), "--no-progress")  # fmt: skip
    assert r.returncode == 0, r.stderr
    runs = list(csv.DictReader((out / "runs.csv").open()))
    rows = {x["protocol"]: x for x in csv.DictReader((out / "ranking.csv").open())}
    page = (out / "report.html").read_text()
    for proto in ("newreno", "sack"):
        mine = [x for x in runs if x["flows[0].protocol"] == proto]
        bad = [x for x in mine if x["flows[0].failure"] and x["flows[0].complete"] != "1.0"]
        good = [x for x in mine if x not in bad]
        assert 0 < len(bad) < len(mine), "the scenario fails some runs, not all"
        why = "aborted: data timed out (max_retries)"
        assert all(x["flows[0].failure"].endswith(why) for x in bad)
        row = rows[proto]
        assert int(row["failed_runs"]) == len(bad)
        text = f"did not finish in {len(bad)} of {len(mine)} runs: {why}"
        assert row["did_not_finish"] == text
        assert text in page and text in r.stdout
        # the means are over the runs that did not fail
        gp = [float(x["flows[0].goodput_bps"]) for x in good]
        assert float(row["goodput_bps"]) == pytest.approx(sum(gp) / len(gp))
        ct = [float(x["flows[0].completion_s"]) for x in good]
        assert float(row["completion_s"]) == pytest.approx(sum(ct) / len(ct))
    assert "failed in some runs" in page and "FAILED" in r.stdout


def test_retransmissions_are_counted_for_ltp_and_bp(ka):
    t = ka.table.set_index("protocol")
    runs = ka.sweep.runs
    for proto in ("ltp", "bp"):
        mine = runs[runs["flows[0].protocol"] == proto]
        assert t.loc[proto, "retx"] == pytest.approx(mine["total_retransmissions"].mean())
        assert t.loc[proto, "drops"] > 0
    assert t.loc["bp", "retx"] > 0, "bp: its LTP hops' data segments sent again"
    sc = spacetp.load(GEO)
    spacetp.set_value(sc, "flows[0].protocol", "bp")
    res = spacetp.run(sc, seed=2)
    from spacetp.metrics import extractor

    hops = res.summary["dtn"]["hops"]
    assert extractor("total_retransmissions")(res.summary) == sum(
        h["data_segments_retransmitted"] for h in hops
    ) > 0  # fmt: skip


def test_a_transfer_under_two_bdps_is_warned_about(ka, geo):
    warning = "ranks only start-up"
    assert warning in ka.page.read_text()  # 5 MB on a 7.13 MB pipe
    out, r = geo
    assert warning not in (out / "report.html").read_text()  # 5 MB on 138 kB
    from spacetp.pathfacts import short_transfer

    assert short_transfer(ka.facts).startswith("The transfer (5 MB) is under 2x")


def test_a_protocol_without_a_window_plots_its_delivery(ka):
    # bp keeps no sender samples: its panel shows the bytes sent and delivered, never empty
    assert ka.best == "bp"
    tr = ka.traces["bp"]
    assert (tr["kind"] == "delivery").all()
    assert tr["sent"].max() >= 5e6 and tr["delivered"].max() == 5e6
    assert tr["time_s"].max() > 0.5
    fig = compare_figures.window_figure(ka)
    bp = [d for d in fig.data if d.name.startswith("bp:")]
    assert {d.name for d in bp} == {"bp: sent on the first link", "bp: delivered"}
    assert "no window" in compare_figures.panel_title(ka, "bp", tr)


def in_terminal(args: list[str], columns: int) -> tuple[int, str]:
    """Run `spacetp ARGS` in a pseudo-terminal `columns` wide (as a user's terminal): its
    exit code and what it printed, colours stripped."""
    import fcntl
    import pty
    import struct
    import termios

    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    p = subprocess.Popen(
        [sys.executable, "-m", "spacetp.cli", *args],
        stdin=child_fd, stdout=child_fd, stderr=child_fd, env={**env, "TERM": "xterm"},
    )  # fmt: skip
    os.close(child_fd)
    chunks = []
    while True:
        try:
            data = os.read(main_fd, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(main_fd)
    code = p.wait(timeout=600)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return code, re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", text)


def test_the_terminal_table_fits_80_columns_without_cutting_a_word(tmp_path):
    (tmp_path / "ka.toml").write_text(KA)
    args = ["compare", str(tmp_path / "ka.toml"), "--reps", "2", "--out", str(tmp_path / "out")]
    code, text = in_terminal([*args, "--no-progress"], 80)
    assert code == 0, text
    lines = text.splitlines()
    assert max(len(x) for x in lines) <= 80, max(lines, key=len)
    c = cmp.compare(tmp_path / "ka.toml", reps=2, out=tmp_path / "out", write=False)
    # the table: from its header to the blank line after its rows
    head = next(i for i, x in enumerate(lines) if "protocol" in x)
    end = next(
        i for i in range(head + 1, len(lines)) if not lines[i].strip() or lines[i][0].isalpha()
    )
    rows = lines[head:end]
    for proto in c.table["protocol"]:
        assert any(re.search(rf"\s{re.escape(proto)}\s", x) for x in rows), proto
    # every word of the table is whole: a header, a protocol, a word of a label, or a unit
    words = {*c.table["protocol"], "FAILED", "unfinished", "of", "s", "ms", "min", "h"}
    words |= {"b", "kb", "Mb", "Gb", "protocol", "time", "CI", "goodput", "retx", "limited"}
    words |= {"by", "model", "timeouts"}
    for label in c.table["limit_label"]:
        words |= set(re.findall(r"[A-Za-z][A-Za-z+_-]*", label))
    for line in rows:
        for word in re.findall(r"[A-Za-z][A-Za-z0-9+_-]*", line):
            assert word in words, f"a word cut: {word!r} in {line!r}"


def test_the_docs_count_the_profiles_compare_runs():
    from conftest import ROOT

    n = len(cmp.all_protocols()[0])
    text = (ROOT / "docs" / "compare.md").read_text()
    counts = re.findall(r"\((\d+) profiles x 10 seeds\)", text)
    assert counts and all(int(x) == n for x in counts), (counts, n)


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
    assert info["errors"] == [] and info["empty"] == []
    assert info["plots"] == info["drawn"] == 2
    assert all(n > 0 for n in info["traces"])
    assert not blank(info["screenshot"])
    assert not any(blank(info["screenshot"], box) for box in info["boxes"])


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_ka_page_has_no_empty_plot(ka):
    # the best, bp, has no window: its panel was empty (an x axis of -0.04..0.04 s)
    info = page_check(ka.page)
    assert info["errors"] == [] and info["empty"] == []
    assert info["plots"] == info["drawn"] == 2
    window = next(p for p in info["axes"] if p["id"] == "window")
    assert all(a["points"] > 10 and a["span"] > 0.5 for a in window["axes"])
