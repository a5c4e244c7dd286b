"""Per-file index of what counting needs besides the kernel body: macros, constants, typedefs,
struct layouts, functions (with CUDA qualifiers) and file-level variables.

Built with tree-sitter queries (C speed) rather than a Python walk of every node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import cast

import tree_sitter
from roofcast.analyzer.model import Param
from roofcast.analyzer.parsing import language, node_text
from roofcast.analyzer.session import SessionNodeCache
from roofcast.analyzer.skeleton import index_captures

_QUERY_TEXT = """
(function_definition) @function
(preproc_def) @macro
(preproc_call) @pragma
(type_definition) @typedef
(alias_declaration) @alias
(struct_specifier body: (field_declaration_list)) @struct
(class_specifier body: (field_declaration_list)) @struct
(preproc_include path: (string_literal) @include)
(declaration_list (declaration) @global)
"""
# File-level declarations (`(translation_unit (declaration) @global)`) are matched apart, once
# per file, by `skeleton.index_captures`: see `skeleton.FILE_LEVEL_PATTERN` for why.
#: CUDA launches `k<<<grid, block>>>(...)`, found in the same pass over the tree
_LAUNCH_PATTERN = "(call_expression (kernel_call_syntax)) @launch"

CUDA_QUALIFIERS = frozenset({"__global__", "__device__", "__host__"})


@cache
def index_query(grammar: str) -> tree_sitter.Query:
    """The index's patterns but file-level declarations, which `index_captures` adds."""
    text = _QUERY_TEXT + _LAUNCH_PATTERN if grammar == "cuda" else _QUERY_TEXT
    return tree_sitter.Query(language(grammar), text)


@dataclass
class FunctionInfo:
    """A function definition: name as written (maybe qualified), its CUDA qualifiers, template
    parameters and the parse node (kept for counting; never serialised)."""

    name: str
    file: Path
    line: int
    qualifiers: frozenset[str]
    template_params: list[str]
    node: tree_sitter.Node
    callees: list[str] | None = None
    #: how many parameters it declares (-1: no declarator found), once asked (`Context.callable`)
    arity: int | None = field(default=None, repr=False, compare=False)
    #: the file's display lines (shared with its index), for `display`
    lines: list[str] = field(default_factory=list, repr=False, compare=False)

    @property
    def display(self) -> str:
        """The function as written, comments removed: built on demand, most are never shown."""
        return _display(self.lines, self.node.start_point[0] + 1, self.node.end_point[0] + 1)

    @property
    def bare_name(self) -> str:
        return self.name.split("::")[-1]

    @property
    def is_kernel(self) -> bool:
        return "__global__" in self.qualifiers

    @property
    def is_device(self) -> bool:
        return "__device__" in self.qualifiers


@dataclass
class FileIndex:
    path: Path
    grammar: str
    tree: tree_sitter.Tree
    macros: dict[str, str] = field(default_factory=dict)
    typedefs: dict[str, str] = field(default_factory=dict)
    structs: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    functions: list[FunctionInfo] = field(default_factory=list)
    pragmas: list[tree_sitter.Node] = field(default_factory=list)
    #: CUDA launch expressions (`call_expression`s with a `<<<...>>>` configuration)
    launches: list[tree_sitter.Node] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    globals: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (type, declarator)
    constants: dict[str, str] = field(default_factory=dict)  # const/constexpr scalars: name -> init
    #: header basename -> (function_definition that #includes it, byte offset of the include)
    function_includes: dict[str, tuple[tree_sitter.Node, int]] = field(default_factory=dict)
    #: the file's own lines, comments blanked, macros unexpanded: what users and models read
    display_lines: list[str] = field(default_factory=list)

    @cached_property
    def source(self) -> bytes:
        """The parsed (expanded) text from the root's first token: byte searches over it map
        to nodes at offset `tree.root_node.start_byte`. Copied out of the tree once."""
        return self.tree.root_node.text or b""

    def display(self, first_line: int, last_line: int) -> str:
        """Lines first..last (1-based, inclusive) as written, comments removed."""
        return _display(self.display_lines, first_line, last_line)

    @property
    def error_count(self) -> int:
        return 1 if self.tree.root_node.has_error else 0


def _display(lines: list[str], first_line: int, last_line: int) -> str:
    if not lines:
        return ""
    return "\n".join(line.rstrip() for line in lines[first_line - 1 : last_line] if line.strip())


