"""Structs in host code: which fields a struct has, in what order, with what defaults, and
which struct a host function's local, parameter or range-for variable is.

Host values (analyzer/hostvalues.py) read `p.size` through these: an aggregate initializer
(`Params p = {128, 3};`) gives fields by position, a default member initializer (`int n =
64;`) gives a field that nothing else sets. Only the shape of the code is read, never run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import tree_sitter
from roofcast.analyzer.bodyquery import BodyQueryPart
from roofcast.analyzer.parsing import captures, language, node_text
from roofcast.analyzer.session import SessionNodeCache


@dataclass(frozen=True)
class Field:
    """One data member: its name, its default member initializer (None without one) and
    whether it is static (no place in an aggregate initializer)."""

    name: str
    default: tree_sitter.Node | None
    static: bool


@cache
def _structs_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(
        language(grammar),
        """
(struct_specifier body: (field_declaration_list) @body)
(class_specifier body: (field_declaration_list) @body)
""",
    )


_LOCALS_PART = BodyQueryPart("locals", "(declaration) @declaration (for_range_loop) @loop")


_STRUCTS = SessionNodeCache(64)
_LOCALS = SessionNodeCache(256)


def struct_fields(root: tree_sitter.Node, grammar: str) -> dict[str, list[Field]]:
    """struct/class name -> its data members in declaration order, for the file `root`
    (namespaces and nesting included: a query, not a walk); the first definition of a name."""

    def collect() -> dict[str, list[Field]]:
        out: dict[str, list[Field]] = {}
        text = root.text or b""
        if b"struct" not in text and b"class" not in text:
            return out  # no specifier's keyword: no struct to find (no whole-file query)
        for body in captures(_structs_query(grammar), root).get("body", []):
            fields = []
            for member in body.named_children:
                if member.type != "field_declaration":
                    continue
                static = any(
                    c.type == "storage_class_specifier" and node_text(c) == "static"
                    for c in member.children
                )
                default = member.child_by_field_name("default_value")
                for declarator in member.children_by_field_name("declarator"):
                    inner: tree_sitter.Node | None = declarator
                    for _ in range(8):  # `*p`, `a[4]`: the member's own name inside
                        if inner is None or inner.type == "field_identifier":
                            break
                        inner = inner.child_by_field_name("declarator")
                    if inner is not None:
                        plain = inner is declarator  # an array or pointer has no value here
                        fields.append(Field(node_text(inner), default if plain else None, static))
            for name in _struct_names(body):
                out.setdefault(name, fields)
        return out

    return _STRUCTS.get(root, collect, grammar)


def _struct_names(body: tree_sitter.Node) -> list[str]:
    """`struct P {..}` -> P; `typedef struct X {..} Y;` -> X and Y."""
    specifier = body.parent
    if specifier is None:
        return []
    named = specifier.child_by_field_name("name")
    names = [node_text(named)] if named is not None else []
    typedef = specifier.parent
    if typedef is not None and typedef.type == "type_definition":
        names += [
            node_text(d)
            for d in typedef.children_by_field_name("declarator")
            if d.type == "type_identifier"
        ]
    return names


#: words of a declared type that do not name the struct
_QUALIFIERS = {"const", "volatile", "struct", "class", "static", "constexpr", "typename"}


def type_name(text: str) -> str:
    """`const std::vector<Dataset> &` -> `Dataset` (a container's element), `struct P *` ->
    `P`: the last plain word of the type, or of its first template argument."""
    if "<" in text:
        text = text.split("<", 1)[1].split(",", 1)[0].split(">", 1)[0]
    words = [w for w in re.findall(r"[A-Za-z_][\w:]*", text) if w not in _QUALIFIERS]
    return words[-1].split("::")[-1] if words else ""


@dataclass(frozen=True)
class Local:
    """A name declared in a function body: its type's text, and for a range-for variable
    the range it walks (its first element is the variable's value, as D8 values a counter
    at its start)."""

    type: str
    start: int
    range: tree_sitter.Node | None = None
    #: rule D25: the arguments of the constructor call that declares it (`Params p(argc,
    #: argv);`: the words in the parentheses, a list's elements are D23's), `()` for a plain
    #: `Params p;`, None when it is initialised otherwise (`= ...`, `{...}`)
    arguments: tuple[tree_sitter.Node, ...] | None = None


def local_types(body: tree_sitter.Node, grammar: str) -> dict[str, list[Local]]:
    """name -> its declarations in a function body, in source order."""

    def collect() -> dict[str, list[Local]]:
        found = _LOCALS_PART.captures(body, grammar)
        out: dict[str, list[Local]] = {}
        for declaration in found.get("declaration", []):
            type_node = declaration.child_by_field_name("type")
            for declarator in declaration.children_by_field_name("declarator"):
                inner: tree_sitter.Node | None = declarator
                # `p = {..}`, `p(argc, argv)` (a constructor call parses as a function's
                # declarator), `&p`, `*p`, `p[3]`: the declared name is the innermost one
                for _ in range(8):
                    if inner is None or inner.type == "identifier":
                        break
                    inner = inner.child_by_field_name("declarator")
                if inner is not None and type_node is not None:
                    arguments = _constructor_arguments(declarator)
                    local = Local(node_text(type_node), declarator.start_byte, None, arguments)
                    out.setdefault(node_text(inner), []).append(local)
        for loop in found.get("loop", []):
            name = loop.child_by_field_name("declarator")
            walked = loop.child_by_field_name("right")
            if name is None or walked is None or name.type != "identifier":
                continue
            declared = loop.child_by_field_name("type")
            text = node_text(declared) if declared is not None else "auto"
            out.setdefault(node_text(name), []).append(Local(text, loop.start_byte, walked))
        for listed in out.values():
            listed.sort(key=lambda local: local.start)
        return out

    return _LOCALS.get(body, collect, grammar)


def _constructor_arguments(declarator: tree_sitter.Node) -> tuple[tree_sitter.Node, ...] | None:
    """Rule D25: the constructor arguments of a local's declarator. `P p(argc, argv);` parses
    as a function's declarator whose parameters are the argument names (each then a
    parameter declaration that is one type word), `P p(n, 4);` as an init declarator with
    an argument list; a bare `P p;` calls the default constructor (no arguments)."""
    if declarator.type == "identifier":
        return ()
    if declarator.type == "init_declarator":
        value = declarator.child_by_field_name("value")
        if value is not None and value.type == "argument_list":
            return tuple(c for c in value.named_children if c.type != "comment")
        return None
    if declarator.type == "function_declarator":
        params = declarator.child_by_field_name("parameters")
        words = [c for c in params.named_children if c.type != "comment"] if params else []
        found = []
        for word in words:
            type_node = word.child_by_field_name("type")
            plain = word.type == "parameter_declaration" and len(word.named_children) == 1
            if not plain or type_node is None or type_node.type != "type_identifier":
                return None  # a real function declaration (`int f(int n);`)
            found.append(type_node)
        return tuple(found)
    return None


@cache
def _constructors_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(
        language(grammar),
        """
