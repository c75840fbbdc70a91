"""The `spacetp` command.

The cli modules keep their annotations objects (no `from __future__ import annotations`):
typer would otherwise evaluate every command's annotation strings on each start, about 45 ms
of every `spacetp run` (tests/test_cli.py checks it).
"""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from spacetp import console, human
from spacetp.errors import SpacetpError, UserError
from spacetp.scenario import ScenarioError, apply_set, load

app = typer.Typer(
    help="spacetp: transport protocols over space links (simulate, compare, reproduce).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def version() -> str:
    """The installed package's version, and the compiled core's when it differs (a build
    older than the Python files)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        pkg = installed("spacetp")
    except PackageNotFoundError:
        pkg = "unknown (not installed)"
    try:
        from spacetp import _core

        core = _core.__version__
    except ImportError as e:
        return f"{pkg} (the compiled core does not load: {e})"
    return pkg if core == pkg else f"{pkg} (compiled core {core})"


def _print_version(value: bool) -> None:
    if value:
        console.out.print(f"spacetp {version()}", highlight=False, markup=False)
        raise typer.Exit()


@app.callback()
def _options(
    _version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print spacetp's version and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    pass


def _fmt_rate(bps: float) -> str:
    return human.rate(bps)


def _fmt_s(v: float | None) -> str:
    return human.duration(v)


def _parse_pcap(specs: list[str]) -> dict[str, str]:
    taps = {}
    for s in specs:
        if "=" not in s:
            raise UserError(f"--pcap {s}: use LINK=FILE, e.g. --pcap 1=space.pcap")
        link, path = s.split("=", 1)
        taps[link] = path
    return taps


def print_summary(res) -> None:
    from rich.table import Table

    run = res.summary["run"]
    t = Table(title=f"{run['name'] or 'scenario'} (seed {run['seed']})", title_justify="left")
    # Say which goodput each column is: to the last byte, and over the flows' windows.
    windowed = any(f.get("goodput_window_bps") is not None for f in res.flows)
    cols = ["flow", "protocol", "delivered", "complete", "time", "goodput (to last byte)"]
    cols += ["goodput (window)"] * windowed + ["retx", "timeouts", "mean RTT"]
    for col in cols:
        t.add_column(col, justify="left" if col in ("flow", "protocol") else "right")
    for f in res.flows[:50]:
        w = f.get("goodput_window_bps")
        t.add_row(
            f["name"],
            f["protocol"],
            human.size(f["bytes_delivered"]),
            _completeness(f),
            _fmt_s(f["completion_s"] if f["complete"] else f["last_byte_s"]),
            _fmt_rate(f["goodput_bps"]),
            *(["-" if w is None else _fmt_rate(w)] if windowed else []),
            str(f["retransmitted_segments"]),
            str(f["timeouts"]),
            _fmt_s(f["mean_rtt_s"]),
        )
    if len(res.flows) > 50:
        t.caption = f"... and {len(res.flows) - 50} more flows (see --json)"
    console.out.print(t)
    for f in res.flows[:50]:
        if f.get("failure"):
            console.out.print(f"{f['name']}: FAILED: {f['failure']}", highlight=False, markup=False)
        for line in limit_lines(f):
            console.out.print(f"{f['name']}: {line}", highlight=False, markup=False)
    lt = Table(title="links", title_justify="left")
    for col in (
        "direction",
        "sent",
        "queue drops",
        "error drops",
        "corrupted",
        "outage drops",
        "max queue",
    ):
        lt.add_column(col, justify="left" if col == "direction" else "right")
    for li in res.links:
        if li["tx_packets"] == 0 and li["queue_drops"] == 0:
            continue
        lt.add_row(
            li["name"],
            str(li["tx_packets"]),
            str(li["queue_drops"]),
            str(li["error_drops"]),
            str(li["corrupted"]),
            str(li["outage_drops"]),
            str(li["max_queue_packets"]),
        )
    console.out.print(lt)
    if res.summary.get("dtn"):
        _print_dtn(res.summary["dtn"])
    ev = run["events"]
    rate = ev / res.wall_s / 1e6 if res.wall_s > 0 else float("nan")
    console.out.print(
        f"simulated {human.duration(run['end_s'])} in {human.duration(res.wall_s)} of wall time "
        f"({ev:,} events, {rate:.1f} M events/s)"
    )


def _completeness(f: dict) -> str:
    """The table's "complete" cell: a failed flow says so (it is not a slow one)."""
    if f.get("failure"):
        return "FAILED"
    if f["complete"]:
        return "yes"
    return "-" if f["bytes_requested"] is None else "NO"


def limit_lines(flow: dict) -> list[str]:
    """What held a flow back, for the lines under the table: its largest state, and the
    largest one a setting could lift when the link (the good case) came first."""
    limits = flow.get("limits") or []
    if not limits:
        return []
    lines = [limits[0]["text"]]
    if limits[0]["state"] == "link":
        nxt = next((x for x in limits[1:] if x["share"] >= 0.1 and x["setting"]), None)
        if nxt is not None:
            lines.append(nxt["text"])
    return lines


def _print_dtn(dtn: dict) -> None:
    """The bundle agents of a delay-tolerant network: what each node carried and kept."""
    from rich.table import Table

    t = Table(title=f"bundle agents ({dtn['contacts']} contacts)", title_justify="left")
    cols = ("node", "ipn", "created", "forwarded", "delivered", "expired", "no route",
            "fragmented", "mean custody", "most stored")  # fmt: skip
    for col in cols:
        t.add_column(col, justify="left" if col == "node" else "right")
    for n in dtn["nodes"]:
        if not (n["bundles_created"] or n["bundles_received"]):
            continue
        t.add_row(
            n["node"],
            str(n["ipn"]),
            str(n["bundles_created"]),
            str(n["bundles_forwarded"]),
            str(n["bundles_delivered"]),
            str(n["bundles_expired"]),
            str(n["bundles_no_route"]),
            str(n["fragmentations"]),
            _fmt_s(n["storage_time_mean_s"]),
            human.size(n["stored_bytes_max"]),
        )
    console.out.print(t)


@app.command()
def run(
    scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
    seed: Annotated[int | None, typer.Option(help="Override the scenario's seed.")] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help='Override a field: --set links\\[1].delay="300 ms".'),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the summary as JSON.")
    ] = None,
    trace: Annotated[
        Path | None,
        typer.Option(help="Write sampled sender state (and every segment) to a .csv/.parquet."),
    ] = None,
    trace_interval: Annotated[str, typer.Option(help="Sampling interval for --trace.")] = "100 ms",
    pcap: Annotated[
        list[str] | None,
        typer.Option(help="Record a link to pcap: LINK=FILE (LINK: index, links\\[i] or a-b)."),
    ] = None,
    keylog: Annotated[
        Path | None,
        typer.Option(help="Write QUIC's TLS secrets here (SSLKEYLOGFILE format) for Wireshark."),
    ] = None,
    qlog: Annotated[
        Path | None,
        typer.Option(help="Write a qlog of each QUIC connection's ends into this folder."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing.")] = False,
) -> None:
    """Simulate a scenario and print a summary."""
    from spacetp.simulate import run as simulate

    sc = load(scenario)
    for s in set_ or []:
        apply_set(sc, s)
    kwargs = {}
    if trace is not None:
        if trace.suffix not in (".csv", ".parquet"):
            raise UserError(f"--trace {trace}: use a .csv or .parquet file name")
        kwargs = {"trace_interval": trace_interval, "trace_segments": True}
    try:
        res = simulate(
            sc, seed=seed, pcap=_parse_pcap(pcap or []), keylog=keylog, qlog=qlog, copy=False,
            **kwargs,
        )  # fmt: skip
    except ScenarioError as e:
        raise ScenarioError(f"{scenario}: {e}") from None
    if json_out is not None:
        res.write_json(json_out)
    written = res.write_traces(trace) if trace is not None else []
    if not quiet:
        print_summary(res)
        for w in written:
            console.out.print(f"trace written to {w}")


@app.command()
def validate(scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")]) -> None:
    """Check a scenario without running it."""
    from spacetp.scenario import validate as check

    try:
        check(load(scenario))
    except ScenarioError as e:
        raise ScenarioError(f"{scenario}: {e}") from None
    console.out.print(f"{scenario}: ok")


@app.command()
def protocols(
    as_json: Annotated[bool, typer.Option("--json", help="Print all settings as JSON.")] = False,
) -> None:
    """List every protocol of every transport and their settings: TCP's textbook profiles
    (the papers' and ns-3's mechanisms), Linux as deployed (linux-reno, linux-cubic,
    linux-bbr), SCPS-TP, Windows; QUIC (quic, quic-cubic, quic-newreno, quic-bbr); LTP; bp."""
    from rich.markup import escape

    from spacetp import _core
    from spacetp.simulate import linux_base, scps_ri_base
    from spacetp.simulate import protocols as profiles

    p = profiles()
    if as_json:
        console.out.print_json(json.dumps(p))
        return
    # TCP's families have titles of their own; every other transport is titled by the
    # registry (a new one is listed with no line here).
    titles = {
        "textbook": "Textbook: the papers' and ns-3's mechanisms on NewReno's defaults",
        "linux": "Linux as deployed (what a 6.x kernel does; use these for ordinary computers)",
        "draft": "IETF drafts on the LINUX_BASE settings (algorithms no stock kernel runs)",
        "scps": "SCPS-TP as the papers configured it",
        "scps-ri": "SCPS-TP with the Reference Implementation's defaults (RI 1.1.146)",
        "windows": "Windows stacks of Edwards et al.",
    }
    for t in json.loads(_core.transports()):
        for name in t["protocols"]:
            fam = p[name]["family"]
            if fam not in titles:
                titles[fam] = f"{t['title']} (settings: \\[flows.{t['settings_key']}])"
    for family, title in titles.items():
        console.out.print(f"\n[bold underline]{title}[/bold underline]")
        if family == "linux":
            for setting, source in linux_base():
                console.out.print(
                    f"  LINUX_BASE  {escape(setting)}  ({escape(source)})", highlight=False
                )
        if family == "scps-ri":
            for setting, source in scps_ri_base():
                console.out.print(f"  RI  {escape(setting)}  ({escape(source)})", highlight=False)
        for name, info in p.items():
            if info["family"] != family:
                continue
            console.out.print(f"[bold]{name}[/bold]: {escape(info['description'])}")
            given = {k: v for k, v in (info["settings"] or {}).items() if v is not None}
            settings = ", ".join(f"{k}={v}" for k, v in given.items())
            console.out.print(
                f"  {escape(settings or 'from the path and the flow')}", highlight=False
            )


@app.command()
def schema(
    transport: Annotated[
        str | None,
        typer.Option(help="A transport's \\[flows.KEY] settings instead: tcp, quic, ltp, bp..."),
    ] = None,
    tcp: Annotated[bool, typer.Option(help="Same as --transport tcp.")] = False,
    quic: Annotated[bool, typer.Option(help="Same as --transport quic.")] = False,
    ltp: Annotated[bool, typer.Option(help="Same as --transport ltp.")] = False,
) -> None:
    """Print the JSON Schema of scenarios, or of one transport's settings."""
    from spacetp import _core

    key = transport or ("tcp" if tcp else "quic" if quic else "ltp" if ltp else None)
    if key is None:
        print(_core.schema())
        return
    try:
        print(_core.transport_schema(key))
    except ValueError as e:
        raise ScenarioError(f"--transport {key}: {e}") from None


from spacetp.cli_bench import register as register_bench  # noqa: E402  (bench)
from spacetp.cli_cfdp import register as register_cfdp  # noqa: E402  (cfdp)
from spacetp.cli_compare import register as register_compare  # noqa: E402  (compare)
from spacetp.cli_dtn import register as register_dtn  # noqa: E402  (dtn)
from spacetp.cli_emulate import register as register_emulate  # noqa: E402  (emulate)
from spacetp.cli_fit import register as register_fit  # noqa: E402  (fit)
from spacetp.cli_gateway import register as register_gateway  # noqa: E402  (gateway)
from spacetp.cli_model import register as register_model  # noqa: E402  (model)
from spacetp.cli_plot import register as register_plot  # noqa: E402  (plot)
from spacetp.cli_reproduce import register as register_reproduce  # noqa: E402  (reproduce)
from spacetp.cli_schedule import register as register_schedule  # noqa: E402  (schedule)
from spacetp.cli_sweep import register  # noqa: E402  (sweep, results, plot)
from spacetp.cli_testbed import register as register_testbed  # noqa: E402  (testbed)
from spacetp.cli_tune import register as register_tune  # noqa: E402  (tune)

register(app)
register_plot(app)
register_compare(app)
register_model(app)
register_reproduce(app)
register_bench(app)
register_cfdp(app)
register_emulate(app)
register_gateway(app)
register_dtn(app)
register_schedule(app)
register_testbed(app)
register_fit(app)
register_tune(app)


def _is_usage_error(e: BaseException) -> bool:
    """Click's usage errors, from click itself or the copy typer vendors (typer._click)."""
    return (
        hasattr(e, "show")
        and hasattr(e, "exit_code")
        and type(e).__name__
        in {
            "UsageError",
            "BadParameter",
            "MissingParameter",
            "NoSuchOption",
            "BadOptionUsage",
            "BadArgumentUsage",
            "NoArgsIsHelpError",
            "FileError",
            "ClickException",
        }
    )


def main() -> None:
    try:
        code = app(standalone_mode=False)
    except SpacetpError as e:
        from rich.markup import escape

        # Escaped: messages quote user input and field paths such as `links[abc]`.
        console.err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
        sys.exit(2)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        console.err.print("aborted")
        sys.exit(130)
    except Exception as e:
        if _is_usage_error(e):
            e.show()
            sys.exit(2)
        raise
    # standalone_mode=False returns the exit code of an aborted run (e.g. 130 on Ctrl-C)
    if isinstance(code, int) and code != 0:
        sys.exit(code)


if __name__ == "__main__":
    main()