def function_name(func: tree_sitter.Node) -> str | None:
    """Name of a function_definition: the declarator's identifier (qualified if written so)."""
    decl = func.child_by_field_name("declarator")
    while decl is not None and decl.type not in ("function_declarator",):
        decl = decl.child_by_field_name("declarator")
    if decl is None:
        return None
    inner = decl.child_by_field_name("declarator")
    if inner is None:
        return None
    if inner.type == "template_function":
        inner = inner.child_by_field_name("name") or inner
    return node_text(inner)


def template_params(func: tree_sitter.Node) -> list[str]:
    parent = func.parent
    if parent is None or parent.type != "template_declaration":
        return []
    params = parent.child_by_field_name("parameters")
    names: list[str] = []
    for p in params.named_children if params else []:
        for c in p.named_children:
            if c.type in ("type_identifier", "identifier"):
                names.append(node_text(c))
                break
    return names


def _qualifiers(func: tree_sitter.Node) -> frozenset[str]:
    found = set()
    for child in func.children:
        if child.type in CUDA_QUALIFIERS:
            found.add(child.type)
        elif child.type == "function_declarator":
            break
        elif child.type in ("type_identifier", "identifier", "attribute_specifier"):
            text = node_text(child)
            if text in CUDA_QUALIFIERS:
                found.add(text)
    parent = func.parent
    # `template<...> __global__` sometimes leaves the qualifier outside, before the template.
    if parent is not None and parent.type == "template_declaration":
        for child in parent.children:
            if child.type in CUDA_QUALIFIERS:
                found.add(child.type)
    return frozenset(found)


_IDENT = re.compile(r"^[A-Za-z_]\w*$")


def build_index(
    path: Path,
    grammar: str,
    tree: tree_sitter.Tree,
    found: dict[str, list[tree_sitter.Node]] | None = None,
) -> FileIndex:
    """The file's index from its tree; `found`: `index_query`'s captures, if already known."""
    index = FileIndex(path=path, grammar=grammar, tree=tree)
    if found is None:
        found = index_captures(index_query(grammar), tree, grammar)
    for node in found.get("macro", []):
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None:
            index.macros[node_text(name)] = node_text(value).strip() if value else ""
    for node in found.get("typedef", []):
        type_node = node.child_by_field_name("type")
        for decl in node.children_by_field_name("declarator"):
            alias = node_text(decl).strip("* ")
            if type_node is not None and _IDENT.match(alias):
                index.typedefs[alias] = _type_name(type_node)
                if type_node.type in ("struct_specifier", "class_specifier"):
                    fields = _struct_fields(type_node)
                    if fields:
                        index.structs[alias] = fields
                _member_alias(node, alias, _type_name(type_node), index)
    for node in found.get("alias", []):
        name = node.child_by_field_name("name")
        type_node = node.child_by_field_name("type")
        if name is not None and type_node is not None:
            index.typedefs[node_text(name)] = node_text(type_node)
            _member_alias(node, node_text(name), node_text(type_node), index)
    for node in found.get("struct", []):
        name = node.child_by_field_name("name")
        if name is not None:
            index.structs[node_text(name)] = _struct_fields(node)
    for node in found.get("include", []):
        included = node_text(node).strip('"')
        index.includes.append(included)
        owner = node.parent
        while owner is not None and owner.type != "function_definition":
            owner = owner.parent
        if owner is not None:  # a header pasted into a function body: its code runs there
            index.function_includes[included.split("/")[-1]] = (owner, node.start_byte)
    for node in found.get("global", []):
        _index_global(node, index)
    index.launches = list(found.get("launch", []))
    index.pragmas = [
        n for n in found.get("pragma", []) if node_text(n).lstrip("# \t").startswith("pragma")
    ]
    for node in found.get("function", []):
        function = function_name(node)
        if not function:
            continue
        index.functions.append(
            FunctionInfo(
                name=function,
                file=path,
                line=node.start_point[0] + 1,
                qualifiers=_qualifiers(node),
                template_params=template_params(node),
                node=node,
            )
        )
    return index