(field_declaration_list (function_definition) @inside)
(translation_unit (function_definition
  declarator: (function_declarator declarator: (qualified_identifier) @qualified)) @outside)
""",
    )


_CONSTRUCTORS = SessionNodeCache(64)


def constructors(root: tree_sitter.Node, grammar: str) -> dict[str, list[tree_sitter.Node]]:
    """Rule D25: struct/class name -> its constructors' definitions in the file `root`: those
    in the class body (`P(int n) : n_(n) {..}`) and those outside it (`P::P(int n) {..}`)."""

    def collect() -> dict[str, list[tree_sitter.Node]]:
        found = captures(_constructors_query(grammar), root)
        out: dict[str, list[tree_sitter.Node]] = {}
        for definition in found.get("inside", []):
            body = definition.parent
            declarator = definition.child_by_field_name("declarator")
            named = declarator.child_by_field_name("declarator") if declarator else None
            if (
                body is None
                or declarator is None
                or named is None
                or declarator.type != "function_declarator"
            ):
                continue
            for name in _struct_names(body):
                if node_text(named) == name:
                    out.setdefault(name, []).append(definition)
        for definition, qualified in zip(
            found.get("outside", []), found.get("qualified", []), strict=True
        ):
            parts = node_text(qualified).replace(" ", "").split("::")
            if len(parts) >= 2 and parts[-1] == parts[-2]:
                out.setdefault(parts[-1], []).append(definition)
        return out

    return _CONSTRUCTORS.get(root, collect, grammar)
