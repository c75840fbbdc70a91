"""Every notebook of examples/notebooks runs from top to bottom (nbclient, the Jupyter
project's own executor, with an IPython kernel): the notebooks cannot go stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "examples" / "notebooks").glob("*.ipynb"))


def test_one_notebook_per_main_use():
    names = {p.stem for p in NOTEBOOKS}
    assert names == {
        "compare_my_link",
        "sweep_with_confidence_intervals",
        "reproduce_and_change_assumptions",
        "constellation_paths",
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"{path.name}: commit it without outputs (they are made here)"
    )
    # run where a user would open it; its results/ go to a temporary folder
    work = tmp_path / "examples" / "notebooks"
    work.mkdir(parents=True)
    for example in ("geo.toml", "kuiper-pair.toml"):
        (tmp_path / "examples" / example).symlink_to(ROOT / "examples" / example)
    # Keep them quick (CI runs them): `make test`'s --durations lists them; no wall-clock
    # assertion here, which a loaded machine would fail. A cell may take 300 s at most.
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    ).execute()
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
