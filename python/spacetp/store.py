"""The results store of sweeps: a directory of Parquet files, one row per run, keyed by the
content hash of what the run computes.

Layout of a store DIR:

    DIR/spacetp-store.json            marks the directory as a store (format version)
    DIR/sweep.json                    the last sweep run into it: scenario, grid, reps, seeds,
                                      metrics, version (what `spacetp results` and `plot` show)
    DIR/runs/part-<ns>-<pid>-<n>.parquet   batches of run records
    DIR/runs/.part-....tmp            a batch being written (never read)

A run record: `key` (sha256 of the fully resolved scenario, seed included, and the spacetp
version), `seed`, `status` ("ok" or "error"), `error` (the message, for a failed run),
`wall_s` (the core's own time), `version`, `scenario` (the resolved scenario as JSON, so a
row can be re-run and its key checked from the store alone) and `summary` (the run's summary
as JSON, from which every metric is computed: changing metrics never needs a re-run).

Why Parquet batches and not one file per run: a run of a small scenario takes a fraction of a
millisecond, and a durable write (fsync) costs milliseconds, so the sweep buffers records and
writes a batch at most about twice a second; thousands of runs then live in a few files that
pyarrow reads in milliseconds. When more than a few batches pile up, the sweep merges them
into one (compaction).

Guarantees, whatever moment the process is killed (SIGKILL included):
- a batch is written to a temporary file, fsynced, then renamed into place with os.replace
  (atomic), and the directory is fsynced: a part file is complete or absent. Temporary files
  are never read; stale ones are removed by later compactions.
- a killed sweep loses at most the records it had not yet written; running it again computes
  exactly the keys that are missing.
- compaction writes the merged part first, naming in its metadata the parts it replaces, then
  deletes them. A reader ignores any part named as replaced by another, so a crash between the
  two steps shows every record once, not twice.
- a key may still be written twice (two sweeps sharing a store computed it at once, or a failed
  run retried): readers keep one record per key, an "ok" one before an "error" one, else the
  newest. Records of one key are equal by construction (the simulator is deterministic).
"""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path

from spacetp.scenario import ScenarioError

FORMAT = 1
MARKER = "spacetp-store.json"
DEFINITION = "sweep.json"
RUNS = "runs"
COMPACT_ABOVE = 8  # parts; merging more often only rewrites the same rows
STALE_TMP_S = 3600.0
_REPLACES = b"spacetp.replaces"
_seq = itertools.count()


def schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("key", pa.string()),
            ("seed", pa.int64()),
            ("status", pa.string()),
            ("error", pa.string()),
            ("wall_s", pa.float64()),
            ("version", pa.string()),
            ("scenario", pa.string()),
            ("summary", pa.string()),
        ]
    )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _is_tmp(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(".tmp")


def write_atomic(path: Path, data: bytes) -> None:
    """Write a small file so that it is either the old or the new content, never a mix."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{next(_seq)}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class Store:
    """A store directory, or an in-memory store when `path` is None (nothing kept)."""

    def __init__(self, path: str | Path | None):
        self.path = None if path is None else Path(path)
        self._memory: list = []  # pyarrow tables, when in memory
        self._definition: dict | None = None

    # ------------------------------------------------------------------ opening

    @classmethod
    def create(cls, path: str | Path | None) -> Store:
        """Open a store, making it if needed. Refuses a directory that holds other things."""
        st = cls(path)
        if st.path is None:
            return st
        p = st.path
        if p.exists() and not p.is_dir():
            raise ScenarioError(f"--store {p}: exists and is not a directory")
        if p.is_dir() and not (p / MARKER).exists():
            # a kill while the marker was written leaves only its temporary file
            if any(not _is_tmp(c) for c in p.iterdir()):
                raise ScenarioError(
                    f"--store {p}: this directory is not empty and is not a spacetp store; "
                    "choose a new or empty directory"
                )
        try:
            p.mkdir(parents=True, exist_ok=True)
            if not (p / MARKER).exists():  # the marker first: then the directory is ours
                write_atomic(p / MARKER, json.dumps({"format": FORMAT}).encode() + b"\n")
            (p / RUNS).mkdir(exist_ok=True)
        except OSError as e:
            raise ScenarioError(f"--store {p}: cannot create it ({e.strerror})") from None
        return st

    @classmethod
    def open(cls, path: str | Path) -> Store:
        """Open an existing store (for reading results)."""
        p = Path(path)
        if not (p / MARKER).is_file():
            raise ScenarioError(f"{p}: not a sweep store (no {MARKER}); run `spacetp sweep` first")
        fmt = json.loads((p / MARKER).read_text()).get("format")
        if fmt != FORMAT:
            raise ScenarioError(f"{p}: store format {fmt}, this spacetp reads format {FORMAT}")
        return cls(p)

    # ------------------------------------------------------------------ sweep definition

    def save_definition(self, definition: dict) -> None:
        self._definition = definition
        if self.path is not None:
            text = json.dumps(definition, indent=1, ensure_ascii=False) + "\n"
            write_atomic(self.path / DEFINITION, text.encode())

    def load_definition(self) -> dict:
        if self.path is None:
            if self._definition is None:
                raise ScenarioError("this in-memory store holds no sweep")
            return self._definition
        p = self.path / DEFINITION
        if not p.is_file():
            raise ScenarioError(f"{self.path}: the store holds no sweep yet (no {DEFINITION})")
        return json.loads(p.read_text())

    # ------------------------------------------------------------------ parts

    def _all_parts(self) -> list[Path]:
        assert self.path is not None
        return sorted((self.path / RUNS).glob("part-*.parquet"))

    def _partition(self) -> tuple[list[Path], list[Path]]:
        """(live parts, parts replaced by a compaction and not yet deleted), oldest first."""
        import pyarrow.parquet as pq

        parts = self._all_parts()
        replaced: set[str] = set()
        for p in parts:
            meta = pq.read_schema(p).metadata or {}
            if _REPLACES in meta:
                replaced.update(json.loads(meta[_REPLACES]))
        live = [p for p in parts if p.name not in replaced]
        dead = [p for p in parts if p.name in replaced]
        return live, dead

    def write(self, rows: list[dict], replaces: list[str] | None = None) -> None:
        """Write records as one new part, atomically."""
        import pyarrow as pa

        table = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows, schema())
        if self.path is None:
            self._memory.append(table)
            return
        import pyarrow.parquet as pq

        if replaces:
            table = table.replace_schema_metadata({_REPLACES: json.dumps(replaces)})
        runs = self.path / RUNS
        name = f"part-{time.time_ns():020d}-{os.getpid()}-{next(_seq)}.parquet"
        tmp = runs / f".{name}.tmp"
        with open(tmp, "wb") as f:
            pq.write_table(table, f, compression="zstd")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, runs / name)
        _fsync_dir(runs)

    def _tables(self, columns: list[str] | None, live: list[Path] | None = None) -> list:
        if self.path is None:
            return [t.select(columns) if columns else t for t in self._memory]
        import pyarrow.parquet as pq

        for _ in range(5):
            try:
                parts = live if live is not None else self._partition()[0]
                return [pq.read_table(p, columns=columns) for p in parts]
            except FileNotFoundError:
                if live is not None:
                    raise
                # another sweep's compaction replaced a part meanwhile: list the parts again
            except OSError as e:  # cannot happen with atomic writes, unless edited by hand
                raise ScenarioError(f"{self.path}: unreadable part of the store ({e})") from None
        raise ScenarioError(f"{self.path}: the store keeps changing under this reader")

    def read(self, columns: list[str] | None = None, dedupe: bool = True, keys=None):
        """Run records as a pandas DataFrame (oldest first), one per key when `dedupe`.
        `keys`: keep only these keys (an iterable of strings)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        cols = None if columns is None else list(dict.fromkeys(["key", "status", *columns]))
        tables = self._tables(cols)
        if not tables:
            return schema().empty_table().select(cols or schema().names).to_pandas()
        table = pa.concat_tables(tables)
        if keys is not None:
            table = table.filter(pc.is_in(table["key"], value_set=pa.array(list(keys))))
        df = table.to_pandas()
        return _dedupe(df) if dedupe else df

    def done_keys(self, retry_failed: bool = False) -> set[str]:
        """Keys with a record (only successful ones when `retry_failed`)."""
        df = self.read(["key", "status"])
        if retry_failed:
            df = df[df["status"] == "ok"]
        return set(df["key"])

    def part_count(self) -> int:
        return len(self._memory) if self.path is None else len(self._partition()[0])

    def compact(self) -> None:
        """Merge the live parts into one and delete the merged ones (see module docstring)."""
        if self.path is None:
            if len(self._memory) > 1:
                import pyarrow as pa

                self._memory = [pa.concat_tables(self._memory)]
            return
        live, dead = self._partition()
        for p in dead:  # replaced by an earlier compaction killed before it deleted them
            p.unlink(missing_ok=True)
        now = time.time()
        for p in [*self.path.glob(".*.tmp"), *(self.path / RUNS).glob(".*.tmp")]:
            try:
                if now - p.stat().st_mtime > STALE_TMP_S:
                    p.unlink()
            except FileNotFoundError:
                pass
        if len(live) < 2:
            return
        import pyarrow as pa

        try:
            merged = pa.concat_tables(self._tables(None, live))
        except FileNotFoundError:  # another sweep sharing the store is compacting it
            return
        df = _dedupe(merged.to_pandas())
        self.write(pa.Table.from_pandas(df, schema(), preserve_index=False), [p.name for p in live])
        for p in live:
            p.unlink(missing_ok=True)
        _fsync_dir(self.path / RUNS)


def _dedupe(df):
    """One record per key: an "ok" one before an "error" one, else the newest (rows are
    oldest first); the order of the kept rows is preserved."""
    import numpy as np

    if not len(df):
        return df.reset_index(drop=True)
    df = df.iloc[::-1]
    df = df.iloc[np.argsort((df["status"] != "ok").to_numpy(), kind="stable")]
    return df.drop_duplicates("key").sort_index().reset_index(drop=True)