def _member_alias(node: tree_sitter.Node, alias: str, target: str, index: FileIndex) -> None:
    """A typedef or `using` inside a class body is also recorded as `Class<args>::alias`
    (a specialisation, args without spaces) or `Class::alias` (the primary template, its
    parameters written `$0`, `$1`, ... for the type resolver to substitute), so that
    `typename vec4<T>::Type` resolves once T is known."""
    body = node.parent
    owner = body.parent if body is not None and body.type == "field_declaration_list" else None
    if owner is None or owner.type not in ("struct_specifier", "class_specifier"):
        return
    name = owner.child_by_field_name("name")
    if name is None:
        return
    owner_name = "".join(node_text(name).split())
    if "<" not in owner_name:
        for i, param in enumerate(template_params(owner)):
            target = re.sub(rf"\b{re.escape(param)}\b", f"${i}", target)
    index.typedefs[f"{owner_name}::{alias}"] = target


def _type_name(type_node: tree_sitter.Node) -> str:
    if type_node.type in ("struct_specifier", "class_specifier"):
        name = type_node.child_by_field_name("name")
        return node_text(name) if name is not None else "struct"
    return node_text(type_node)


def _struct_fields(node: tree_sitter.Node) -> list[tuple[str, str, str]]:
    """(type, name, array size text) per field."""
    body = node.child_by_field_name("body")
    fields: list[tuple[str, str, str]] = []
    for decl in body.named_children if body else []:
        if decl.type != "field_declaration":
            continue
        type_node = decl.child_by_field_name("type")
        for d in decl.children_by_field_name("declarator"):
            size = ""
            pointer = False
            while d.type in ("array_declarator", "pointer_declarator"):
                if d.type == "array_declarator":
                    s = d.child_by_field_name("size")
                    size = node_text(s) if s else size
                else:
                    pointer = True
                d = cast(tree_sitter.Node, d.child_by_field_name("declarator"))
            type_text = node_text(type_node) if type_node else "int"
            fields.append((type_text + ("*" if pointer else ""), node_text(d), size))
    return fields


def _index_global(node: tree_sitter.Node, index: FileIndex) -> None:
    type_node = node.child_by_field_name("type")
    if type_node is None:
        return
    text_before = node_text(node).split("=")[0]
    is_const = "const" in text_before.split() or "constexpr" in text_before
    for decl in node.children_by_field_name("declarator"):
        if decl.type == "function_declarator":
            continue
        value = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
        inner = decl.child_by_field_name("declarator") if decl.type == "init_declarator" else decl
        name_node = inner
        while name_node is not None and name_node.type not in ("identifier", "field_identifier"):
            name_node = name_node.child_by_field_name("declarator")
        if name_node is None:
            continue
        name = node_text(name_node)
        index.globals[name] = (node_text(type_node), node_text(node))
        if is_const and value is not None and inner is not None and inner.type == "identifier":
            index.constants[name] = node_text(value)


_PARAMETERS = SessionNodeCache()


def parameters(func: tree_sitter.Node) -> list[Param]:
    """Declared parameters, types normalised the way a demangler prints them."""
    return list(_PARAMETERS.get(func, lambda: tuple(_parameters(func))))


def _parameters(func: tree_sitter.Node) -> list[Param]:
    declarator = func.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    params_node = declarator.child_by_field_name("parameters") if declarator else None
    params: list[Param] = []
    for p in params_node.named_children if params_node else []:
        if not p.type.endswith("parameter_declaration"):
            continue
        type_node = p.child_by_field_name("type")
        base = node_text(type_node) if type_node else "int"
        prefix = [node_text(c) for c in p.children if c.type == "type_qualifier"]
        d = p.child_by_field_name("declarator")
        stars = ""
        name = ""
        while d is not None:
            if d.type == "pointer_declarator" or d.type in (
                "array_declarator",
                "abstract_array_declarator",
            ):
                stars += "*"
            elif d.type in ("reference_declarator",):
                stars += "&"
            elif d.type in ("identifier",):
                name = node_text(d)
                break
            nxt = d.child_by_field_name("declarator")
            if nxt is None:
                named = [c for c in d.named_children if c.type == "identifier"]
                name = node_text(named[0]) if named else name
                break
            d = nxt
        quals = [q for q in prefix if q in ("const", "volatile")]
        type_text = " ".join([*quals, base]) + (" " + stars if stars else "")
        params.append(Param(name=name, type=type_text, is_pointer="*" in stars))
    return params
