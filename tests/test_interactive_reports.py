"""The zoomable plots of the pages (reports of sweeps; compare, reproduce and the time-sequence
graphs are checked beside their commands): matplotlib figures carried over to Plotly keep
their data, a sweep's page renders in headless Chromium, and the Chromium check itself sees a
page whose script fails, whose plotting library is missing or whose plot is empty."""

from __future__ import annotations

import numpy as np
import pytest

from chromium import CHROMIUM, blank, page_check
from conftest import EXAMPLES
from spacetp import interactive

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (.ci/run installs it)"
)


def test_a_matplotlib_figure_keeps_its_data_in_plotly():
    from matplotlib.figure import Figure

    fig = Figure()
    ax, ax2 = fig.subplots(1, 2)
    x = np.array([1e-5, 1e-4, 1e-3])
    ax.errorbar(x, [3.0, 2.0, 1.0], yerr=[0.1, 0.2, 0.3], marker="o", label="simulated")
    ax.plot(x, [3.1, 2.1, 0.9], "--", label="model")
    ax.axhline(2.5, color="gray")
    ax.set_xscale("log")
    ax.set_xlabel("loss")
    ax2.bar([1, 2], [5, 7], label="bars")
    ax2.fill_between([0, 1], [0, 1], [1, 2], alpha=0.2)
    p = interactive.from_matplotlib(fig)
    by_name = {t.name: t for t in p.data if t.name}
    assert list(by_name["simulated"].y) == [3.0, 2.0, 1.0]
    assert list(by_name["model"].y) == [3.1, 2.1, 0.9]
    assert list(by_name["bars"].y) == [5, 7]
    assert p.layout.xaxis.type == "log" and p.layout.xaxis.title.text == "loss"
    # the error bars (segments) and the reference line became traces too
    assert any(t.y is not None and None in list(t.y) for t in p.data)
    assert any(list(t.y) == [2.5, 2.5] for t in p.data if t.y is not None and len(t.y) == 2)


@pytest.fixture(scope="module")
def sweep_page(tmp_path_factory):
    from conftest import spacetp_cli

    store = tmp_path_factory.mktemp("sweep")
    r = spacetp_cli(
        "sweep", str(EXAMPLES / "geo.toml"), "--store", str(store), "--reps", "2",
        "--grid", "links[1].delay=100 ms,270 ms", "--grid", "flows[0].protocol=newreno,scps-tp",
        "--no-progress",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return store / "report.html", r


def test_a_sweep_writes_its_page_with_units(sweep_page):
    page, r = sweep_page
    text = page.read_text()
    assert "page " in r.stdout and str(page) in r.stdout
    assert " Mb/s ± " in text or " kb/s ± " in text
    assert (page.parent / interactive.JS_NAME).exists()


@needs_chromium
def test_a_sweeps_page_renders_its_plots_in_chromium(sweep_page):
    page, _ = sweep_page
    info = page_check(page)
    assert info["errors"] == []
    assert info["plots"] == info["drawn"] >= 2
    assert not any(blank(info["screenshot"], box) for box in info["boxes"])


@needs_chromium
def test_the_check_sees_a_script_error_and_a_missing_library(tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedFunction();</script></body></html>")
    assert any("undefinedFunction" in e for e in page_check(broken, wait_ms=500)["errors"])
    missing = tmp_path / "missing.html"
    missing.write_text(
        "<html><head><script src='plotly.min.js'></script></head><body>"
        "<div id='p'></div><script>Plotly.newPlot('p', [{y: [1, 2]}]);</script></body></html>"
    )
    info = page_check(missing, wait_ms=500)
    assert info["drawn"] == 0 and info["errors"], info["errors"]
    assert blank(info["screenshot"])


@needs_chromium
def test_the_check_fails_on_an_empty_plot(tmp_path):
    # the compare page's empty "best: bp" panel: one subplot without data, its x axis
    # drawn around nothing; and a line whose points all sit at one x
    page = tmp_path / "empty.html"
    page.write_text(
        f"<html><head>{interactive.script_tag(tmp_path)}</head><body>"
        "<div id='p'></div><div id='q'></div><script>"
        "Plotly.newPlot('p', [{x: [], y: [], xaxis: 'x', yaxis: 'y'},"
        " {x: [0, 1, 2], y: [1, 2, 3], xaxis: 'x2', yaxis: 'y2'}],"
        " {grid: {rows: 1, columns: 2, pattern: 'independent'}});"
        "Plotly.newPlot('q', [{x: [0, 0, 0], y: [1, 2, 3]}]);</script></body></html>"
    )
    info = page_check(page, wait_ms=3000)
    assert info["drawn"] == 2
    assert info["empty"] == [
        "plot 1 (p), axis x: no data",
        "plot 2 (q), axis x: every point at one x (a zero-width axis)",
    ]
    assert [e for e in info["errors"] if e.startswith("empty plot: ")] == [
        f"empty plot: {e}" for e in info["empty"]
    ]
