"""The `spacetp schedule` command (registered on the app of spacetp.cli): the schedules a
scenario's links will follow (from orbits, ephemerides, traces, contact plans or written
out), as a table of up windows, a CSV, a figure, an ION contact plan, and traces in the
formats `links[i].trace` reads (Mahimahi, delay CSV) for other emulators and other runs."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer


def _numbers(specs: list[str]) -> list[tuple[str, int]]:
    from spacetp.errors import UserError

    out = []
    for s in specs:
        name, _, num = s.partition("=")
        if not num.isdigit():
            raise UserError(f"--node {s}: use NAME=NUMBER, e.g. --node ground=1")
        out.append((name, int(num)))
    return out


def _utc(t0: datetime | None, s: float) -> str:
    return f" ({(t0 + timedelta(seconds=s)):%H:%M:%S})" if t0 is not None else ""


def _span(col, scale: float, units: tuple[str, ...]) -> str:
    """min-max of a column: seconds shown in ms when below 1 s."""
    lo, hi = float(col.min()) * scale, float(col.max()) * scale
    if units == ("s", "ms") and hi < 1.0:
        lo, hi, unit = lo * 1e3, hi * 1e3, "ms"
    else:
        unit = units[0]
    f = ".6g" if unit == "s" else ".4g"
    return f"{lo:{f}} {unit}" if abs(hi - lo) < 1e-12 else f"{lo:{f}}-{hi:{f}} {unit}"


def _constellation(sc: dict, scenario: Path, pairs, plot, csv) -> None:
    """Each pair's RTT, hops and path changes over the constellation's routing steps."""
    from rich.table import Table

    from spacetp.console import out
    from spacetp.constellation import pair_series, view
    from spacetp.errors import ScenarioError, UserError
    from spacetp.linksrc import _require_orbits

    chosen = []
    for p in pairs or []:
        a, sep, b = p.partition(",")
        if not sep or not a.strip() or not b.strip():
            raise UserError(f"--pair {p}: use FROM,TO, e.g. --pair 'Paris,Moscow'")
        chosen.append((a.strip(), b.strip()))
    chosen = chosen or view.default_pairs(sc)
    if not chosen:
        raise UserError("no pair to show: give --pair FROM,TO or add [[flows]]")
    try:
        _require_orbits("orbit", "constellation")
        df = pair_series(sc, chosen)
    except ScenarioError as e:
        raise ScenarioError(f"{scenario}: {e}", e.path) from None
    rows = view.summary_rows(df)
    t_ = Table(title=f"{scenario}: paths over the constellation", title_justify="left")
    for col in rows[0]:
        t_.add_column(col, justify="left" if col == "pair" else "right")
    for r in rows:
        t_.add_row(*[str(v) for v in r.values()])
    out.print(t_)
    if csv is not None:
        df.to_csv(csv, index=False)
        out.print(f"RTT, hops and paths written to {csv}")
    if plot is not None:
        view.plot(df, str(plot), scenario.name)
        out.print(f"figure written to {plot}")


def register(app: typer.Typer) -> None:
    @app.command("schedule")
    def schedule(
        scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", help="Override a field, as for spacetp run."),
        ] = None,
        plot: Annotated[
            Path | None, typer.Option(help="Draw elevation, delay, rate and up windows here.")
        ] = None,
        csv: Annotated[Path | None, typer.Option(help="Write the sampled schedules here.")] = None,
        link: Annotated[
            int | None,
            typer.Option(
                help="Only this link (index from 0; default: every link whose properties change)."
            ),
        ] = None,
        step: Annotated[
            float, typer.Option(help="Sampling step (s) of links without an orbit's own grid.")
        ] = 1.0,
        contact_plan: Annotated[
            Path | None,
            typer.Option(help="Write the links' up windows as an ION contact plan here."),
        ] = None,
        mahimahi: Annotated[
            Path | None,
            typer.Option(help="Write the (first) link's forward rate as a Mahimahi trace here."),
        ] = None,
        delay_csv: Annotated[
            Path | None,
            typer.Option(help="Write the (first) link's forward delay as a time,delay CSV here."),
        ] = None,
        node: Annotated[
            list[str] | None,
            typer.Option(
                help="ION node number of a node for --contact-plan: NAME=NUMBER "
                "(default: position in \\[\\[nodes]] + 1)."
            ),
        ] = None,
        pair: Annotated[
            list[str] | None,
            typer.Option(
                help="A constellation: this pair of ground stations, FROM,TO (default: "
                "every flow's ends)."
            ),
        ] = None,
    ) -> None:
        """Show the schedules of a scenario's links: spacetp schedule SCENARIO.toml --plot
        pass.png --csv pass.csv."""
        import json

        import numpy as np
        import pandas as pd
        from rich.table import Table

        from spacetp import _core
        from spacetp.console import out
        from spacetp.errors import ScenarioError, UserError
        from spacetp.linksrc import resolve_with_tables, view
        from spacetp.scenario import apply_set, load

        if not step > 0:
            raise UserError(f"--step {step}: must be > 0 seconds")
        sc = load(scenario)
        for s in set_ or []:
            apply_set(sc, s)
        if sc.get("constellation") is not None:
            _constellation(sc, scenario, pair, plot, csv)
            return
        try:
            resolved, tables = resolve_with_tables(sc)
            links = view.core_schedules(resolved)
        except ScenarioError as e:
            raise ScenarioError(f"{scenario}: {e}", e.path) from None
        if link is not None:
            if not 0 <= link < len(links):
                raise UserError(f"--link {link}: the scenario has {len(links)} links")
            chosen = [links[link]]
        else:
            chosen = [lk for lk in links if view.varies(lk)] or links[:1]
        end = view.horizon(sc, chosen, tables)
        starts = [
            tab.attrs["start_utc"]
            for t in tables.values()
            for tab in t.values()
            if "start_utc" in tab.attrs
        ]
        t0 = datetime.fromisoformat(starts[0]) if starts else None
        frames = []
        for lk in chosen:
            tabs = tables.get(f"links[{lk['index']}]", {})
            own = [tab for src, tab in tabs.items() if src != "trace"]
            t = own[0]["time_s"].to_numpy() if own else np.arange(0.0, end + step / 2, step)
            frames.append(view.sample(lk, t, tabs))
        t_ = Table(title=f"{scenario}: up windows", title_justify="left")
        for col in ("link", "up from", "to", "length", "delay", "rate"):
            t_.add_column(col, justify="left" if col == "link" else "right")
        for lk, df in zip(chosen, frames, strict=True):
            for s, e in view.up_windows(lk["directions"][0]["down"], end):
                w = df[(df["time_s"] >= s) & (df["time_s"] <= e)]
                if w.empty:
                    w = df.iloc[[int(np.searchsorted(df["time_s"], s, side="right")) - 1]]
                t_.add_row(
                    df["link"].iloc[0],
                    f"{s:.2f} s{_utc(t0, s)}",
                    f"{e:.2f} s{_utc(t0, e)}",
                    f"{e - s:.2f} s",
                    _span(w["delay_s"], 1.0, ("s", "ms")),
                    _span(w["rate_bps"], 1e-6, ("Mb/s",)),
                )
        out.print(t_)
        if t0 is not None:
            out.print(f"time 0 is {t0.astimezone(UTC).isoformat()}", highlight=False)
        if csv is not None:
            pd.concat(frames).to_csv(csv, index=False)
            out.print(f"schedules written to {csv}")
        if plot is not None:
            title = f"{scenario.name}" + (f", from {t0:%Y-%m-%d %H:%M:%S} UTC" if t0 else "")
            view.plot(frames, str(plot), title)
            out.print(f"figure written to {plot}")
        if mahimahi is not None:
            lines = view.mahimahi(chosen[0]["directions"][0], end)
            mahimahi.write_text("".join(f"{x}\n" for x in lines))
            out.print(f"Mahimahi trace written to {mahimahi} ({len(lines)} opportunities)")
        if delay_csv is not None:
            f = frames[0]
            f[["time_s", "delay_s"]].to_csv(delay_csv, index=False)
            out.print(f"delay trace written to {delay_csv}")
        if contact_plan is not None:
            epoch = int(t0.timestamp()) if t0 is not None else None
            try:
                text = _core.contact_plan(json.dumps(resolved), _numbers(node or []), end, epoch)
            except ValueError as e:
                raise ScenarioError.from_core(e) from None
            contact_plan.write_text(text)
            out.print(f"contact plan written to {contact_plan}")
