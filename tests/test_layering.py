"""The library's packages are layered (docs/architecture.md §2): no package imports one that imports it back,
whether at module level or inside a function."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "isonorm"


def package_imports() -> dict[str, set[str]]:
    """{top-level package or module of isonorm: the others it imports}, from every import statement."""
    deps: dict[str, set[str]] = defaultdict(set)
    for file in PACKAGE.rglob("*.py"):
        parts = file.relative_to(PACKAGE).parts
        owner = parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:  # relative: resolve against the importing file's folder
                base = list(parts[:-1])[: len(parts) - node.level]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.startswith("isonorm."):
                target = node.module.split(".")[1:]
            else:
                continue
            if target and target[0] != owner:
                deps[owner].add(target[0])
    return deps


def test_no_package_imports_one_that_imports_it_back():
    deps = package_imports()

    def reachable(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in deps.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = sorted(name for name in deps if name in reachable(name))
    assert not cycles, {name: sorted(deps[name]) for name in cycles}

