"""docs/DESIGN.md describes the tree as it is: every file or folder its layout names exists
beneath the folder it is listed under."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"(?<![\w/.-])([\w-]+(?:\.(?:rs|py|toml|md|pyi)|/))(?=[\s,;:()]|$)")
SKIP = {"target", "__pycache__", "node_modules", "results", "corpus", "artifacts"}


def layout_lines() -> list[str]:
    text = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    return [line for line in block.splitlines()[1:] if line.strip()]


def find(ctx: Path, name: str) -> list[Path]:
    """Every `name` (a file, or a folder when it ends with /) at or beneath `ctx`."""
    want, folder = name.rstrip("/"), name.endswith("/")
    found = []
    for top, dirs, files in os.walk(ctx):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.startswith("."))
        if (want in dirs) if folder else (want in files or want in dirs):
            found.append(Path(top) / want)
    return found


def test_every_path_the_layout_names_exists():
    # Each level of the layout is the folders its line may mean (a name such as
    # `connection/` can stand in more than one place); a name must exist beneath one.
    stack: list[tuple[int, list[Path]]] = [(-1, [ROOT])]
    missing, checked = [], 0
    for line in layout_lines():
        indent = len(line) - len(line.lstrip())
        while stack[-1][0] >= indent:
            stack.pop()
        ctxs = stack[-1][1]
        names = NAME.findall(line)
        for name in names:
            checked += 1
            if not any(find(c, name) for c in ctxs):
                missing.append(f"{name} (under {ctxs[0].relative_to(ROOT)})")
        first = line.split()[0]
        if first.endswith("/") and names and names[0] == first:
            stack.append((indent, [p for c in ctxs for p in find(c, first)] or ctxs))
    assert checked > 100, f"the layout parser read only {checked} names"
    assert not missing, "docs/DESIGN.md names paths that do not exist: " + ", ".join(missing)


def test_the_check_would_catch_a_missing_file():
    assert find(ROOT / "crates", "no_such_module.rs") == []
    assert find(ROOT / "crates", "timer.rs") != []
