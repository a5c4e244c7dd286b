"""What a kernel can see: its own file's index plus the headers it includes, own file first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from roofcast.analyzer.index import FileIndex, FunctionInfo


@dataclass
class Context:
    macros: dict[str, str] = field(default_factory=dict)
    typedefs: dict[str, str] = field(default_factory=dict)
    structs: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    globals: dict[str, tuple[str, str]] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    functions: dict[str, list[FunctionInfo]] = field(default_factory=dict)
    grammar: str = "cuda"
    #: visible headers by file name, for headers pasted into a function or loop body
    headers: dict[str, FileIndex] = field(default_factory=dict)

    @classmethod
    def merge(cls, indices: Sequence[FileIndex]) -> Context:
        """Earlier indices win: the kernel's own file shadows its headers."""
        ctx = cls(grammar=indices[0].grammar if indices else "cuda")
        for index in reversed(indices):
            ctx.macros.update(index.macros)
            ctx.typedefs.update(index.typedefs)
            ctx.structs.update(index.structs)
            ctx.globals.update(index.globals)
            ctx.constants.update(index.constants)
        for index in indices[1:]:
            ctx.headers.setdefault(index.path.name, index)
        for index in indices:
            for fn in index.functions:
                ctx.functions.setdefault(fn.bare_name, []).append(fn)
        return ctx

    def callable(self, name: str, arity: int) -> FunctionInfo | None:
        """The definition `name(args...)` reaches: device functions first, matching arity."""
        candidates = self.functions.get(name.split("::")[-1] if "::" in name else name)
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]  # what `min` picks of one, whatever its score

        def score(fn: FunctionInfo) -> tuple[int, int]:
            if fn.arity is None:  # a definition's tree never changes: walked once
                fn.arity = _arity(fn.node.child_by_field_name("declarator"))
            return (0 if fn.arity == arity else 1, 0 if fn.is_device else 1)

        return min(candidates, key=score)


def _arity(declarator) -> int:
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return -1
    params = declarator.child_by_field_name("parameters")
    return (
        sum(1 for p in params.named_children if p.type.endswith("parameter_declaration"))
        if params
        else 0
    )
