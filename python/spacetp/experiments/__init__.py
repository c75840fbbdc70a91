"""Reproductions of the source papers' experiments: `spacetp reproduce PAPER`.

Each paper is one module in `spacetp.experiments.papers` (its name is the paper's name on the
command line) with a `run(ctx) -> Outcome` function; its figures, captions and targets live in
`targets.toml` beside this file. Adding a paper is adding its module and its entries there:
the registry below finds the module by itself.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from spacetp.experiments import papers as _papers
from spacetp.scenario import ScenarioError


class UnknownPaper(ScenarioError):
    """A paper name the registry does not have: one line, exit code 2."""


def available() -> list[str]:
    """Names of the implemented papers, in alphabetical order."""
    return sorted(
        m.name for m in pkgutil.iter_modules(_papers.__path__) if not m.name.startswith("_")
    )


def get(name: str) -> ModuleType:
    """The module of one paper; UnknownPaper names what exists."""
    names = available()
    if name in names:
        return importlib.import_module(f"spacetp.experiments.papers.{name}")
    have = ", ".join([*names, "all"])
    raise UnknownPaper(f"unknown paper '{name}'; available: {have}")


def resolve(name: str) -> list[str]:
    """`all` or one name -> the list of paper names to run (checked)."""
    if name == "all":
        return available()
    get(name)
    return [name]
