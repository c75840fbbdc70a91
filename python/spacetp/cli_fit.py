"""The `spacetp fit` command (registered on the app of spacetp.cli, which imports this
module at its end: `register(app)`)."""

import json
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("fit")
    def fit(
        scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
        protocols: Annotated[
            str,
            typer.Option(help="Profiles, comma-separated, or 'all' (as spacetp compare)."),
        ] = "all",
        json_out: Annotated[
            Path | None, typer.Option("--json", help="Write every protocol's settings as JSON.")
        ] = None,
    ) -> None:
        """The settings each protocol would use on this link (fit = true): which, from what,
        to what, and by which rule (docs/fit.md)."""
        from spacetp import human
        from spacetp.console import out
        from spacetp.errors import UserError
        from spacetp.fit import fitted, lines
        from spacetp.scenario import ScenarioError

        try:
            rows = fitted(scenario, protocols)
        except ScenarioError as e:
            raise UserError(str(e)) from None
        path = next((r["path"] for r in rows if r["path"]), None)
        if path is not None:
            out.print(
                f"path of the first flow: {human.rate(path['rate_bps'])} forward, "
                f"{human.rate(path['back_rate_bps'])} back, RTT {human.duration(path['rtt_s'])}, "
                f"BDP {human.size(path['bdp_bytes'])}, MTU {path['mtu']} B, "
                f"loss {path['loss']:.2g} per packet",
                highlight=False, markup=False, soft_wrap=True,
            )  # fmt: skip
        for r in rows:
            out.print(f"\n{r['protocol']} ({r['family']})", highlight=False, markup=False)
            for line in lines(r):
                out.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
        if json_out is not None:
            json_out.write_text(json.dumps(rows, indent=2) + "\n")
            out.print(f"\nwritten to {json_out}", highlight=False)
