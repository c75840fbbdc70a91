from pathlib import Path

from spacetp.result import Result as Result
from spacetp.scenario import ScenarioError as ScenarioError
from spacetp.sweep import SweepResult as SweepResult

def load(path: str | Path) -> dict: ...
def loads(text: str) -> dict: ...
def set_value(scenario: dict, path: str, value: object) -> None: ...
def apply_set(scenario: dict, assignment: str) -> None: ...
def validate(scenario: dict | str | Path) -> dict: ...
def run(
    scenario: dict | str | Path,
    seed: int | None = None,
    *,
    pcap: dict[str, str] | None = None,
    trace_interval: str | None = None,
    trace_segments: bool = False,
) -> Result: ...
def protocols() -> dict[str, dict]: ...
def sweep(
    scenario: dict | str | Path,
    grid: dict | None = None,
    reps: int = 10,
    executor: object = "local",
    workers: int | None = None,
    store: str | Path | None = None,
    metrics: list[str] | None = None,
    fail_fast: bool = False,
    progress: bool = True,
    base_seed: int | None = None,
    *,
    retry_failed: bool = False,
) -> SweepResult: ...
def load_sweep(store: str | Path, metrics: list[str] | None = None) -> SweepResult: ...
