"""Rule M10: where a kernel's compile command is known and libclang parses its unit, the
types of its declarations are clang's, not the text's guess (docs/counting.md M10).

The counters keep their own type model (`ctypes.CType`); this module turns clang's
canonical types into it and answers one question for the lowering: what type does the
declaration of `name` at this file and line have. A guess that clang agrees with (kind,
size, lanes, pointer levels) is kept as it is, so counts change only where clang knows
better; where clang has nothing (no database, no libclang, a parse failure, a dependent
type) the guess stands.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

import tree_sitter
from roofcast.analyzer.clangast import (
    ClangType,
    Declarations,
    Instance,
    UnitTypes,
    disabled_reason,
    iter_instances,
    unit_types,
)
from roofcast.analyzer.model import KernelIR
from roofcast.features.ctypes import CType, TypeResolver

if TYPE_CHECKING:
    from roofcast.features.lowering import KernelLowering

#: (kind, size) of a builtin -> the type text the resolver names it by
_BUILTIN_TEXT = {
    ("sp", 4): "float",
    ("dp", 8): "double",
    ("hp", 2): "half",
    ("int", 1): "char",
    ("int", 2): "short",
    ("int", 4): "int",
    ("int", 8): "long long",
    ("bool", 1): "bool",
    ("void", 1): "void",
}


class ClangTypes:
    """One kernel's view of its unit's clang types: the unit's declarations, and the
    kernel's own instance's where the kernel is a template (the instance whose template
    arguments are the ones the counters bind)."""

    def __init__(self, types: UnitTypes, resolver: TypeResolver) -> None:
        self.unit = types
        self.resolver = resolver
        self.instance: Instance | None = None
        self.bound: dict[str, str] = {}  # template parameters bound by the instance
        self.changed = 0  # declarations whose guessed type clang changed
        #: the kernel's parameters: name -> (line, column) of the name in `file`
        self.params: dict[str, tuple[int, int]] = {}
        self.file = ""
        self._paths: dict[str, str] = {}

    def bind_instance(self, ir: KernelIR, bound: dict[str, str]) -> dict[str, str]:
        """For a template kernel: the instance to read declarations from, the first the
        unit makes whose arguments agree with `bound` (the launch's and -D's bindings);
        returns that instance's arguments for the parameters `bound` lacks (rule D9's
        float default is a last resort)."""
        if not ir.template_params:
            return {}
        instances = list(iter_instances(self.unit, ir.file, ir.line, ir.end_line, ir.name))
        # a binding the text cannot read (`k<T>` in a template host function binds T to
        # `T`, a macro's name) is no binding: the instance's argument takes its place
        bound = {name: text for name, text in bound.items() if self._readable(text)}
        for instance in instances:
            if all(self._agrees(instance, name, text) for name, text in bound.items()):
                self.instance = instance
                break
        if self.instance is None:
            return {}
        self.bound = {
            name: value
            for name, value in self.instance.args.items()
            if name in ir.template_params and name not in bound and _plain(value)
        }
        return self.bound

    def summary(self) -> str:
        """What clang changed in this kernel, in one line; empty when nothing."""
        said = []
        if self.bound:
            said.append(", ".join(f"{k}={v}" for k, v in self.bound.items()) + " (instance)")
        if self.changed:
            plural = "s" if self.changed != 1 else ""
            said.append(f"{self.changed} declaration{plural} typed otherwise than the text says")
        return f"types from clang [M10]: {'; '.join(said)}" if said else ""

    def _readable(self, text: str) -> bool:
        stripped = text.strip()
        return stripped.lstrip("-").isdigit() or self.resolver.parse(stripped).kind != "unknown"

    def _agrees(self, instance: Instance, name: str, text: str) -> bool:
        if name not in instance.args:
            return True
        clang = instance.arg_types.get(name)
        if clang is None:  # an integer argument
            return instance.args[name].strip() == text.strip()
        return _same(self.ctype(clang), self.resolver.parse(text))

    def declared(self, file: str, line: int, name: str, column: int, guess: CType) -> CType:
        """The type of the declaration of `name` at `file`:`line` (`column` tells apart two
        on one line): clang's where it has one that differs from `guess`, else `guess`."""
        key = (self._path(file), line, name)
        found = None
        if self.instance is not None:
            found = _at(self.instance.declarations, key, column)
        if found is None:
            found = _at(self.unit.declarations, key, column)
        if found is None:
            return guess
        exact = self.ctype(found)
        if _same(exact, guess):
            return guess
        if exact.kind == "struct" and guess.kind == "struct" and guess.name:
            exact = replace(exact, name=guess.name)  # the text's name finds its fields
        self.changed += 1
        return exact

    def param(self, name: str, guess: CType) -> CType:
        """A kernel parameter's type (`declared` at the parameter's own position)."""
        where = self.params.get(name)
        if where is None:
            return guess
        return self.declared(self.file, where[0], name, where[1], guess)

    def ctype(self, clang: ClangType) -> CType:
        """clang's type in the counters' model: a record named like a CUDA vector or half
        type is that type; any other record a struct of its `sizeof`."""
        stars = "*" * clang.pointer
        if clang.kind == "struct":
            known = self.resolver.parse(clang.name) if clang.name else None
            if (
                known is not None
                and known.kind not in ("struct", "unknown")
                and known.element_bytes == clang.size
            ):
                return self.resolver.parse(clang.name + stars)
            return CType("struct", clang.size, 1, clang.pointer, clang.name)
        text = _BUILTIN_TEXT.get((clang.kind, clang.size))
        if text is None:
            return CType(clang.kind, clang.size, 1, clang.pointer)
        return self.resolver.parse(text + stars)

    def _path(self, file: str) -> str:
        path = self._paths.get(file)
        if path is None:
            path = self._paths[file] = os.path.realpath(file)
        return path


