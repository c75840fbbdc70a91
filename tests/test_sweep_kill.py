"""Kill and resume: SIGKILL a running `spacetp sweep` (its whole process group: the command,
the forkserver and the workers) at several moments, before anything is written, while a batch
is being written and at random, then run it again to completion. Every kill must land while
runs remain to be done. The store must then hold exactly the planned runs, each once, each
complete, keyed by its scenario and (a random sample of 150) equal to a fresh run of it;
temporary files left by the kills are never read as rows."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import EXAMPLES
from spacetp import _core
from spacetp.store import Store
from spacetp.sweep import load_sweep

# 10 loss rates x 3 delays x 40 reps, about 4 ms each. A sweep writes a batch about every
# 0.5 s; each of the five kills keeps at most a batch or two (about 60-100 runs each on two
# cores; more on a faster machine, where 600 runs once ended before the fifth kill), so
# runs remain after the last one.
REPS = 40
RUNS = 10 * 3 * REPS


def command(store: Path) -> list[str]:
    exe = shutil.which("spacetp", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "spacetp.cli"]
    return [
        *cmd,
        "sweep",
        str(EXAMPLES / "asymmetry.toml"),
        "--grid",
        "links[1].errors.per=log:1e-4:1e-2:10",
        "--grid",
        "links[1].delay=50 ms,100 ms,150 ms",
        "--reps",
        str(REPS),
        "--workers",
        "2",
        "--store",
        str(store),
        "--no-progress",
    ]


def parts(store: Path) -> set[str]:
    d = store / "runs"
    return {p.name for p in d.iterdir()} if d.is_dir() else set()


def run_and_kill(store: Path, when) -> bool:
    """Start the sweep, SIGKILL its process group when `when(start_time)` says so. Returns
    whether it was killed (False: it finished first)."""
    proc = subprocess.Popen(
        command(store),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    start = time.monotonic()
    try:
        while proc.poll() is None:
            if when(start):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return True
            time.sleep(0.002)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, proc.stderr.read().decode()
    return False


def check_store(store: Path) -> int:
    """Whatever the moment of the kill: readable, one complete record per key."""
    if not (store / "spacetp-store.json").exists():
        return 0
    raw = Store.open(store).read(dedupe=False)
    assert raw["key"].is_unique, "a row was written twice"
    assert (raw["status"] == "ok").all()
    assert raw["summary"].notna().all() and raw["scenario"].notna().all()
    assert len(raw) <= RUNS
    return len(raw)


def test_sigkill_at_any_moment_then_resume(tmp_path):
    store = tmp_path / "store"
    rng = random.Random(6)
    before = set()

    def at(seconds):
        return lambda start: time.monotonic() - start >= seconds

    def writing(start):  # a batch is being written, or has just been (a file new to `runs`)
        return bool(parts(store) - before)

    def after_a_batch(delay):
        state = {}

        def when(start):
            if "t" not in state and {n for n in parts(store) if n.startswith("part-")} - before:
                state["t"] = time.monotonic()
            return "t" in state and time.monotonic() - state["t"] >= delay

        return when

    def starting(start):  # the store exists, nothing written yet
        return (store / "spacetp-store.json").exists() and not parts(store)

    schedule = [
        starting,
        at(rng.uniform(0.3, 1.2)),  # at random, early: the runs take seconds
        writing,
        after_a_batch(rng.uniform(0.0, 0.3)),
        writing,
    ]
    counts = []
    for i, when in enumerate(schedule):
        before = parts(store)
        assert run_and_kill(store, when), f"kill {i} did not land: the sweep finished first"
        counts.append(check_store(store))
    assert counts[0] == 0, "killed while starting up, before anything was written"
    assert counts == sorted(counts), "a kill never loses rows already written"
    assert counts[-1] < RUNS, f"the kills left nothing to do: {counts}"

    # what a kill in the middle of a write leaves behind is never read
    runs_dir = store / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    (runs_dir / ".part-00000000000000000001-1-1.parquet.tmp").write_bytes(b"PAR1 torn")

    proc = subprocess.run(command(store), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"{RUNS - counts[-1]} computed, {counts[-1]} from the store, 0 failed" in proc.stdout

    raw = Store.open(store).read(dedupe=False)
    assert len(raw) == RUNS and raw["key"].is_unique
    res = load_sweep(store)
    assert len(res.runs) == RUNS and (res.runs["status"] == "ok").all()
    assert set(res.runs["key"]) == set(raw["key"])
    sample = set(random.Random(7).sample(range(RUNS), 150))
    for i, rec in enumerate(raw.itertuples()):
        scenario = json.loads(rec.scenario)
        text = json.dumps(
            {"scenario": scenario, "version": _core.__version__},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        assert hashlib.sha256(text.encode()).hexdigest() == rec.key
        if i not in sample:
            continue
        fresh = _core.run_json(rec.scenario, [])
        assert fresh["summary"].text() == rec.summary, rec.key
