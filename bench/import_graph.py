"""The package graph of roofcast: which subpackage imports which, lazy imports included.

Reads the source with `ast` (nothing is imported), maps folders to packages as pyproject's
package-dir does, and prints one line per edge: `a -> b  [top, lazy, typing]`, where `lazy`
is an import inside a function and `typing` one under `if TYPE_CHECKING:`. Cycles (strongly
connected components of the graph without the typing-only edges) are listed at the end.

    python bench/import_graph.py [--typing]   # --typing: count TYPE_CHECKING edges in cycles
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def package_dirs() -> dict[str, Path]:
    """Package name -> folder, from pyproject's `[tool.setuptools] package-dir`."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {name: ROOT / folder for name, folder in mapping.items()}


def modules() -> dict[str, Path]:
    """Every module of the package (kernels/ holds the corpus and its Python loaders)."""
    found: dict[str, Path] = {}
    dirs = package_dirs()
    for name, folder in dirs.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            dotted = ".".join((name, *rel))
            # roofcast/ is the top folder: don't count a mapped subpackage's folder twice
            if name == "roofcast" and rel and f"roofcast.{rel[0]}" in dirs:
                continue
            found[dotted] = path
    return found


def unit(module: str) -> str:
    """The graph's node for a module: `roofcast.X` (its subpackage, or the top module)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(module: str, path: Path) -> list[tuple[str, str]]:
    """(imported module, kind) for each import in the file; kind is top, lazy or typing."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found: list[tuple[str, str]] = []
    # an explicit stack (function depth, typing) per node: no recursion over the tree
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, False)]
    while stack:
        node, in_function, typing = stack.pop()
        if isinstance(node, ast.Import):
            kind = "typing" if typing else "lazy" if in_function else "top"
            found.extend((alias.name, kind) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            kind = "typing" if typing else "lazy" if in_function else "top"
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                if not is_package:
                    anchor = anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            # `from roofcast import predictors` imports the subpackage
            found.extend((f"{base}.{alias.name}", kind) for alias in node.names)
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend((child, inner, True) for child in node.body)
            stack.extend((child, inner, typing) for child in node.orelse)
            continue
        stack.extend((child, inner, typing) for child in ast.iter_child_nodes(node))
    return found


def graph() -> dict[tuple[str, str], set[str]]:
    """(importer unit, imported unit) -> kinds of the imports making the edge."""
    known = modules()
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)
    for module, path in known.items():
        for target, kind in imports(module, path):
            if not target.startswith("roofcast"):
                continue
            # `from roofcast.x import name`: the module roofcast.x.name if it is one
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            a, b = unit(module), unit(target)
            if a != b and b != "roofcast":
                edges[a, b].add(kind)
    return edges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--typing", action="store_true", help="count TYPE_CHECKING edges")
    args = parser.parse_args()
    edges = graph()
    order = ("top", "lazy", "typing")
    for (a, b), kinds in sorted(edges.items()):
        print(f"{a} -> {b}  [{', '.join(k for k in order if k in kinds)}]")
    g = nx.DiGraph()
    g.add_edges_from(e for e, kinds in edges.items() if args.typing or kinds - {"typing"})
    cycles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    print("cycles:", "; ".join(" ".join(c) for c in cycles) if cycles else "none")


if __name__ == "__main__":
    main()