def clang_types(ir: KernelIR, resolver: TypeResolver) -> tuple[ClangTypes | None, str]:
    """The kernel's clang view and a note (empty when there is nothing to say): None
    without a compile command (source mode), libclang, or a parse of the unit."""
    unit = getattr(ir, "unit", None)
    if unit is None:
        return None, ""
    reason = disabled_reason()
    if reason is not None:
        return None, ""  # not installed or turned off: source counting, as before
    types = unit_types(unit)
    if not types.parsed:
        return None, f"types guessed from the text [M10]: {types.note}"
    return ClangTypes(types, resolver), ""


def declarator_column(node: tree_sitter.Node) -> int:
    """The 1-based column of the name a declarator declares (clang's column)."""
    return _declared_node(node).start_point[1] + 1


def _declared_node(node: tree_sitter.Node) -> tree_sitter.Node:
    """The identifier a declarator declares, or the innermost node reached without one."""
    for _ in range(64):
        if node.type in ("identifier", "field_identifier"):
            break
        inner = node.child_by_field_name("declarator")
        if inner is None:
            names = [c for c in node.named_children if c.type == "identifier"]
            if not names:
                break
            inner = names[0]
        node = inner
    return node


def _at(declarations: Declarations, key: tuple[str, int, str], column: int) -> ClangType | None:
    found = declarations.get(key)
    if not found:
        return None
    if len(found) == 1:
        return found[0][1]
    for at, clang in found:
        if at == column:
            return clang
    return None  # several of that name on the line, none at the column: no choice


def _same(a: CType, b: CType) -> bool:
    return (a.kind, a.size, a.lanes, a.pointer) == (b.kind, b.size, b.lanes, b.pointer)


def _plain(value: str) -> bool:
    """A binding the resolver reads: an integer or a type spelled without templates or
    namespaces (`double`, `float4`, `unsigned int`); others are left to rule D9."""
    text = value.replace(" ", "")
    return text.lstrip("-").isdigit() or text.replace("_", "").isalnum()


def attach(counter: KernelLowering, ir: KernelIR) -> None:
    """Give the lowering its kernel's clang types (`counter.clang`), before the walk: a
    template kernel's parameters that nothing else binds are bound to the instance the
    unit makes, and the parameters' declared types are looked up. A unit clang could not
    parse leaves a note and the guesses."""
    clang, note = clang_types(ir, counter.types)
    if note:
        counter.fv.notes.append(note)
    if clang is None:
        return
    bound = {t: counter.defines[t] for t in ir.template_params if t in counter.defines}
    extra = clang.bind_instance(ir, bound)
    if extra:
        counter.defines.update(extra)
        counter.types.template_types.update(extra)
        counter.types.clear_cache()
    if ir.language == "cuda" and ir.ast is not None:
        clang.params = _parameter_positions(ir.ast)
    clang.file = ir.file
    counter.clang = clang


def _parameter_positions(function: tree_sitter.Node) -> dict[str, tuple[int, int]]:
    """A function definition's parameters: name -> (line, column) of the name, 1-based."""
    out: dict[str, tuple[int, int]] = {}
    node: tree_sitter.Node | None = function.child_by_field_name("declarator")
    for _ in range(16):  # through pointer/reference declarators of the return type
        if node is None or node.type == "function_declarator":
            break
        node = node.child_by_field_name("declarator")
    params = node.child_by_field_name("parameters") if node is not None else None
    if params is None:
        return out
    for param in params.named_children:
        declarator = param.child_by_field_name("declarator")
        if declarator is None:
            continue
        name, column = _declared_name(declarator)
        if name:
            out[name] = (declarator.start_point[0] + 1, column)
    return out


def _declared_name(node: tree_sitter.Node) -> tuple[str, int]:
    found = _declared_node(node)
    column = found.start_point[1] + 1
    if found.type in ("identifier", "field_identifier") and found.text:
        return found.text.decode("utf-8", "replace"), column
    return "", column
