"""docs/DESIGN.md describes the tree as it is: every file or folder its layout names exists
beneath the folder it is listed under."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"(?<![\w/.-])([\w-]+(?:\.(?:rs|py|toml|md|pyi)|/))(?=[\s,;:()]|$)")


def layout_lines() -> list[str]:
    text = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    return [line for line in block.splitlines()[1:] if line.strip()]


SKIP = {"target", ".git", ".venv", "__pycache__", "node_modules", "results"}


def find(ctx: Path, name: str) -> Path | None:
    """`name` (a file, or a folder when it ends with /) at or beneath `ctx`."""
    want, folder = name.rstrip("/"), name.endswith("/")
    direct = ctx / want
    if direct.is_dir() if folder else direct.exists():
        return direct
    for top, dirs, files in os.walk(ctx):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not d.startswith("."))
        if (want in dirs) if folder else (want in files or want in dirs):
            return Path(top) / want
    return None


def test_every_path_the_layout_names_exists():
    stack: list[tuple[int, Path]] = [(-1, ROOT)]
    missing, checked = [], 0
    for line in layout_lines():
        indent = len(line) - len(line.lstrip())
        while stack[-1][0] >= indent:
            stack.pop()
        ctx = stack[-1][1]
        names = NAME.findall(line)
        for name in names:
            checked += 1
            if find(ctx, name) is None:
                missing.append(f"{name} (under {ctx.relative_to(ROOT)})")
        first = line.split()[0]
        if first.endswith("/") and names and names[0] == first:
            stack.append((indent, find(ctx, first) or ctx / first))
    assert checked > 100, f"the layout parser read only {checked} names"
    assert not missing, "docs/DESIGN.md names paths that do not exist: " + ", ".join(missing)


def test_the_check_would_catch_a_missing_file(tmp_path):
    assert find(ROOT / "crates", "no_such_module.rs") is None
    assert find(ROOT / "crates", "timer.rs") is not None
