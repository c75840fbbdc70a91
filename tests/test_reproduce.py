"""`spacetp reproduce`: the targets file, the verdict logic, the registry, and quick runs of
every implemented paper through the command line (figures, CSVs, both reports), each target's
verdict held to its pin in python/spacetp/experiments/verdicts.toml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chromium import CHROMIUM, image_states
from conftest import spacetp_cli
from spacetp import experiments
from spacetp.experiments.framework import (
    FAIL,
    NOT_COMPARABLE,
    PASS,
    Measure,
    judge,
    load_targets_file,
    paper_entries,
    tolerance_text,
)
from spacetp.experiments.papers import akan, edwards
from spacetp.report import citation

PNG = b"\x89PNG\r\n\x1a\n"
VERDICTS = (PASS, FAIL, NOT_COMPARABLE)
CHECKS = ("rel_tol", "abs_tol", "above", "below")


# ------------------------------------------------------------------------ targets file


def test_targets_file_parses_and_every_target_names_an_existing_figure():
    data = load_targets_file()
    assert set(experiments.available()) <= set(data["papers"])
    figures = {(f["paper"], f["id"]) for f in data["figures"]}
    assert len(figures) == len(data["figures"]), "a figure id is listed twice"
    for f in data["figures"]:
        assert f["paper"] in data["papers"] and f["caption"] and f["label"]
    seen = set()
    for t in data["targets"]:
        where = f"{t.get('paper')}/{t.get('id')}"
        for key in ("paper", "figure", "id", "claim", "measure", "how", "unit"):
            assert key in t, f"{where}: no {key}"
        assert (t["paper"], t["figure"]) in figures, f"{where}: no figure {t['figure']!r}"
        assert (t["paper"], t["id"]) not in seen, f"{where}: id listed twice"
        seen.add((t["paper"], t["id"]))
        checks = [k for k in CHECKS if k in t]
        if isinstance(t.get("expect"), bool | str):
            assert not checks, f"{where}: a string or boolean expect takes no tolerance"
        elif "expect" in t:
            assert checks in (["rel_tol"], ["abs_tol"]), f"{where}: expect needs one tolerance"
        else:
            assert checks in (["above"], ["below"]), f"{where}: needs expect, above or below"
        tolerance_text(t)


def test_every_implemented_paper_has_figures_and_targets():
    for name in experiments.available():
        meta, figures, targets = paper_entries(name)
        assert meta["title"] and meta["authors"] and meta["venue"]
        assert figures and targets, name


# ------------------------------------------------------------------------------ verdicts


def target(**check) -> dict:
    return {"paper": "p", "id": "t", "measure": "m", "unit": "x", **check}


@pytest.mark.parametrize(
    "check, value, verdict",
    [
        ({"expect": 100.0, "rel_tol": 0.1}, 109.0, PASS),
        ({"expect": 100.0, "rel_tol": 0.1}, 111.0, FAIL),
        ({"expect": 15.0, "abs_tol": 0.5}, 15.16, PASS),
        ({"expect": 15.0, "abs_tol": 0.5}, 15.6, FAIL),
        ({"above": 3.0}, 3.2, PASS),
        ({"above": 3.0}, 2.0, FAIL),
        ({"below": 0.0}, -1.0, PASS),
        ({"below": 0.0}, 0.5, FAIL),
        ({"expect": "westwood"}, "westwood", PASS),
        ({"expect": "westwood"}, "fack", FAIL),
        ({"expect": True}, True, PASS),
        ({"expect": True}, False, FAIL),
        ({"expect": 100.0, "rel_tol": 0.1}, None, NOT_COMPARABLE),
        ({"expect": 100.0, "rel_tol": 0.1}, float("nan"), NOT_COMPARABLE),
    ],
)
def test_judge(check, value, verdict):
    assert judge(target(**check), Measure(value, "why")).verdict == verdict


def test_a_fail_carries_the_explanation():
    v = judge(target(expect=1.0, rel_tol=0.1, explain="the mechanism"), Measure(2.0, "seen"))
    assert v.verdict == FAIL and "the mechanism" in v.reason and "seen" in v.reason


def test_fig1_target_308_bps_passes():
    # Akan et al. section II: eq. (1) at RTT 1000 s, p = 1e-3, 1 KB segments -> 308 b/s
    _, measures = akan.fig1()
    (t,) = [t for t in paper_entries("akan")[2] if t["id"] == "pftk-308"]
    v = judge(t, measures[t["measure"]])
    assert v.verdict == PASS, (v.value, v.reason)
    assert abs(v.value - 307.76) < 0.05


# ------------------------------------------------------------------------------ registry


def test_all_means_every_implemented_paper():
    assert experiments.resolve("all") == experiments.available()
    assert {"akan", "altman", "edwards", "liu", "nguyen"} <= set(experiments.available())


@pytest.mark.parametrize("name, words", [("nosuch", ["unknown paper 'nosuch'"])])
def test_unknown_or_unimplemented_paper_is_one_line_and_exit_2(cli, name, words):
    r = cli("reproduce", name)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for w in [*words, "akan", "altman", "all"]:
        assert w in lines[0], lines[0]


# ------------------------------------------------------------------------- quick runs


PAPERS = ["akan", "altman", "edwards", "liu", "nguyen"]


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """`spacetp reproduce PAPER --quick` for every paper, once: {paper: (out dir, process)}."""
    runs = {}
    for paper in PAPERS:
        out = tmp_path_factory.mktemp(paper)
        r = spacetp_cli("reproduce", paper, "--quick", "--out", str(out), "--no-progress")
        runs[paper] = (out, r)
    return runs


def finished(quick_runs, paper):
    out, r = quick_runs[paper]
    assert r.returncode == 0, r.stderr[-3000:]
    return out, r


@pytest.mark.parametrize("paper", PAPERS)
def test_quick_run_writes_every_figure_and_its_data(quick_runs, paper):
    out, _ = finished(quick_runs, paper)
    _, figures, _ = paper_entries(paper)
    for f in figures:
        stem = out / f"{paper}_{f['id']}"
        png, svg, csv = (Path(f"{stem}.{ext}") for ext in ("png", "svg", "csv"))
        assert png.read_bytes()[:8] == PNG, png
        assert "<svg" in svg.read_text()[:2000], svg
        lines = csv.read_text().splitlines()
        assert len(lines) >= 3 and "," in lines[0], csv


def report_rows(md: str) -> list[list[str]]:
    """The rows of the targets table of report.md (a row starts with its number)."""
    section = md.split("## Targets", 1)[1].split("## Figures", 1)[0]
    return [
        [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        for line in section.splitlines()
        if re.match(r"\| \d+ \|", line)
    ]


@pytest.mark.parametrize("paper", PAPERS)
def test_quick_run_reports_a_verdict_per_target(quick_runs, paper):
    out, r = finished(quick_runs, paper)
    meta, figures, targets = paper_entries(paper)
    md = (out / "report.md").read_text()
    # the paper cited by its reference, not by a file path
    assert citation(meta, lambda t: f"*{t}*") in md and ".txt" not in md.split("## Targets")[0]
    rows = report_rows(md)
    assert len(rows) == len(targets)
    for row, t in zip(rows, targets, strict=True):
        assert len(row) == 8, row
        assert row[-2].strip("*") in VERDICTS, row
        assert t["claim"].replace("|", "\\|") in row[2], (row[2], t["claim"])
    for f in figures:
        assert f"]({paper}_{f['id']}.png)" in md
        assert f["caption"].replace("|", "\\|") in md
    html = (out / "report.html").read_text()
    images = re.findall(r"<img src='([^']+)'", html)
    assert sorted(images) == sorted(f"{paper}_{f['id']}.png" for f in figures)
    assert all((out / i).is_file() for i in images)
    assert html.count("<tr><td>") == len(targets)
    for t in targets:
        assert t["id"] in r.stdout  # the verdict table on the terminal


# ----------------------------------------------------------------------- pinned verdicts

PINS_FILE = Path(experiments.__file__).parent / "verdicts.toml"


def pins() -> dict[str, dict[str, dict]]:
    """{paper: {target id: {"verdict": ..., "why": ..., "full": ...}}} from verdicts.toml."""
    import tomllib

    raw = tomllib.loads(PINS_FILE.read_text())
    return {
        paper: {tid: p if isinstance(p, dict) else {"verdict": p} for tid, p in entries.items()}
        for paper, entries in raw.items()
    }


def test_every_target_has_exactly_one_pin_and_every_pin_a_target():
    pinned = pins()
    assert set(pinned) == set(experiments.available()), "one table per paper"
    for paper, entries in pinned.items():
        ids = [t["id"] for t in paper_entries(paper)[2]]
        assert sorted(entries) == sorted(ids), (
            f"{paper}: targets without a pin {sorted(set(ids) - set(entries))}, "
            f"pins without a target {sorted(set(entries) - set(ids))}"
        )
        for tid, p in entries.items():
            assert set(p) <= {"verdict", "why", "full"}, f"{paper}/{tid}: {sorted(p)}"
            assert p["verdict"] in VERDICTS, f"{paper}/{tid}: {p['verdict']!r}"
            assert p.get("full", p["verdict"]) in VERDICTS, f"{paper}/{tid}: full"
            if p["verdict"] != PASS or p.get("full", PASS) != PASS:
                assert p.get("why"), f"{paper}/{tid}: a pin other than PASS says why"


def pin_changes(paper: str, verdicts: dict[str, tuple[str, str]]) -> list[str]:
    """What differs between the pins of `paper` and `verdicts` ({id: (verdict, ours)}), one
    line per target, saying which way it moved."""
    out = []
    for tid, p in pins()[paper].items():
        want = p["verdict"]
        got, ours = verdicts[tid]
        if got == want:
            continue
        if want == PASS:
            out.append(f"{paper}/{tid}: was PASS, now {got} (ours: {ours}): a regression")
        elif got == PASS:
            out.append(
                f"{paper}/{tid}: was {want}, now PASS (ours: {ours}): if the change that did "
                f"this is meant, move the pin in {PINS_FILE.name} to PASS and say why"
            )
        else:
            out.append(
                f"{paper}/{tid}: was {want}, now {got} (ours: {ours}): find out why; if meant, "
                f"move the pin in {PINS_FILE.name}"
            )
    return out


def test_pin_changes_name_the_direction():
    ids = [t["id"] for t in paper_entries("edwards")[2]]
    current = {tid: (p["verdict"], "x") for tid, p in pins()["edwards"].items()}
    assert pin_changes("edwards", current) == []
    passing = next(tid for tid in ids if pins()["edwards"][tid]["verdict"] == PASS)
    failing = next(tid for tid in ids if pins()["edwards"][tid]["verdict"] == FAIL)
    moved = {**current, passing: (FAIL, "1"), failing: (PASS, "2")}
    down, up = sorted(pin_changes("edwards", moved), key=lambda line: passing not in line)
    assert down.startswith(f"edwards/{passing}: was PASS, now FAIL") and "regression" in down
    assert up.startswith(f"edwards/{failing}: was FAIL, now PASS") and "move the pin" in up


@pytest.mark.parametrize("paper", PAPERS)
def test_quick_run_verdicts_are_the_pinned_ones(quick_runs, paper):
    out, _ = finished(quick_runs, paper)
    _, _, targets = paper_entries(paper)
    rows = report_rows((out / "report.md").read_text())
    got = {t["id"]: (row[-2].strip("*"), row[4]) for row, t in zip(rows, targets, strict=True)}
    changes = pin_changes(paper, got)
    assert not changes, "verdicts moved:\n" + "\n".join(changes)


def test_quick_akan_report_keeps_the_308_bps_pass(quick_runs):
    out, _ = finished(quick_runs, "akan")
    (row,) = [r for r in report_rows((out / "report.md").read_text()) if "308 b/s" in r[2]]
    assert row[4] == "307.8 b/s" and row[-2] == "**PASS**", row


def test_quick_liu_report_compares_model_and_simulation_per_loss_rate(quick_runs):
    # Issue 5 as a target: the Figure III row names sim / model at every simulated loss rate,
    # and a FAIL carries the mechanism that differs.
    out, _ = finished(quick_runs, "liu")
    rows = report_rows((out / "report.md").read_text())
    (row,) = [r for r in rows if "fit the simulation very well" in r[2]]
    assert "simulation / model (24): p 0.0001:" in row[-1] and "p 0.01:" in row[-1], row
    assert pins()["liu"]["model-fits-sim"]["verdict"] == FAIL  # in the quick run (pinned)
    assert row[-2] == "**FAIL**" and "the model ignores the start" in row[-1], row


def test_nguyen_base_scenario_is_the_asymmetry_example():
    # The reproduction builds its scenario in code; it must stay examples/asymmetry.toml.
    import spacetp
    from conftest import EXAMPLES
    from spacetp.experiments.papers import nguyen

    ours = nguyen.base()
    example = spacetp.load(EXAMPLES / "asymmetry.toml")
    assert [n["name"] for n in ours["nodes"]] == [n["name"] for n in example["nodes"]]
    for i, link in enumerate(example["links"]):
        for key, value in link.items():
            assert ours["links"][i][key] == value, (i, key)
    for key in ("from", "to", "bytes", "mtu"):
        assert ours["flows"][0][key] == example["flows"][0][key], key


def test_quick_nguyen_corruption_keeps_the_snack_off_explanation(quick_runs):
    # Section 4.5: SCPS-TP ~300 kb/s. Ours runs at its rate-control ceiling; with SNACK off it
    # drops to the paper's level, which the report must show beside the FAIL.
    out, _ = finished(quick_runs, "nguyen")
    rows = report_rows((out / "report.md").read_text())
    (row,) = [r for r in rows if "about 300 kb/s" in r[2] and "BER 1e-5, 50 ms" in r[3]]
    ours = float(row[4].split()[0])
    off = float(row[-1].split("with SNACK off ")[1].split()[0])
    assert ours > 900 and 150 < off < 450, row


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
@pytest.mark.parametrize("paper", PAPERS)
def test_every_report_image_loads_in_headless_chromium(quick_runs, paper):
    out, _ = finished(quick_runs, paper)
    states = image_states(out / "report.html")
    _, figures, _ = paper_entries(paper)
    assert len(states) == len(figures)
    for s in states:
        assert s["complete"] and s["width"] >= 400 and s["height"] >= 250, s


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
def test_the_chromium_check_sees_a_missing_image(tmp_path):
    page = tmp_path / "report.html"
    page.write_text("<html><body><img src='missing.png'><img src='ok.png'></body></html>")
    (tmp_path / "ok.png").write_bytes(tiny_png())
    states = {s["src"]: s for s in image_states(page)}
    assert states["missing.png"]["width"] == 0
    assert states["ok.png"]["width"] > 0


def tiny_png() -> bytes:
    """A valid 2 x 2 grey PNG."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + b"\x80\x80" for _ in range(2))
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0)
    return PNG + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_edwards_set_ups_validate():
    # every case of Figures 3-8 (and S1) and every stack of Figure 9 builds a valid scenario
    import spacetp

    for case in edwards.CASES:
        for kw in ({}, {"data_only": True}, {"queue": edwards.BDP_QUEUE}):
            sc = edwards.scenario()
            for path, value in edwards.transfer_case(case, 1e-6, **kw).items():
                spacetp.set_value(sc, path, value)
            spacetp.validate(sc)
            assert sc["flows"][0]["protocol"] == edwards.CASES[case]
    for stack in edwards.STACKS:
        sc = edwards.ftp_scenario(stack, 1e-7, minutes=5)
        spacetp.validate(sc)
        assert len(sc["workloads"][0]["clients"]) == 35


def test_quick_edwards_reports_the_figure_9_percentages(quick_runs):
    out, _ = finished(quick_runs, "edwards")
    rows = report_rows((out / "report.md").read_text())
    for pct in ("30%", "60%", "40%"):
        (row,) = [r for r in rows if r[1] == "Figure 9" and pct in r[2]]
        assert row[-2].strip("*") in (PASS, FAIL), row
    (nc,) = [r for r in rows if r[-2] == f"**{NOT_COMPARABLE}**"]
    assert "one simulator" in nc[-1]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)")
@pytest.mark.parametrize("paper", ["altman", "liu"])
def test_report_plots_are_zoomable_and_render_without_errors(quick_runs, paper):
    from chromium import blank, page_check

    out, _ = finished(quick_runs, paper)
    _, figures, _ = paper_entries(paper)
    info = page_check(out / "report.html")
    assert info["errors"] == []
    assert info["plots"] == info["drawn"] == len(figures)
    assert all(n > 0 for n in info["traces"])
    assert not any(blank(info["screenshot"], box) for box in info["boxes"])
