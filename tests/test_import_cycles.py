"""No import cycles: among the Python package's modules (imports at module level and inside
functions alike), and among the top-level modules of each Rust crate (`use crate::x`,
outside test code)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / "python"


def python_graph() -> dict[str, set[str]]:
    mods = {}
    for p in sorted((PY / "spacetp").rglob("*.py")):
        parts = list(p.relative_to(PY).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        mods[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)

    def owner(name: str) -> str | None:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in mods:
                return ".".join(parts[:i])
        return None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, (path, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = mod.split(".")[: len(mod.split(".")) - node.level + (1 if is_pkg else 0)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                o = owner(t)
                # A package's own submodules, imported from within it, are no cycle.
                if o and o != mod and not o.startswith(mod + ".") and not mod.startswith(o + "."):
                    graph[mod].add(o)
    return graph


def rust_graph(crate: Path) -> dict[str, set[str]]:
    src = crate / "src"
    graph: dict[str, set[str]] = {}
    for p in src.rglob("*.rs"):
        module = p.relative_to(src).parts[0].removesuffix(".rs")
        if module in ("lib", "main", "bin", "testing", "fuzzing") or p.name.startswith("tests"):
            continue
        text = p.read_text(encoding="utf-8").split("#[cfg(test)]\nmod tests {")[0]
        deps = {m for m in re.findall(r"crate::(\w+)", text) if m != module}
        graph.setdefault(module, set()).update(deps)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def test_the_python_package_has_no_import_cycle():
    graph = python_graph()
    assert len(graph) > 40 and graph["spacetp.experiments.runner"], "the parser read nothing"
    assert cycles(graph) == []


def test_no_rust_crate_has_a_module_cycle():
    for crate in sorted((ROOT / "crates").iterdir()):
        if (crate / "src").is_dir():
            assert cycles(rust_graph(crate)) == [], crate.name


def test_a_cycle_is_found_when_there_is_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
