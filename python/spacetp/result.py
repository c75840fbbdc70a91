"""The outcome of one run: summaries as dicts (or pandas frames), traces as numpy arrays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def _columns(raw: dict[str, bytes] | None) -> dict[str, np.ndarray] | None:
    if raw is None:
        return None
    import numpy as np  # only with traces: a run without pays nothing for it

    return {k: np.frombuffer(v, dtype="<f8") for k, v in raw.items()}


class Result:
    """Summary of a run plus its optional time series.

    `summary` has `run`, `flows` (one dict per flow), `links` (one per direction) and
    `datagrams`. `samples` (sender state sampled over time), `segments` (every data
    segment sent) and `limits` (each flow's limit state at every change) are dicts of numpy
    arrays when tracing was on.

    A run's summary stays in the core until it is read: `to_json` of a summary never read
    is written there (`spacetp run --json FILE -q` parses none of it).
    """

    def __init__(
        self,
        summary: dict | None = None,
        samples: dict[str, np.ndarray] | None = None,
        segments: dict[str, np.ndarray] | None = None,
        limits: dict[str, np.ndarray] | None = None,
        wall_s: float = 0.0,
        scenario: dict | None = None,
        *,
        core_summary=None,
    ):
        if (summary is None) == (core_summary is None):
            raise ValueError("a Result needs its summary, as a dict or as the core's")
        self._summary = summary
        self._core_summary = core_summary  # _core.Summary, until read
        self.samples = samples
        self.segments = segments
        self.limits = limits
        self.wall_s = wall_s
        self.scenario = scenario if scenario is not None else {}

    @classmethod
    def from_core(cls, raw: dict, scenario: dict) -> Result:
        return cls(
            samples=_columns(raw["samples"]),
            segments=_columns(raw["segments"]),
            limits=_columns(raw.get("limits")),
            wall_s=raw["wall_s"],
            scenario=scenario,
            core_summary=raw["summary"],
        )

    @property
    def summary(self) -> dict:
        core = self._core_summary
        if core is not None:
            if self._summary is None:
                self._summary = json.loads(core.text())
            self._core_summary = None  # the dict may change: it is the summary now
        return self._summary

    @summary.setter
    def summary(self, value: dict) -> None:
        if value is None:
            raise ValueError("a Result needs its summary")
        self._summary, self._core_summary = value, None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_summary"], state["_core_summary"] = self.summary, None
        return state

    def __repr__(self) -> str:
        return f"Result(wall_s={self.wall_s!r}, traces={self.samples is not None})"

    @property
    def flows(self) -> list[dict]:
        return self.summary["flows"]

    @property
    def links(self) -> list[dict]:
        return self.summary["links"]

    def flows_frame(self):
        import pandas as pd

        return pd.DataFrame(self.flows)

    def links_frame(self):
        import pandas as pd

        return pd.DataFrame(self.links)

    def samples_frame(self):
        import pandas as pd

        return None if self.samples is None else pd.DataFrame(self.samples)

    def segments_frame(self):
        import pandas as pd

        return None if self.segments is None else pd.DataFrame(self.segments)

    def limits_frame(self):
        """Each flow's limit state over time, one row per change: `time_s`, `flow`, `state`
        (its name, as in the summary's `limits`); the state holds until the flow's next row
        (or its end). None without tracing."""
        import pandas as pd

        from spacetp import _core

        if self.limits is None:
            return None
        names = _core.limit_states()
        f = pd.DataFrame(self.limits)
        f["flow"] = f["flow"].astype(int)
        f["state"] = [names[int(i)] for i in f["state"]]
        return f

    def limit_intervals(self, flow: int):
        """Flow `flow`'s limit states as intervals: `start_s`, `end_s`, `state` (the last ends
        at the flow's last byte, or the run's end). None without tracing."""
        import pandas as pd

        lf = self.limits_frame()
        if lf is None:
            return None
        lf = lf[lf["flow"] == flow].reset_index(drop=True)
        f = self.flows[flow]
        end = f.get("last_byte_s") if f.get("complete") else None
        end = end if end is not None else self.summary["run"]["end_s"]
        return pd.DataFrame(
            {
                "start_s": lf["time_s"],
                "end_s": [*lf["time_s"][1:], end],
                "state": lf["state"],
            }
        )

    def to_json(self) -> str:
        """Deterministic JSON of the summary (no wall-clock time in it): `json.dumps(summary,
        indent=2, sort_keys=True)`, written by the core's encoder of that same text
        (CPython's own encodes an indent in pure Python, slower than most runs)."""
        from spacetp import _core

        core = self._core_summary
        if core is not None:
            return core.indent2_sorted()
        text = _core.dumps_indent2_sorted(self.summary)
        return text if text is not None else json.dumps(self.summary, indent=2, sort_keys=True)

    def write_json(self, path: str | Path) -> None:
        """`to_json()` and a newline, written to `path`; by the core when Python never
        opened the summary (no Python string of the whole text: 16 MB for 10 000 flows)."""
        core = self._core_summary
        if core is not None:
            core.write_indent2_sorted(Path(path))
        else:
            Path(path).write_text(self.to_json() + "\n")

    def write_traces(self, path: str | Path) -> list[Path]:
        """Write samples to `path` (.csv or .parquet), and segments and limit states beside
        it (`NAME-segments.EXT`, `NAME-limits.EXT`). Returns the files written."""
        p = Path(path)
        if p.suffix not in (".csv", ".parquet"):
            raise ValueError(f"--trace {p}: use a .csv or .parquet file name")
        written = []
        for frame, target in (
            (self.samples_frame(), p),
            (self.segments_frame(), p.with_name(f"{p.stem}-segments{p.suffix}")),
            (self.limits_frame(), p.with_name(f"{p.stem}-limits{p.suffix}")),
        ):
            if frame is None:
                continue
            if p.suffix == ".csv":
                frame.to_csv(target, index=False)
            else:
                frame.to_parquet(target, index=False)
            written.append(target)
        return written
