"""Where sweep runs execute: a local process pool, or a Dask cluster.

Both call the same `run_chunk` on chunks of runs (a run = its key and its resolved scenario as
JSON) and yield the records of each finished chunk, in completion order. Whatever runs a run,
the simulator is deterministic, so the records are the same bit for bit.

Chunks: a small run takes well under a millisecond while handing a task to a process costs
a fraction of one, so runs travel in chunks of up to 64, shrinking towards the end of the
sweep so that the last ones still spread over all workers.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Iterator
from typing import Any

from spacetp.scenario import ScenarioError

MAX_CHUNK = 64
CHUNKS_PER_WORKER = 4


class ExecutorFailed(ScenarioError):
    """The executor itself broke (a worker died, the scheduler went away); records written so
    far are kept, and running the sweep again resumes."""


def run_chunk(chunk: list[tuple[str, str]]) -> list[dict]:
    """Run each (key, scenario JSON); a failure becomes a record, never an exception."""
    from spacetp import _core
    from spacetp.linksrc import resolve_json

    out = []
    for key, scenario_json in chunk:
        try:
            raw = _core.run_json(resolve_json(scenario_json), [])
            out.append(
                {
                    "key": key,
                    "status": "ok",
                    "error": None,
                    "summary": raw["summary"].text(),
                    "wall_s": raw["wall_s"],
                }
            )
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # a Rust panic arrives as a BaseException
            msg = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
            out.append(
                {"key": key, "status": "error", "error": msg, "summary": None, "wall_s": 0.0}
            )
    return out


def chunks(items: list, workers: int) -> list[list]:
    """Guided chunks: each takes 1/CHUNKS_PER_WORKER of a worker's share of what remains (at
    most MAX_CHUNK), so they shrink to single runs at the end and no worker idles long while
    another finishes a big one."""
    out, i = [], 0
    while i < len(items):
        size = max(1, min(MAX_CHUNK, (len(items) - i) // (workers * CHUNKS_PER_WORKER)))
        out.append(items[i : i + size])
        i += size
    return out


def default_workers() -> int:
    return os.cpu_count() or 1


def describe(executor: Any) -> str:
    return executor if isinstance(executor, str) else type(executor).__name__


def check(executor: Any) -> None:
    """Reject an executor name before anything runs."""
    if isinstance(executor, str):
        if executor in ("local", "dask") or executor.startswith("dask://"):
            if executor.startswith("dask://") and not executor[len("dask://") :]:
                raise ScenarioError("--executor dask://: give the scheduler, dask://HOST:PORT")
            return
        raise ScenarioError(
            f"--executor {executor}: use local, dask (a local Dask cluster) or dask://HOST:PORT"
        )
    if not (hasattr(executor, "submit") and hasattr(executor, "map")):
        raise ScenarioError(
            f"executor {executor!r}: use 'local', 'dask', 'dask://HOST:PORT' or a "
            "dask.distributed Client"
        )


def iterate(executor: Any, work: list[list], workers: int) -> Iterator[list[dict]]:
    """Run the chunks in `work`; yield each finished chunk's records. Closing the iterator
    early (fail-fast, Ctrl-C) cancels what has not started and releases the workers."""
    check(executor)
    if not work:
        return
    if executor == "local":
        yield from _local(work, workers)
    elif isinstance(executor, str):
        address = executor[len("dask://") :] if executor.startswith("dask://") else None
        yield from _dask(work, workers, address, None)
    else:
        yield from _dask(work, workers, None, executor)


def _local(work: list[list], workers: int) -> Iterator[list[dict]]:
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # forkserver: workers start from a clean, single-threaded process with the core already
    # imported (fast, and safe while the progress bar's thread runs in this one). As with
    # spawn, each worker imports the main script: scripts need `if __name__ == "__main__":`.
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["spacetp.executors", "spacetp._core"])
    pool = ProcessPoolExecutor(max_workers=min(workers, len(work)), mp_context=ctx)
    try:
        futures = [pool.submit(run_chunk, c) for c in work]
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except BrokenProcessPool as e:
                raise ExecutorFailed(
                    f"a worker process died ({e}); finished runs are saved, run the sweep "
                    "again to resume. (A script that calls spacetp.sweep must do it under "
                    "`if __name__ == '__main__':`, as workers import the main script.)"
                ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _dask(work: list[list], workers: int, address: str | None, client) -> Iterator[list[dict]]:
    try:
        import distributed
    except ImportError:
        raise ScenarioError(
            "--executor dask needs dask.distributed: pip install 'dask[distributed]'"
        ) from None
    cluster = None
    own = client is None
    if own:
        if address is None:
            cluster = distributed.LocalCluster(
                n_workers=min(workers, len(work)),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            client = distributed.Client(cluster)
        else:
            target = address if "://" in address else f"tcp://{address}"
            try:
                client = distributed.Client(target, timeout="20s")
            except OSError as e:
                raise ScenarioError(f"--executor dask://{address}: cannot connect ({e})") from None
    futures = []
    try:
        futures = client.map(run_chunk, work, pure=False)
        for fut in distributed.as_completed(futures):
            try:
                yield fut.result()
            except Exception as e:
                raise ExecutorFailed(
                    f"the Dask cluster failed a task ({type(e).__name__}: {e}); finished runs "
                    "are saved, run the sweep again to resume"
                ) from None
    finally:
        if futures:
            client.cancel(futures)
        if own:
            client.close()
            if cluster is not None:
                cluster.close()
