"""Problem sizes from host code: what a kernel argument is at its launch or call site.

`saxpy<<<g, b>>>(n, ...)` with `int n = atoi(argv[1]) * 2;` binds the kernel's parameter to
`2*argv_1`; the program's command line (a manifest's exe_args, or none) then gives numbers.
Only simple straight-line definitions are followed: a declaration or assignment before the
call, constants, casts, arithmetic, sizeof and the C conversions of argv.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, partial
from typing import TYPE_CHECKING, cast

import sympy
import tree_sitter
from roofcast.analyzer.argvindex import argv_choice
from roofcast.analyzer.bodyquery import BodyQueryPart
from roofcast.analyzer.cvaluetree import (
    apply_value,
    call_parts,
    piecewise,
    single_return,
    value_operands,
)
from roofcast.analyzer.hostmembers import (
    Field,
    constructors,
    local_types,
    struct_fields,
    type_name,
)
from roofcast.analyzer.hostoptions import OPTION_GIVEN, OPTION_VALUE, option_read, option_value
from roofcast.analyzer.hosttypes import aliased_words
from roofcast.analyzer.hostwords import (
    argv_length_symbol,
    argv_lengths,
    argv_word,
    floating_quotient,
    rounded,
    rounding,
)
from roofcast.analyzer.index import function_name, parameters, template_params
from roofcast.analyzer.parsing import (
    captures,
    enclosing_function,
    expression_node,
    language,
    node_text,
    operator,
)
from roofcast.analyzer.session import SessionNodeCache

if TYPE_CHECKING:
    from roofcast.analyzer.callsites import CallSites

MAX_DEPTH = 6
MAX_SNIPPET_DEPTH = 32  # operators nested in a map clause's section length, at most
_ARGV_CALLS = {
    "atoi",
    "atol",
    "atoll",
    "atof",
    "stoi",
    "stol",
    "stoll",
    "stoul",
    "stoull",
    "strtol",
    "strtoul",
    "strtoll",
    "strtoull",
    "strtod",
    "stof",
    "stod",
}
_SIZES = {
    "char": 1,
    "short": 2,
    "int": 4,
    "unsigned": 4,
    "float": 4,
    "long": 8,
    "double": 8,
    "size_t": 8,
    "int64_t": 8,
    "uint64_t": 8,
    "int32_t": 4,
    "uint32_t": 4,
    "half": 2,
    "__half": 2,
    "float2": 8,
    "float4": 16,
    "double2": 16,
    "int2": 8,
    "int4": 16,
}


def argv_symbol(k: int) -> sympy.Symbol:
    return sympy.Symbol(f"argv_{k}", positive=True)


#: The four kinds of definition `_definitions` collects, in the body query (one walk of a
#: body); each kind has capture names of its own, so its captures are what its patterns
#: alone would give.
_DEFINITIONS_PART = BodyQueryPart(
    "definitions",
    """
(init_declarator declarator: (identifier) @name value: (_) @value)
(init_declarator declarator: (pointer_declarator declarator: (identifier) @name)
  value: (call_expression) @value)
(init_declarator declarator: (pointer_declarator declarator: (identifier) @name)
  value: (cast_expression value: (call_expression)) @value)
(init_declarator declarator: (array_declarator declarator: (identifier) @name)
  value: (initializer_list) @value)
(init_declarator
  declarator: [(pointer_declarator declarator: (identifier) @name)
    (array_declarator declarator: (identifier) @name)]
  value: [(string_literal) (concatenated_string)] @value)
(assignment_expression left: (identifier) @name operator: "=" right: (_) @value)

(assignment_expression
  left: (field_expression argument: [(identifier) (this)] @object field: (field_identifier) @field)
  operator: "=" right: (_) @member_value)
(assignment_expression
  left: (field_expression argument: [(identifier) (this)] @object field: (field_identifier) @field)
  operator: ["+=" "-=" "*=" "/=" "<<=" ">>=" "|=" "&=" "^=" "%="]) @member_value
(update_expression
  argument: (field_expression argument: [(identifier) (this)] @object
    field: (field_identifier) @field))
  @member_value

(assignment_expression left: (identifier)
  operator: ["+=" "-=" "*=" "/=" "<<=" ">>="]) @assignment

(call_expression function: (identifier) @function
  arguments: (argument_list . (_) . (string_literal) . (pointer_expression
    argument: (identifier) @scanned) @target .))
""",
)


@cache
def _returns_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(language(grammar), "(return_statement (_) @value)")


_RETURNS = SessionNodeCache(256)


def _returns(func: tree_sitter.Node) -> list[tree_sitter.Node]:
    """Rule D27: the values a function returns (`return input;`), in source order; those of
    a lambda or a local class inside it included (then they differ, and nothing is read)."""
    body = func.child_by_field_name("body")
    if body is None:
        return []
    return _RETURNS.get(body, lambda: list(captures(_returns_query("cuda"), body).get("value", [])))


#: Rule D26: calls that pass a local by address or by name (`init(&cfg)`, `setup(cfg)`).
_GIVEN_PART = BodyQueryPart(
    "given",
    """
(call_expression function: (identifier) @function
  arguments: (argument_list [(pointer_expression argument: (identifier) @object)
                             (identifier) @object]))
""",
)


#: rule D22: the one conversion a scan of a command-line word may have (an integer's)
_SCAN_FORMAT = re.compile(r'"\s*%(?:hh|h|l|ll|j|z|t)?[diu]\s*"')


def _scan_call(target: tree_sitter.Node) -> tree_sitter.Node | None:
    """The `sscanf(...)` call whose third argument is `target` (`&n`), else None."""
    args = target.parent if target.type == "pointer_expression" else None
    call = args.parent if args is not None else None
    if call is None or call.type != "call_expression":
        return None
    function = call.child_by_field_name("function")
    return call if function is not None and node_text(function) == "sscanf" else None


def _scanned(call: tree_sitter.Node) -> sympy.Expr | None:
    """Rule D22: `sscanf(argv[2], "%d", &n)` makes `n` the program's second argument, as
    `atoi(argv[2])` does; a format other than one integer conversion, or a source other
    than `argv[k]`, gives no value. The format is matched as text, never interpreted."""
    args = call.child_by_field_name("arguments")
    named = [c for c in args.named_children if c.type != "comment"] if args else []
    if len(named) != 3 or not _SCAN_FORMAT.fullmatch(node_text(named[1])):
        return None
    match = re.fullmatch(r"argv\s*\[\s*(\d+)\s*\]", node_text(named[0]))
    return argv_symbol(int(match.group(1))) if match else None


#: rule D20: a compound assignment's operator -> how its new value combines old and right
_COMPOUND = {
    "+=": ("add", (True, True)),
    "-=": ("add", (True, False)),
    "*=": ("mul",),
    "/=": ("binary", "/"),
    "<<=": ("binary", "<<"),
    ">>=": ("binary", ">>"),
}

_DEFINITIONS = SessionNodeCache(256)
_GIVEN = SessionNodeCache(256)


def _given_objects(
    body: tree_sitter.Node, grammar: str
) -> dict[str, list[tuple[int, tree_sitter.Node, int]]]:
    """Rule D26: name -> [(byte offset, call, argument position)] of the calls in a function
    body given the name by address or by name (`init(&cfg)`, `setup(cfg)`). Read-only."""

    def collect() -> dict[str, list[tuple[int, tree_sitter.Node, int]]]:
        found = _GIVEN_PART.captures(body, grammar)
        out: dict[str, list[tuple[int, tree_sitter.Node, int]]] = {}
        seen: set[tuple[int, int]] = set()
        positions: dict[int, dict[int, int]] = {}  # argument list -> argument id -> position
        for obj in found.get("object", []):
            argument = (
                obj.parent
                if obj.parent is not None and obj.parent.type == "pointer_expression"
                else obj
            )
            if argument.type == "pointer_expression" and operator(argument) != "&":
                continue
            args = argument.parent
            call = args.parent if args is not None else None
            if args is None or call is None or call.type != "call_expression":
                continue
            at = positions.get(args.id)
            if at is None:  # once per call: a call given many names lists its arguments once
                named = [c for c in args.named_children if c.type != "comment"]
                at = positions[args.id] = {}
                for k, c in enumerate(named):
                    at.setdefault(c.id, k)
            position = at.get(argument.id)
            if position is None or (call.id, position) in seen:
                continue
            seen.add((call.id, position))
            out.setdefault(node_text(obj), []).append((call.start_byte, call, position))
        for listed in out.values():
            listed.sort(key=lambda item: item[0])
        return out

    return _GIVEN.get(body, collect, grammar)


def _definitions(
    body: tree_sitter.Node, grammar: str
) -> dict[str, list[tuple[int, tree_sitter.Node]]]:
    """name -> [(byte offset, value)] of a function body's assignments, shared by every scope
    built on the same function (one host `main` launches many kernels). Read-only."""

    def collect() -> dict[str, list[tuple[int, tree_sitter.Node]]]:
        # Every match is one name and its value, the name first; a match inside another lies
        # in its value. So in document order the k-th name's value is the k-th value.
        found = _DEFINITIONS_PART.captures(body, grammar)
        defs: dict[str, list[tuple[int, tree_sitter.Node]]] = {}
        for name, value in zip(found.get("name", []), found.get("value", []), strict=True):
            defs.setdefault(node_text(name), []).append((value.start_byte, value))
        # rule D16: `grid.x = n / 256;`, `p.size = 4096;` under the name `grid.x`, `p.size`;
        # `p.n += 8` as D20 has it, `p.n++` (a count kept in a loop) makes it unknown;
        # `this->n = 5` (rule D25: a constructor's body) is keyed as `this.n`
        triples = zip(
            found.get("object", []),
            found.get("field", []),
            found.get("member_value", []),
            strict=True,
        )
        for obj, member, value in triples:
            key = f"{node_text(obj)}.{node_text(member)}"
            defs.setdefault(key, []).append((value.start_byte, value))
        # rule D20: `n *= 1024;` (but a for's update, `i += 2`: D8 values a counter's start)
        for assignment in found.get("assignment", []):
            # a for's step (`n -= 2, m <<= 2`) too: `_stepped` values it (rule D24)
            assigned = assignment.child_by_field_name("left")
            if assigned is not None:
                defs.setdefault(node_text(assigned), []).append((assignment.start_byte, assignment))
        # rule D22: `sscanf(argv[2], "%d", &n)` defines `n`, its `&n` standing for the scan
        scanned = zip(
            found.get("function", []),
            found.get("scanned", []),
            found.get("target", []),
            strict=True,
        )
        for function, scanned_name, target in scanned:
            if node_text(function) == "sscanf":
                defs.setdefault(node_text(scanned_name), []).append((target.start_byte, target))
        for listed in defs.values():
            listed.sort(key=lambda item: item[0])
        return defs

    return _DEFINITIONS.get(body, collect, grammar)


#: (node, before, depth) -> value, shared by the scopes of one function built alike (the
#: same grammar, placeholders, library and caller's values): one host `main` launching many
#: kernels values the same definitions for each launch, and each of a launch's scopes
_VALUES = SessionNodeCache(256)


class HostScope:
    """Definitions of one host function, searched backwards from a call.

    A scope's values depend only on what it was built with (its function, grammar, the
    caller's values `outer`, placeholders, library), so scopes built alike share them;
    `shared=False` for a scope whose `outer` is added to after it is built."""

    def __init__(
        self,
        func: tree_sitter.Node,
        grammar: str,
        outer: dict[str, sympy.Expr] | None = None,
        placeholders: bool = False,
        library: CallSites | None = None,
        shared: bool = True,
    ) -> None:
        self.func = func
        self.grammar = grammar
        self.outer = outer or {}  # the function's own parameters, as its caller passed them
        #: rule D14: a name without a value is its placeholder (`unknown_symbol`), not None
        self.placeholders = placeholders
        #: rule D18: the folder's files, headers included, for file-level names and helpers
        #: that the function's own file does not define
        self.library = library
        self.defs: dict[str, list[tuple[int, tree_sitter.Node]]] = {}
        #: rule D43: (a for loop's node id, its steps' values on a later trip) that a use
        #: inside that loop sees instead of its first trip's (D8); set on unshared scopes
        self.trip_values: tuple[int, dict[str, sympy.Expr]] | None = None
        #: (node id, start, end, before, depth) -> (node, its value): the node is kept, so
        #: its id is not another's while the entry lives
        self.values: dict[tuple, tuple[tree_sitter.Node, sympy.Expr | None]] | None = None
        if shared:
            signature = (grammar, placeholders, library, tuple(self.outer.items()))
            self.values = _VALUES.get(func, dict, signature)
        body = func.child_by_field_name("body")
        if body is None:
            return
        self.defs = _definitions(body, grammar)

    def value(
        self, node: tree_sitter.Node | None, before: int, depth: int = 0
    ) -> sympy.Expr | None:
        """The value of `node` from the definitions before byte `before` (see `_value`),
        computed once per scopes built alike."""
        values = self.values
        if values is None or node is None:
            return self._value(node, before, depth)
        key = (node.id, node.start_byte, node.end_byte, before, depth)
        found = values.get(key)
        if found is not None:
            return found[1]
        value = self._value(node, before, depth)
        values[key] = (node, value)
        return value

    def _value(
        self, node: tree_sitter.Node | None, before: int, depth: int = 0
    ) -> sympy.Expr | None:
        """The value of `node` from the definitions before byte `before`. Recursive, but
        each call deeper spends one of MAX_DEPTH levels; parentheses and casts, which
        spend none, are unwrapped in a loop (so nesting in host code costs no stack)."""
        while node is not None and node.type in ("parenthesized_expression", "cast_expression"):
            node = (
                node.child_by_field_name("value")
                if node.type == "cast_expression"
                else (node.named_children[0] if node.named_children else None)
            )
        if node is None or depth > MAX_DEPTH:
            return None
        t = node.type
        if t == "number_literal":
            text = node_text(node).rstrip("uUlLfF")
            try:
                number = (
                    float(int(text, 0))
                    if re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", text)
                    else float(text)
                )
            except ValueError:
                return None
            return sympy.Integer(int(number)) if number.is_integer() else sympy.Float(number)
        if t == "identifier":
            return self.name_value(node_text(node), before, depth)
        if t == "conditional_expression":
            return self._conditional(node, before, depth)
        if t == "subscript_expression":
            return self._element(node, before, depth)
        if t == "field_expression":
            return self._member(node, before, depth)
        if t == "assignment_expression" and operator(node) in _COMPOUND:
            return self._compound(node, depth)
        if t == "assignment_expression" and operator(node) == "=":
            # `a = b = 3`: `a`'s value is the inner assignment's, its right side (rule D25)
            return self.value(node.child_by_field_name("right"), before, depth + 1)
        if t == "sizeof_expression":
            inner = node.child_by_field_name("type") or node.child_by_field_name("value")
            words = node_text(inner).replace("*", " * ").split() if inner is not None else []
            if len(words) == 1:  # rule D45: `sizeof(T)` of a file-level alias of T
                words = aliased_words(self.func, [words[0].strip("() ")])
            if "*" in words:
                return sympy.Integer(8)
            if "long" in words:  # `long int`, `long long int`, `unsigned long`
                return sympy.Integer(16 if "double" in words else 8)
            for word in reversed(words):
                if word in _SIZES:
                    return sympy.Integer(_SIZES[word])
            return None
        if t == "call_expression":
            fn = node_text(cast(tree_sitter.Node, node.child_by_field_name("function")))
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if fn.split("::")[-1] in _ARGV_CALLS and first is not None:
                match = re.fullmatch(r"argv\s*\[\s*(\d+)\s*\]", node_text(first))
                return argv_symbol(int(match.group(1))) if match else None
            if fn.split("::")[-1] == "strlen" and first is not None:
                return self._length(first, before)  # rules D35, D37
            if rounding(fn) and args is not None and len(args.named_children) == 1:
                inner = self._rounded_operand(args.named_children[0], before, depth)  # D36
                return rounded(fn, inner) if inner is not None else None
            if first is None and fn.rsplit(".", 1)[-1].strip() in ("length", "size"):
                length = self._word_length(node, before)  # rule D37: `word.length()`
                if length is not None:
                    return length
            option = self._option(node)  # rule D38: `result["dim"].as<int>()`
            if option is not None:
                return option
            if value_operands(node)[0] is None:
                return self._call(node, before, depth)
        how, operands = value_operands(node)  # the counter's operator semantics (one evaluator)
        if how is None:
            return None
        values = [self.value(operand, before, depth + 1) for operand in operands]
        if any(v is None for v in values):
            return None
        return apply_value(how, cast(list[sympy.Expr], values))

    def name_value(self, name: str, before: int, depth: int = 0) -> sympy.Expr | None:
        """The value of the name `name` at byte `before`: its last definition, the caller's
        binding of a parameter, or a file-level initializer (rule D7)."""
        earlier = [v for start, v in self.defs.get(name, []) if start < before]
        loop = _step_loop(earlier[-1]) if earlier else None
        if name != "argc" and self._overwritten(name, earlier, before):
            value = None
        elif loop is not None:
            value = self._stepped(name, loop, before, depth)
        elif earlier and _accumulated(earlier[-1], before, self.func):
            value = None
        elif earlier:
            value = self._latest(earlier, depth)
        elif name == "argc":
            return ARGC
        elif name in self.outer:
            return self.outer[name]
        else:
            initializer = self._file_level(file_initializers, name)
            # a file-level `int N = 4096;` (rule D7): its initializer, with no local in view
            value = self.value(initializer, 0, depth + 1) if initializer is not None else None
        if value is None and self.placeholders:
            return unknown_symbol(name)
        return value

    def _overwritten(self, name: str, earlier: list[tree_sitter.Node], before: int) -> bool:
        """Rule D31: whether, after the last of the definitions `earlier` and before byte
        `before`, a call is given `&name` at a place it may write (`fscanf(f, "%d", &n)`,
        `read(fd, &n, 4)`: a library call) or `name++`
        (`name--`) runs in a loop, other than as the step of a `for` the use is in (D8).
        Host code does not show the value either leaves, so the name is unknown there."""
        body = self.func.child_by_field_name("body")
        if body is None:
            return False
        after = earlier[-1].start_byte if earlier else -1
        for start, step in _bumped(body, self.grammar).get(name, []):
            if (
                after < start < before
                and _in_loop(step, self.func)
                and not _counts_loop(step, before)
            ):
                return True
        for start, call, position in _given_objects(body, self.grammar).get(name, []):
            if after < start < before and self._writes(call, position):
                return True
        return False

    def _writes(self, call: tree_sitter.Node, position: int) -> bool:
        """Rule D31: whether `call` may write through its argument at `position`, given
        `&name` there: any call may, but a copy's source (`memcpy(d, &n, 4)`,
        `cudaMemcpyToSymbol(c, &n, 4)`) only reads it; else a library's read, scan or query
        (`fscanf`, `read`, `MPI_Comm_size`, `cudaGetDeviceCount`) writes it. Any other call
        (a function of the folder, not followed) leaves the value as it was."""
        name, args = call_parts(call)
        if position >= len(args) or args[position].type != "pointer_expression":
            return False  # given by name: a scalar is copied
        last = name.split("::")[-1]
        if "memcpy" in last.lower() or "MemcpyToSymbol" in last:
            return position == 0 and "ToSymbol" not in last
        # any other call only when it is a library's that stores there: a function of the
        # folder (its file may be out of view) is not followed, and the value stands
        return bool(_STORES_THROUGH.fullmatch(last))

    def _file_level(
        self,
        table: Callable[[tree_sitter.Node], dict[str, tree_sitter.Node]],
        name: str,
    ) -> tree_sitter.Node | None:
        """`name` in the function's own file's `table` (initializers or functions), else
        (rule D18) in the first of the folder's files, headers included, that has it."""
        found = table(self.func).get(name)
        if found is not None or self.library is None:
            return found
        for index in self.library.indices:
            found = table(index.tree.root_node).get(name)
            if found is not None:
                return found
        return None

    def _stepped(
        self, name: str, loop: tree_sitter.Node, before: int, depth: int
    ) -> sympy.Expr | None:
        """Rule D24: `name`, a step of the for loop `loop` (`for (; n > 4; n -= 2, m <<= 2)`):
        inside the loop its value at the loop's start (D8); after it, that value stepped as
        many times as the loop runs, when the loop's comparison is of a stepped name and a
        whole number and every value is one; else unknown."""
        condition = _comparison(loop.child_by_field_name("condition"))
        start = loop.child_by_field_name("condition") or loop.child_by_field_name("body")
        at = start.start_byte if start is not None else loop.start_byte
        if depth >= MAX_DEPTH:
            return None
        if loop.start_byte <= before < loop.end_byte:
            if self.trip_values is not None and loop.id == self.trip_values[0]:
                return self.trip_values[1].get(name)  # rule D43: a later trip's value
            return self.name_value(name, at, depth + 1)
        steps = _steps(loop)
        values: dict[str, int] = {}
        amounts: list[tuple[str, str, int]] = []
        for stepped, how, step in steps:
            amount = self.value(step, at, depth + 1)
            now = values.get(stepped)
            if now is None:
                now_value = self.name_value(stepped, at, depth + 1)
                if now_value is None or not now_value.is_Integer:
                    return None
                values[stepped] = int(now_value)
            if amount is None or not amount.is_Integer:
                return None
            amounts.append((stepped, how, int(amount)))
        relation = _RELATIONS.get(operator(condition)) if condition is not None else None
        left = condition.child_by_field_name("left") if condition is not None else None
        right = condition.child_by_field_name("right") if condition is not None else None
        if relation is None or left is None or right is None or name not in values:
            return None
        if left.type != "identifier" or node_text(left) not in values:
            return None
        bound = self.value(right, at, depth + 1)
        if bound is None or not bound.is_Integer:
            return None
        for _ in range(MAX_STEP_TRIPS):
            if not bool(relation(values[node_text(left)], int(bound))):
                return sympy.Integer(values[name])
            for stepped, how, amount in amounts:
                values[stepped] = _step(values[stepped], how, amount)
        return None  # a loop longer than that: its end is not followed

    def _compound(self, node: tree_sitter.Node, depth: int) -> sympy.Expr | None:
        """Rule D20: `n *= 1024` is the value of `n` just before it, times 1024; an unknown
        `+=` or `-=` (`s -= s % 256`, a rounding) leaves the value as it was."""
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if left is None or right is None or depth >= MAX_DEPTH:
            return None
        old = self.name_value(node_text(left), node.start_byte, depth + 1)
        new = self.value(right, node.start_byte, depth + 1)
        if old is None:
            return None
        if new is None or has_unknown(new):
            return old if operator(node) in ("+=", "-=") else None
        return apply_value(_COMPOUND[operator(node)], [old, new])

    def _member(self, node: tree_sitter.Node, before: int, depth: int) -> sympy.Expr | None:
        """`p.size`: see `member_value`."""
        obj = node.child_by_field_name("argument")
        member = node.child_by_field_name("field")
        if obj is None or member is None or obj.type != "identifier":
            return None
        if operator(node) not in (".", "->"):
            return None
        pointer = operator(node) == "->"  # rule D26: what the pointed-to object was set to
        return self.member_value(node_text(obj), node_text(member), before, depth, pointer)

    def member_value(
        self, obj: str, field: str, before: int, depth: int, pointer: bool = False
    ) -> sympy.Expr | None:
        """`obj.field` at byte `before`: its last assignment member by member (rule D16,
        valued as a name's, guards included) or by a call that is given `obj` (rule D26:
        `init(&obj)` assigning `p->field`), whichever is later; else, for a parameter, the
        caller's member (D23); else (rule D25) what the constructor that declared `obj` set
        it to; else (rule D23) the struct's: the element at the field's place in the list
        that last initialised `obj` as a whole (`Params p = {128, 3};`, the first element
        of the list a range-for walks), or the field's default member initializer. Through
        a pointer (`obj->field`, `pointer`), only assignments and the caller's members."""
        key = f"{obj}.{field}"
        earlier = [(start, v) for start, v in self.defs.get(key, []) if start < before]
        last = earlier[-1][0] if earlier else -1
        if depth < MAX_DEPTH:
            for start, call, index in reversed(self._given(obj, before)):
                if start <= last:
                    break
                sets, value = self._set_by_call(call, index, field, depth + 1, obj)
                if sets:
                    return value
        if earlier:
            accumulated = _accumulated(earlier[-1][1], before, self.func)
            if accumulated:
                return None
            return self._latest([v for _, v in earlier], depth, self.outer.get(key))
        if key in self.outer:
            return self.outer[key]
        if depth >= MAX_DEPTH:
            return None
        returned = self._returned(obj, field, before, depth + 1)
        if returned is not None or pointer:
            return returned
        found = self._object(obj, before)
        if found is None:
            return None
        struct, listed, arguments = found
        fields, grammar, _root = struct
        if arguments is not None:
            built = self._constructed(struct, obj, arguments, field, before, depth + 1)
            if built is not None and built[0]:
                return built[1]
        placed = [f for f in fields if not f.static]
        for position, candidate in enumerate(placed):
            if candidate.name == field and listed is not None:
                elements = [c for c in listed.named_children if c.type != "comment"]
                if position < len(elements):
                    return self.value(elements[position], before, depth + 1)
        for candidate in fields:
            if candidate.name == field and candidate.default is not None:
                return _member_default(candidate, fields, grammar, self.library, depth + 1)
        return None

    def _object(
        self, obj: str, before: int
    ) -> tuple[Struct, tree_sitter.Node | None, tuple[tree_sitter.Node, ...] | None] | None:
        """The struct of the local or parameter `obj`, the list that last initialised it as
        a whole (None: declared without one) and the arguments of the constructor call that
        declared it (rule D25; None: not declared by one); None when its type is no struct
        in view or something else (a call, another object) last defined it."""
        body = self.func.child_by_field_name("body")
        declared = local_types(body, self.grammar).get(obj, []) if body is not None else []
        declared = [d for d in declared if d.start < before]
        listed: tree_sitter.Node | None = None
        arguments: tuple[tree_sitter.Node, ...] | None = None
        if declared:
            local = declared[-1]
            type_text = local.type
            arguments = local.arguments
            if local.range is not None:  # rule D23: a range-for's variable: the first element
                walked = local.range
                if walked.type != "identifier":
                    return None
                whole = self.defs.get(node_text(walked), [])
                lists = [v for start, v in whole if start < local.start]
                if not lists or lists[-1].type != "initializer_list":
                    return None
                items = [c for c in lists[-1].named_children if c.type != "comment"]
                if not items or items[0].type != "initializer_list":
                    return None
                listed = items[0]
                if type_name(type_text) in ("", "auto"):
                    outer = [d for d in declared_before(self, node_text(walked), local.start)]
                    type_text = outer[-1] if outer else ""
        else:
            params = [p.type for p in parameters(self.func) if p.name == obj]
            if not params:
                return None
            type_text = params[0]
        struct = find_struct(type_name(type_text), self.func, self.grammar, self.library)
        if struct is None:
            return None
        last = [v for start, v in self.defs.get(obj, []) if start < before]
        if last:
            called = last[-1]
            own = (
                called.parent is not None
                and declared
                and called.parent.start_byte == declared[-1].start
            )
            if called.type == "argument_list" and own and arguments is not None:
                return struct, None, arguments  # `P p(nullptr, 7);`: its declaration's (D25)
            name, args = call_parts(called) if called.type == "call_expression" else ("", [])
            if name and name.split("::")[-1] == type_name(type_text):
                return struct, None, tuple(args)  # `P p = P(1, 2);` (rule D25)
            if called.type != "initializer_list":
                return None
            listed = called
            arguments = None
        return struct, listed, arguments

    def _constructed(
        self,
        struct: Struct,
        obj: str,
        arguments: tuple[tree_sitter.Node, ...],
        field: str,
        before: int,
        depth: int,
    ) -> tuple[bool, sympy.Expr | None] | None:
        """Rule D25: `field` as the constructor called with `arguments` left it: its body's
        last assignment of `field` or `this->field` (valued as D8 values a name: guards,
        options), else its member initializer (`: n_(n)`); the constructor's parameters are
        the arguments' values here. (True, value) when the constructor sets the field
        (value None: to something unknown), (False, None) when it does not, None without
        one constructor of that many arguments."""
        fields, grammar, root = struct
        name = type_name(declared_before(self, obj, before)[-1])
        found = list(constructors(root, grammar).get(name, []))
        if self.library is not None:
            for index in self.library.indices:
                if index.tree.root_node.id != root.id:
                    found += constructors(index.tree.root_node, index.grammar).get(name, [])
        fitting = []
        for candidate in found:
            count = len(parameters(candidate))
            if count - _defaulted_parameters(candidate) <= len(arguments) <= count:
                fitting.append(candidate)
        if len(fitting) != 1 or depth > MAX_DEPTH:
            return None  # overloads by type are not told apart
        ctor = fitting[0]
        bound: dict[str, sympy.Expr] = {}
        for param, argument in zip(parameters(ctor), arguments, strict=False):
            value = (
                self.name_value(node_text(argument), before, depth + 1)
                if argument.type == "type_identifier"
                else self.value(argument, before, depth + 1)
            )
            if param.name and value is not None:
                bound[param.name] = value
        scope = HostScope(ctor, grammar, bound, library=self.library)
        body = ctor.child_by_field_name("body")
        end = body.end_byte if body is not None else ctor.end_byte
        earlier = sorted(
            (start, v)
            for key in (field, f"this.{field}")
            for start, v in scope.defs.get(key, [])
            if start < end
        )
        if earlier:
            return True, scope._latest([v for _, v in earlier], depth)
        for child in ctor.named_children:
            if child.type != "field_initializer_list":
                continue
            for initializer in child.named_children:
                member = initializer.named_children[0] if initializer.named_children else None
                if member is None or node_text(member) != field:
                    continue
                given = initializer.named_children[-1]
                values = [c for c in given.named_children if c.type != "comment"]
                if len(values) != 1:
                    return True, None
                return True, scope.value(values[0], ctor.start_byte, depth + 1)
        return False, None

    def _given(self, obj: str, before: int) -> list[tuple[int, tree_sitter.Node, int]]:
        """Rule D26: the calls before byte `before` given `obj` (`init(&obj)`, `setup(obj)`),
        with the argument's position, in source order."""
        body = self.func.child_by_field_name("body")
        if body is None:
            return []
        return [
            item for item in _given_objects(body, self.grammar).get(obj, []) if item[0] < before
        ]

    def _set_by_call(
        self, call: tree_sitter.Node, index: int, field: str, depth: int, obj: str = ""
    ) -> tuple[bool, sympy.Expr | None]:
        """Rule D26: whether the call `call`, given an object at argument `index` through a
        pointer or a reference parameter, sets its `field` (`p->n = 512;`, `c.n = 512;` or
        a call inside it given `p` in turn), and to what: its last such assignment in the
        function's body, valued there with the function's other parameters bound to this
        call's arguments. A function not defined in the folder sets nothing we can see."""
        name, args = call_parts(call)
        callee = self._file_level(file_functions, name)
        params = parameters(callee) if callee is not None else []
        body = callee.child_by_field_name("body") if callee is not None else None
        if callee is None or body is None or index >= len(params) or len(params) != len(args):
            return False, None
        param = params[index]
        argument = args[index]
        # `init(&cfg)`, `init(p)` with `p` a pointer itself, `init(cfg)` to a reference: a
        # copy's members are the callee's own
        shared = "*" in param.type or "&" in param.type
        if argument.type == "pointer_expression" and "*" not in param.type:
            return False, None
        if not param.name or not shared:
            return False, None
        # its `outer` is filled in below: its values are its own
        scope = HostScope(callee, self.grammar, {}, library=self.library, shared=False)
        key = f"{param.name}.{field}"
        sets = bool(scope.defs.get(key)) or any(
            scope._set_by_call(inner, at, field, depth + 1)[0]
            for _, inner, at in scope._given(param.name, body.end_byte)
            if depth < MAX_DEPTH
        )
        if not sets:
            return False, None
        for other, arg in zip(params, args, strict=True):  # its other parameters, here
            if other is param or not other.name or other.is_pointer:
                continue
            value = self.value(arg, call.start_byte, depth + 1)
            if value is not None:
                scope.outer[other.name] = value
        if obj and depth < MAX_DEPTH:  # what it was before the call (`if (c) p->n = 4;`)
            prior = self.member_value(obj, field, call.start_byte, depth + 1)
            if prior is not None:
                scope.outer[key] = prior
        return True, scope.member_value(param.name, field, body.end_byte, depth, pointer=True)

    def _returned(self, obj: str, field: str, before: int, depth: int) -> sympy.Expr | None:
        """Rule D27: `obj` last defined as a whole by a call of a function of the folder
        that returns a local (`Input in = read_CLI(argc, argv);`, `Input* I =
        set_default_input();`): `obj.field` is that local's `field` at its return, valued
        there with the function's parameters bound to the call's arguments."""
        whole = [v for start, v in self.defs.get(obj, []) if start < before]
        call = whole[-1] if whole else None
        while call is not None and call.type in ("cast_expression", "parenthesized_expression"):
            call = call.child_by_field_name("value") or (
                call.named_children[-1] if call.named_children else None
            )
        if call is None or call.type != "call_expression" or depth > MAX_DEPTH:
            return None
        name, args = call_parts(call)
        callee = self._file_level(file_functions, name)
        returns = _returns(callee) if callee is not None else []
        names = {node_text(r) for r in returns}
        params = [p for p in parameters(callee) if p.name] if callee is not None else []
        if not returns or len(names) != 1 or returns[0].type != "identifier":
            return None
        if callee is None or len(params) != len(args) or callee is self.func:
            return None
        bound: dict[str, sympy.Expr] = {}
        for param, arg in zip(params, args, strict=True):
            value = self.value(arg, call.start_byte, depth + 1)
            if param.name and value is not None and not param.is_pointer:
                bound[param.name] = value
        scope = HostScope(callee, self.grammar, bound, library=self.library)
        return scope.member_value(names.pop(), field, returns[0].start_byte, depth + 1)

    def _element(self, node: tree_sitter.Node, before: int, depth: int) -> sympy.Expr | None:
        """Rule D15: `dims[d]` of an array initialised with a list (`const int dims[] = {2, 5,
        10};`, local or file-level) at a whole-number index is that element's value."""
        array = node.child_by_field_name("argument")
        indices = node.child_by_field_name("indices")
        named = [c for c in indices.named_children if c.type != "comment"] if indices else []
        if array is None or array.type != "identifier" or len(named) != 1:
            return None
        index = self.value(named[0], before, depth + 1)
        if index is None or (index.is_Integer and index < 0):
            return None
        name = node_text(array)
        earlier = [v for start, v in self.defs.get(name, []) if start < before]
        listed = earlier[-1] if earlier else self._file_level(file_initializers, name)
        if listed is None or listed.type != "initializer_list":
            return None  # last assigned as a whole (a pointer), or no list in view
        elements = [c for c in listed.named_children if c.type != "comment"]
        if not index.is_Integer:  # rule D44: an index from the command line
            values = [self.value(e, before, depth + 1) for e in elements]
            return argv_choice(index, values, unknown_symbol(name))
        if int(index) >= len(elements):
            return None
        return self.value(elements[int(index)], before, depth + 1)

    def _length(self, node: tree_sitter.Node, before: int) -> sympy.Expr | None:
        """Rule D35: `strlen(s)` of a string literal, or of a local whose last definition
        before byte `before` is one (`const char *key = "0001...";`), is its length; else
        unknown (the name it defines is then D14's placeholder)."""
        literal: tree_sitter.Node | None = node
        if node.type == "identifier":
            name = node_text(node)
            earlier = [v for start, v in self.defs.get(name, []) if start < before]
            overwritten = earlier and self._overwritten(name, earlier, before)
            literal = earlier[-1] if earlier and not overwritten else None
        word = argv_word(node_text(literal)) if literal is not None else None
        if word is not None:
            return argv_length_symbol(word)  # rule D37: `strlen(argv[2])`
        length = _literal_length(literal) if literal is not None else None
        return sympy.Integer(length) if length is not None else None

    def _option(self, call: tree_sitter.Node) -> sympy.Expr | None:
        """Rule D38: a cxxopts option's value (the command line's, else its declared default),
        the option and its declaration found in the function's file, else the folder's."""
        root = self.func
        while root.parent is not None:
            root = root.parent
        roots = [(root, self.grammar)]
        if self.library is not None:
            roots += [(i.tree.root_node, i.grammar) for i in self.library.indices]
        name = option_read(call, roots)
        return option_value(name, roots) if name is not None else None

    def _rounded_operand(
        self, node: tree_sitter.Node, before: int, depth: int
    ) -> sympy.Expr | None:
        """Rule D36: the value a rounding call rounds; a division C does in floating point
        (`n / 128.0`) is exact, else the operand is valued as any other."""
        quotient = floating_quotient(node)
        if quotient is None:
            return self.value(node, before, depth + 1)
        left, right = (self.value(side, before, depth + 1) for side in quotient)
        if left is None or right is None or right == 0:
            return None
        return left / right

    def _word_length(self, call: tree_sitter.Node, before: int) -> sympy.Expr | None:
        """Rule D37: `s.length()` / `s.size()` of a local whose last definition before byte
        `before` is a command-line word (`std::string s = std::string(argv[2]);`, `std::string
        s{argv[2]};`) is that word's length; anything else is unknown."""
        method = call.child_by_field_name("function")
        obj = method.child_by_field_name("argument") if method is not None else None
        if method is None or method.type != "field_expression" or obj is None:
            return None
        if obj.type != "identifier" or operator(method) != ".":
            return None
        name = node_text(obj)
        earlier = [v for start, v in self.defs.get(name, []) if start < before]
        if not earlier or self._overwritten(name, earlier, before):
            return None
        word = argv_word(node_text(earlier[-1]))
        return argv_length_symbol(word) if word is not None else None

    def _call(self, call: tree_sitter.Node, before: int, depth: int) -> sympy.Expr | None:
        """Rule D10: a call to a file-level function whose body is one `return e;` (`iDivUp(n,
        256)`) is `e`, valued in that function with its parameters bound to the arguments."""
        name, args = call_parts(call)
        callee = self._file_level(file_functions, name)
        returned = single_return(callee) if callee is not None else None
        if callee is None or returned is None or depth + 1 > MAX_DEPTH:
            return None
        params = [p.name for p in parameters(callee)]
        if len(params) != len(args) or not all(params):
            return None
        bound: dict[str, sympy.Expr] = {}
        for name, arg in zip(params, args, strict=True):
            value = self.value(arg, before, depth + 1)
            if value is None:
                return None
            bound[name] = value
        scope = HostScope(callee, self.grammar, bound, self.placeholders, self.library)
        return scope.value(returned, returned.end_byte, depth + 1)

    def _latest(
        self, earlier: list[tree_sitter.Node], depth: int, prior: sympy.Expr | None = None
    ) -> sympy.Expr | None:
        """The value of the last definition before the use; one made under `if (c)` with `c`
        a comparison (`if (argc > 1) n = atoi(argv[1]);`) is piecewise with the one before,
        or, for the first, with `prior` (a member's value as the caller passed it, D26)."""
        last = earlier[-1]
        scan = _scan_call(last)  # rule D22: `&n` of `sscanf(argv[2], "%d", &n)`
        flag = _option_flag(scan or last, self.func)
        first = len(earlier) < 2 and prior is None
        if flag is not None:  # rule D19: `-flag N` on the command line, else the one before
            given = sympy.Symbol(OPTION_VALUE + flag, positive=True)
            if first or depth >= MAX_DEPTH:
                return given
            before = self._latest(earlier[:-1], depth + 1) if len(earlier) > 1 else prior
            if before is None or has_unknown(before):
                return given
            present = sympy.Symbol(OPTION_GIVEN + flag)
            return piecewise(given, sympy.Eq, present, sympy.Integer(1), before)
        value = _scanned(scan) if scan else self.value(last, last.start_byte, depth + 1)
        guard = _guarding_condition(last, self.func)
        if guard is None and value is not None and len(earlier) > 1 and depth < MAX_DEPTH:
            chosen = self._else_arm(earlier, value, depth)
            if chosen is not None:
                return chosen
        if value is None or guard is None or first or depth >= MAX_DEPTH:
            return value
        before = self._latest(earlier[:-1], depth + 1) if len(earlier) > 1 else prior
        if before is None or has_unknown(before):
            return value
        chosen = self._piecewise(guard, value, before, last.start_byte, depth)
        return chosen if chosen is not None else value

    def _else_arm(
        self, earlier: list[tree_sitter.Node], value: sympy.Expr, depth: int
    ) -> sympy.Expr | None:
        """Rule D32: `if (c) r = a; else r = b;` with `c` a comparison: `r` after it is `a`
        where `c` holds, else `b` (`value`), when the definition before the else arm's is
        the consequence's own; else None (the last definition stands, as before)."""
        last, previous = earlier[-1], earlier[-2]
        branch = _else_branch(last, self.func)
        if branch is None:
            return None
        condition = _comparison(branch.child_by_field_name("condition"))
        guard = _guarding_condition(previous, self.func)
        consequence = branch.child_by_field_name("consequence")
        if condition is None or guard is None or guard.id != condition.id or consequence is None:
            return None
        if not consequence.start_byte <= previous.start_byte < consequence.end_byte:
            return None
        yes = self.value(previous, previous.start_byte, depth + 1)
        if yes is None or has_unknown(yes) or has_unknown(value):
            return None
        return self._piecewise(condition, yes, value, last.start_byte, depth)

    def _conditional(self, node: tree_sitter.Node, before: int, depth: int) -> sympy.Expr | None:
        """`c ? a : b` with `c` a comparison: a piecewise value, decided once the command
        line binds its names (`(B > 4) ? 4 : B`)."""
        yes = self.value(node.child_by_field_name("consequence"), before, depth + 1)
        no = self.value(node.child_by_field_name("alternative"), before, depth + 1)
        if yes is None or no is None:
            return None
        if yes == no:
            return yes
        condition = _comparison(node.child_by_field_name("condition"))
        return self._piecewise(condition, yes, no, before, depth) if condition else None

    def _piecewise(
        self, condition: tree_sitter.Node, yes: sympy.Expr, no: sympy.Expr, before: int, depth: int
    ) -> sympy.Expr | None:
        """`yes` where the comparison `condition` holds, else `no`; None when it has no value."""
        relation = _RELATIONS.get(operator(condition))
        left = self.value(condition.child_by_field_name("left"), before, depth + 1)
        right = self.value(condition.child_by_field_name("right"), before, depth + 1)
        if relation is None or left is None or right is None:
            return None
        try:
            return piecewise(yes, relation, left, right, no)
        except (TypeError, ValueError):
            return None


#: a struct's fields, the grammar of the file that defines it, and that file's root
Struct = tuple[list[Field], str, tree_sitter.Node]


def find_struct(
    name: str, func: tree_sitter.Node, grammar: str, library: CallSites | None
) -> Struct | None:
    """The struct or class `name` as `func`'s own file defines it, else (as rule D18 looks
    up constants) the first of the folder's files, headers included, that does."""
    if not name or name in _BUILTIN_TYPES:
        return None
    root = func
    while root.parent is not None:
        root = root.parent
    return _STRUCTS.get(
        root, partial(_find_struct, name, root, grammar, library), (name, grammar, library)
    )


#: (file root, name, grammar, library) -> `find_struct`'s answer: asked for each member read
_STRUCTS = SessionNodeCache(1024)


def _find_struct(
    name: str, root: tree_sitter.Node, grammar: str, library: CallSites | None
) -> Struct | None:
    places = [(root, grammar)]
    if library is not None:
        # a file whose text does not name the struct cannot define it: not walked for its
        # structs (a whole-file query each) when the name is plain ASCII, as it is in C
        needle = name.encode() if name.isascii() else None
        places += [
            (index.tree.root_node, index.grammar)
            for index in library.indices
            if needle is None or needle in index.source
        ]
    for place, place_grammar in places:
        fields = struct_fields(place, place_grammar).get(name)
        if fields is not None:
            return fields, place_grammar, place
    axes = _VECTOR_TYPE.fullmatch(name)
    if axes is not None:  # CUDA's `int3 v = {a, b, c};`: members x, y, z in that order
        return [Field(axis, None, False) for axis in "xyzw"[: int(axes.group(1))]], grammar, root
    return None


#: C and C++'s built-in type words (`int n` passed as `run(n)`): no struct can be named one
_BUILTIN_TYPES = frozenset(
    ("void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned")
    + ("auto", "wchar_t", "char8_t", "char16_t", "char32_t")
)

#: rule D23: CUDA's built-in vector types, structs of 1-4 members x, y, z, w
_VECTOR_TYPE = re.compile(r"(?:u?char|u?short|u?int|u?long|u?longlong|float|double)([1-4])")


def declared_before(scope: HostScope, name: str, before: int) -> list[str]:
    """The declared types of the local or parameter `name` before byte `before`."""
    body = scope.func.child_by_field_name("body")
    declared = local_types(body, scope.grammar).get(name, []) if body is not None else []
    found = [d.type for d in declared if d.start < before]
    return found or [p.type for p in parameters(scope.func) if p.name == name]


def _member_default(
    field: Field,
    fields: list[Field],
    grammar: str,
    library: CallSites | None,
    depth: int,
) -> sympy.Expr | None:
    """Rule D23: a default member initializer (`int n = 64;`, `static const int k = 3;`),
    its names that are the struct's other members valued by theirs (one level: `int m = n *
    2;`), the rest as file-level names (D7, D18)."""
    default = cast(tree_sitter.Node, field.default)
    words = set(re.findall(r"[A-Za-z_]\w*", node_text(default)))
    outer: dict[str, sympy.Expr] = {}
    for other in fields:
        if other is field or other.name not in words or other.default is None:
            continue
        value = HostScope(other.default, grammar, library=library).value(other.default, 0, depth)
        if value is not None:
            outer[other.name] = value
    return HostScope(default, grammar, outer, library=library).value(default, 0, depth)


#: the program's argument count: bound from the command line's words (none given: 1)
ARGC = sympy.Symbol("argc", positive=True)

#: rule D14: the prefix of a host name's placeholder (`$` is in no portable C name)
UNKNOWN_PREFIX = "host$"


def unknown_symbol(name: str) -> sympy.Symbol:
    """The placeholder of a host name whose value host code does not show (`int w =
    img.getWidth();`): solved, where it can be, from the profiled launch (rule D14)."""
    return sympy.Symbol(UNKNOWN_PREFIX + name, positive=True)


def has_unknown(value: sympy.Expr) -> bool:
    """Whether a host value rests on a placeholder (rule D14)."""
    return any(s.name.startswith(UNKNOWN_PREFIX) for s in value.free_symbols)


#: rule D24: trips of a for loop followed to find its steps' values after it, at most
MAX_STEP_TRIPS = 4096


def _step_loop(definition: tree_sitter.Node) -> tree_sitter.Node | None:
    """The for loop whose step (`n -= 2`, `n = n * 4`, one of a comma list) `definition`
    is, else None; a plain assignment's definition is its right side (`_definitions`)."""
    parent = definition.parent
    if parent is not None and parent.type == "assignment_expression" and operator(parent) == "=":
        right = parent.child_by_field_name("right")
        if right is not None and right.id == definition.id:
            definition = parent
    elif definition.type != "assignment_expression" or operator(definition) not in _COMPOUND:
        return None
    node = definition
    parent = node.parent
    while parent is not None and parent.type == "comma_expression":
        node, parent = parent, parent.parent
    if parent is None or parent.type != "for_statement":
        return None
    update = parent.child_by_field_name("update")
    return parent if update is not None and update.id == node.id else None


def _steps(loop: tree_sitter.Node) -> list[tuple[str, str, tree_sitter.Node]]:
    """A for loop's compound-assignment steps, `(name, operator, amount)`, in order; a
    comma list is flattened with a stack (no recursion)."""
    update = loop.child_by_field_name("update")
    pending = [update] if update is not None else []
    found: list[tuple[str, str, tree_sitter.Node]] = []
    while pending:
        node = pending.pop()
        if node.type == "comma_expression":
            pending.extend(reversed(node.named_children))
            continue
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        how = operator(node) if node.type == "assignment_expression" else None
        if how == "=" and left is not None and right is not None:
            how, right = _self_step(node_text(left), right)  # `n = n * 4` is `n *= 4`
        if (
            how in _COMPOUND
            and left is not None
            and right is not None
            and left.type == "identifier"
        ):
            found.append((node_text(left), how, right))
    return found


def _self_step(name: str, value: tree_sitter.Node) -> tuple[str | None, tree_sitter.Node | None]:
    """Rule D24: `name op k` (the right side of a step `n = n * 4`) as the compound step
    (`*=`, k); anything else (None, None)."""
    left = value.child_by_field_name("left")
    right = value.child_by_field_name("right")
    how = f"{operator(value)}=" if value.type == "binary_expression" else ""
    if left is None or right is None or left.type != "identifier" or node_text(left) != name:
        return None, None
    return (how, right) if how in _COMPOUND else (None, None)


def _step(value: int, how: str, amount: int) -> int:
    """C's `value op= amount` on whole numbers (`/=` truncates toward zero)."""
    if how == "+=":
        return value + amount
    if how == "-=":
        return value - amount
    if how == "*=":
        return value * amount
    if how == "/=":
        if amount == 0:
            return value
        quotient = abs(value) // abs(amount)
        return quotient if (value < 0) == (amount < 0) else -quotient
    if how == "<<=":
        return value << min(max(amount, 0), 62)
    return value >> min(max(amount, 0), 62)


#: rule D31: library calls that store through what they are given by address (C's reads
#: and scans, MPI's and the CUDA / HIP runtime's queries), by name
_STORES_THROUGH = re.compile(
    r"v?f?scanf|v?sscanf|scanf_s|fscanf_s|read|fread|pread|recv|getline|"
    r"MPI_(?!Send|Isend|Ssend|Bsend|Rsend)\w+|(?:cuda|hip|cu)[A-Z]\w*"
)

_BUMPED = SessionNodeCache(256)


_BUMPED_PART = BodyQueryPart("bumped", "(update_expression argument: (identifier) @name)")


def _bumped(body: tree_sitter.Node, grammar: str) -> dict[str, list[tuple[int, tree_sitter.Node]]]:
    """Rule D31: name -> [(byte offset, `name++`)] of a function body, in source order."""

    def collect() -> dict[str, list[tuple[int, tree_sitter.Node]]]:
        out: dict[str, list[tuple[int, tree_sitter.Node]]] = {}
        for name in _BUMPED_PART.captures(body, grammar).get("name", []):
            step = name.parent
            if step is not None:
                out.setdefault(node_text(name), []).append((step.start_byte, step))
        return out

    return _BUMPED.get(body, collect, grammar)


def _in_loop(node: tree_sitter.Node, func: tree_sitter.Node) -> bool:
    """Whether `node` lies in a loop of `func` (a `++` outside one is a rounding, `if (r)
    n++;`, which D31 leaves as D20 leaves an unknown `+=`: the value as it was)."""
    parent = node.parent
    while parent is not None and parent.id != func.id:
        if parent.type in _LOOPS:
            return True
        parent = parent.parent
    return False


def _counts_loop(step: tree_sitter.Node, before: int) -> bool:
    """Whether `step` (`i++`) is the update, or one of a comma list of it, of a `for` loop
    that holds byte `before`: the loop's counter, which D8 values at its start there."""
    node = step
    parent = node.parent
    while parent is not None and parent.type == "comma_expression":
        node, parent = parent, parent.parent
    if parent is None or parent.type != "for_statement":
        return False
    update = parent.child_by_field_name("update")
    inside = parent.start_byte <= before < parent.end_byte
    return inside and update is not None and update.id == node.id


_LOOPS = ("for_statement", "for_range_loop", "while_statement", "do_statement")


def _accumulated(last: tree_sitter.Node, before: int, func: tree_sitter.Node) -> bool:
    """Rule D20: whether the definition `last` is a compound assignment (`total += count;`)
    in a loop that the use at byte `before` is not in: a sum over the loop's trips, which
    host code does not show (a use inside the loop sees its first trip, as D8 has it)."""
    compound = last.type == "assignment_expression" and operator(last) in _COMPOUND
    parent = last.parent if compound else None
    while parent is not None and parent.id != func.id:
        looped = parent.type in _LOOPS
        if looped and not parent.start_byte <= before < parent.end_byte:
            return True
        parent = parent.parent
    return False


def _guarding_condition(value: tree_sitter.Node, func: tree_sitter.Node) -> tree_sitter.Node | None:
    """The comparison of the `if` whose consequence holds the definition `value`, when that
    `if` is the nearest statement that can skip it (no loop in between), else None."""
    node = value.parent
    while node is not None and node.id != func.id:
        if node.type in ("for_statement", "while_statement", "do_statement", "else_clause"):
            return None
        parent = node.parent
        if parent is not None and parent.type == "if_statement":
            if node.id != getattr(parent.child_by_field_name("consequence"), "id", None):
                return None
            return _comparison(parent.child_by_field_name("condition"))
        node = parent
    return None


def _else_branch(value: tree_sitter.Node, func: tree_sitter.Node) -> tree_sitter.Node | None:
    """Rule D32: the `if` whose `else` arm holds the definition `value`, when that arm is the
    nearest statement that can skip it (no loop or `if` in between), else None."""
    node = value.parent
    while node is not None and node.id != func.id:
        if node.type in ("for_statement", "while_statement", "do_statement", "if_statement"):
            return None
        if node.type == "else_clause":
            parent = node.parent
            return parent if parent is not None and parent.type == "if_statement" else None
        node = node.parent
    return None


#: rule D19: the value a command-line option gives (`-paths 4096`: 4096), and whether the
#: command line has it (1) or not (0); `$` keeps these apart from any C name
_OPTION_READ = re.compile(r"(?:\w+\s*\(\s*)+(?:optarg|argv\s*\[[^\]]*[A-Za-z_][^\]]*\])")
_FLAG = re.compile(r'"(-{1,2}[A-Za-z][\w-]*)"')
_CASE = re.compile(r"case\s*'([A-Za-z0-9])'\s*:")


def _option_flag(value: tree_sitter.Node, func: tree_sitter.Node) -> str | None:
    """`n = atoi(argv[++i])` under `if (!strcmp(argv[i], "-n"))` (or any `if` whose condition
    names one "-flag" string: `ArgPos("-n", argc, argv) > 0`), and `n = atoi(optarg)` under
    getopt's `case 'n':`, read the option `-n`: its name, else None."""
    read = value
    while read.type == "assignment_expression" and operator(read) == "=":  # `a = b = atoi(..)`
        right = read.child_by_field_name("right")
        if right is None:
            break
        read = right
    if not _OPTION_READ.match(node_text(read)):
        return None
    node = value.parent
    for _ in range(MAX_OPTION_LEVELS):
        if node is None or node.id == func.id:
            return None
        if node.type == "if_statement":
            condition = node.child_by_field_name("condition")
            flags = _FLAG.findall(node_text(condition)) if condition is not None else []
            if flags:
                return flags[0] if len(flags) == 1 else None
            # `if (++i < argc) n = atoi(argv[i]);` inside the flag's `if`: look further out
        if node.type == "case_statement":
            label = _CASE.match(node_text(node))
            return f"-{label.group(1)}" if label else None
        node = node.parent
    return None


#: statements between an option's assignment and the `if` or `case` that names its flag
MAX_OPTION_LEVELS = 6


def _comparison(condition: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """`(a < b)` / an `if`'s `(a < b)` clause -> the comparison `a < b`, else None."""
    while condition is not None and condition.type in (
        "condition_clause",
        "parenthesized_expression",
    ):
        named = [c for c in condition.named_children if c.type != "comment"]
        condition = named[0] if len(named) == 1 else None
    if condition is None or condition.type != "binary_expression":
        return None
    return condition if operator(condition) in _RELATIONS else None


_RELATIONS = {
    "<": sympy.Lt,
    "<=": sympy.Le,
    ">": sympy.Gt,
    ">=": sympy.Ge,
    "==": sympy.Eq,
    "!=": sympy.Ne,
}

_FILE_INITIALIZERS = SessionNodeCache(64)
_FILE_FUNCTIONS = SessionNodeCache(64)


def _literal_length(node: tree_sitter.Node) -> int | None:
    """The characters of a C string literal (or adjacent literals), its bytes in UTF-8, an
    escape sequence one; None for anything else (a prefixed or raw literal included)."""
    parts = node.named_children if node.type == "concatenated_string" else [node]
    total = 0
    for part in parts:
        if part.type != "string_literal" or not node_text(part).startswith('"'):
            return None
        for piece in part.named_children:
            if piece.type == "escape_sequence":
                total += 1
            elif piece.type == "string_content":
                total += len(node_text(piece).encode())
            else:
                return None
    return total


def file_initializers(func: tree_sitter.Node) -> dict[str, tree_sitter.Node]:
    """name -> initializer of the file-level declarations of the file that holds `func`
    (`int N = 4096;`, `const size_t M = N * 2;`, an array's `{2, 5, 10}`), the last one of a
    name."""
    root = func
    while root.parent is not None:
        root = root.parent

    def collect() -> dict[str, tree_sitter.Node]:
        found: dict[str, tree_sitter.Node] = {}
        for decl in root.named_children:
            if decl.type != "declaration":
                continue
            for declarator in decl.children_by_field_name("declarator"):
                name = declarator.child_by_field_name("declarator")
                value = declarator.child_by_field_name("value")
                if declarator.type != "init_declarator" or name is None or value is None:
                    continue
                listed = value.type == "initializer_list"
                if name.type == "identifier" and not listed:
                    found[node_text(name)] = value
                elif name.type == "array_declarator" and listed:  # an array's list (D15)
                    inner = name.child_by_field_name("declarator")
                    if inner is not None and inner.type == "identifier":
                        found[node_text(inner)] = value
        return found

    return _FILE_INITIALIZERS.get(root, collect)


def file_functions(func: tree_sitter.Node) -> dict[str, tree_sitter.Node]:
    """name -> definition of the file-level functions (templates included) of the file that
    holds `func`, the last one of a name."""
    root = func
    while root.parent is not None:
        root = root.parent

    def collect() -> dict[str, tree_sitter.Node]:
        found: dict[str, tree_sitter.Node] = {}
        for node in root.named_children:
            if node.type == "template_declaration":
                inner = [c for c in node.named_children if c.type == "function_definition"]
                node = inner[0] if inner else node
            if node.type != "function_definition":
                continue
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            name = declarator.child_by_field_name("declarator") if declarator else None
            if name is not None:
                found[node_text(name).split("::")[-1]] = node
        return found

    return _FILE_FUNCTIONS.get(root, collect)


def bind_call(
    params: list[str],
    args: list[tree_sitter.Node],
    caller: tree_sitter.Node,
    grammar: str,
    at: int,
    outer: dict[str, sympy.Expr] | None = None,
    pointers: frozenset[str] = frozenset(),
    library: CallSites | None = None,
    callee: tree_sitter.Node | None = None,
) -> dict[str, sympy.Expr]:
    """Kernel/function parameter -> its value at this call, a sympy expression (passed as
    such: a string would have to be parsed again, and parsing text is where code can hide).
    A value that rests on an unknown host name carries its placeholder (rule D14), but for
    the `pointers` (no launch axis solves an address). With the `callee`'s definition, a
    struct passed by value also passes its fields, `param.field` (rule D29, as D23 does
    for a function's caller)."""
    scope = HostScope(caller, grammar, outer, placeholders=True, library=library)
    out: dict[str, sympy.Expr] = {}
    aggregates = _aggregate_params(callee) if callee is not None else frozenset()
    for name, arg in zip(params, args, strict=False):
        if not name:
            continue
        value = scope.value(arg, at)
        if value is not None and not (name in pointers and has_unknown(value)):
            out[name] = value
        given = _given_name(arg) if name in aggregates and name not in pointers else None
        if callee is not None and given is not None and not given.startswith("&"):
            members = _passed_members(callee, name, given, scope, at)
            out.update({k: v for k, v in members.items() if not has_unknown(v)})
    return out


#: type names whose values have no fields (D29 passes a struct's or a vector type's)
_SCALAR_TYPES = frozenset(
    {"int", "unsigned", "signed", "long", "short", "char", "bool", "float", "double", "void",
     "size_t", "half", "__half", "uint", "ulong", "ushort", "uchar"}
)  # fmt: skip


def _aggregate_params(func: tree_sitter.Node) -> frozenset[str]:
    """D29: a function's parameters passed by value whose type may have fields (not a
    pointer, not a builtin scalar or a `*_t` integer)."""
    out = set()
    for p in parameters(func):
        base = type_name(p.type)
        scalar = base in _SCALAR_TYPES or base.endswith("_t")
        if p.name and "*" not in p.type and "&" not in p.type and base and not scalar:
            out.add(p.name)
    return frozenset(out)


def exe_arg_values(exe_args: str) -> dict[str, float]:
    """`4096 10 data.bin` -> {argc: 4, argv_1: 4096, argv_2: 10} (numeric arguments only);
    an option word and the number after it, `-paths 4096`, give `given$-paths` 1 and
    `option$-paths` 4096 (rule D19)."""
    words = exe_args.split()
    values: dict[str, float] = {"argc": float(len(words) + 1), **argv_lengths(words)}
    for k, token in enumerate(words, start=1):
        try:
            values[f"argv_{k}"] = float(token)
        except ValueError:
            if _FLAG.fullmatch(f'"{token}"'):
                values[OPTION_GIVEN + token] = 1.0
                following = words[k] if k < len(words) else ""
                if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", following):
                    values[OPTION_VALUE + token] = float(following)
    return values


_ALLOCATORS = {
    "cudaMalloc",
    "cudaMallocManaged",
    "hipMalloc",
    "hipMallocManaged",
    "cudaMallocPitch",
    "omp_target_alloc",
    "sycl::malloc_device",
}
_MAP_SECTION = re.compile(r"([A-Za-z_]\w*)\s*\[\s*([^\]:]*)\s*:\s*([^\]]+)\]")


@cache
def _calls_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(language(grammar), "(call_expression) @c")


def device_allocations(
    func: tree_sitter.Node, grammar: str, outer: dict[str, sympy.Expr] | None = None
) -> sympy.Expr | None:
    """Bytes a host function allocates on the device (cudaMalloc & co.): the data footprint."""
    text = node_text(func)
    if not any(allocator in text for allocator in _ALLOCATORS):
        return None  # a byte search instead of a query over every call of a long `main`
    scope = HostScope(func, grammar, outer)
    total = sympy.Integer(0)
    found = False
    for call in captures(_calls_query(grammar), func).get("c", []):
        name = node_text(cast(tree_sitter.Node, call.child_by_field_name("function")))
        name = name.split("::")[-1]
        if name not in _ALLOCATORS:
            continue
        args = call.child_by_field_name("arguments")
        items = list(args.named_children) if args is not None else []
        position = 0 if name == "omp_target_alloc" else 1
        size_arg = items[position] if len(items) > position else None
        value = scope.value(size_arg, call.start_byte)
        if value is not None and not has_unknown(value):  # a caller's placeholder: unknown
            total += value
            found = True
    return total if found else None


def mapped_bytes(
    pragmas: list[str], func: tree_sitter.Node, grammar: str, at: int, element_bytes: int = 4
) -> sympy.Expr | None:
    """Bytes named by OpenMP `map(...)` array sections (`a[0:n]`), each array once."""
    scope = HostScope(func, grammar)
    sizes: dict[str, sympy.Expr] = {}
    for text in pragmas:
        if "map" not in text:
            continue
        for name, _low, length in _MAP_SECTION.findall(text):
            value = _value_in(scope, expression_node(length), at)
            if value is not None:
                sizes.setdefault(name, value * element_bytes)
    return sympy.Add(*sizes.values()) if sizes else None


def _value_in(
    scope: HostScope, node: tree_sitter.Node | None, at: int, depth: int = 0
) -> sympy.Expr | None:
    """Evaluate a snippet's expression against the scope's definitions (by name); operators
    nested deeper than MAX_SNIPPET_DEPTH are unknown (the recursion stays shallow)."""
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node is None or depth > MAX_SNIPPET_DEPTH:
        return None
    if node.type == "identifier":
        name = node_text(node)
        earlier = [v for start, v in scope.defs.get(name, []) if start < at]
        return scope.value(earlier[-1], earlier[-1].start_byte) if earlier else None
    if node.type in ("binary_expression", "unary_expression"):
        how, operands = value_operands(node)
        values = [_value_in(scope, operand, at, depth + 1) for operand in operands]
        if how is None or any(v is None for v in values):
            return None
        return apply_value(how, cast(list[sympy.Expr], values))
    return scope.value(node, at)


# A function's caller is searched once for all the kernels or regions it holds. The call
# sites searched are part of the key by id, not by reference: holding them would keep a
# whole folder's parse trees alive. An id cannot be confused with a later analysis's: that
# one parses afresh, and a cached function node keeps its own id taken.
_CALLER_BINDINGS = SessionNodeCache(256)


#: how many callers up a function's parameters are followed (main -> run<T> -> kernel host)
MAX_CALLER_LEVELS = 4


def caller_bindings(
    func: tree_sitter.Node,
    calls: CallSites | None,
    levels: int = MAX_CALLER_LEVELS,
    placeholders: bool = False,
    members: bool = False,
) -> dict[str, sympy.Expr]:
    """A function's parameters as its first caller in the folder passes them, the caller's
    own parameters bound the same way up to `levels` callers up (a driver function between
    `main` and the launch is common). A fresh dict: callers may add to it. `placeholders`:
    keep the values that rest on an unknown host name (rule D14); `members`: keep a struct
    parameter's fields as its caller set them, `p.n` (rule D23; not a name of the code)."""
    if levels <= 0:
        return {}
    found = _CALLER_BINDINGS.get(
        func, partial(_first_caller_bindings, func, calls, levels), (calls, levels)
    )
    return {
        name: value
        for name, value in found.items()
        if (placeholders or not has_unknown(value)) and (members or "." not in name)
    }


def first_call(
    func: tree_sitter.Node, calls: CallSites | None
) -> tuple[tree_sitter.Node, str, tree_sitter.Node] | None:
    """The first call of `func` in the folder whose arguments fit its parameters, as
    (call, its grammar, the function around it); None where there is none."""
    params = [p.name for p in parameters(func)]
    required = len(params) - _defaulted_parameters(func)
    name = (function_name(func) or "").split("::")[-1]
    found = calls.get(name, []) if calls else []
    if calls is not None and not found and params:
        found = calls.pointer_calls(name, len(params))  # rule D17: through a pointer table
    for call, call_grammar in found:
        caller = enclosing_function(call.parent)
        args = call.child_by_field_name("arguments")
        if caller is None or caller is func or args is None:
            continue
        if not required <= len(args.named_children) <= len(params):
            continue  # another function of that name (a call may leave defaulted ones out)
        return call, call_grammar, caller
    return None


def _first_caller_bindings(
    func: tree_sitter.Node, calls: CallSites | None, levels: int
) -> dict[str, sympy.Expr]:
    if not parameters(func) and not template_params(func):
        return {}
    found = first_call(func, calls)
    if found is None:
        return {}
    call, call_grammar, caller = found
    outer = caller_bindings(caller, calls, levels - 1, placeholders=True, members=True)
    scope = HostScope(caller, call_grammar, outer, placeholders=True, library=calls)
    return bind_parameters(func, call, scope)


def bind_parameters(
    func: tree_sitter.Node, call: tree_sitter.Node, scope: HostScope
) -> dict[str, sympy.Expr]:
    """`func`'s parameters (and template parameters) as `call`, valued in `scope`, passes
    them."""
    params = [p.name for p in parameters(func)]
    args = call.child_by_field_name("arguments")
    out: dict[str, sympy.Expr] = {}
    if args is None:
        return out
    for pname, arg in zip(params, args.named_children, strict=False):
        value = scope.value(arg, call.start_byte)
        if pname and value is not None:
            out[pname] = value
        given = _given_name(arg)
        if pname and given is not None:
            out.update(_passed_members(func, pname, given, scope, call.start_byte))
    for tname, value in _template_values(call, template_params(func), scope).items():
        out.setdefault(tname, value)
    return out


def _passed_members(
    func: tree_sitter.Node, param: str, arg: str, scope: HostScope, at: int
) -> dict[str, sympy.Expr]:
    """Rule D23: a struct passed by value or reference (`run(cfg)`) passes its fields as
    the caller's scope values them at the call: `param.field` for each field of the
    parameter's struct (its data members, else the members the caller assigns); rule D26:
    so does a pointer to it (`run(&cfg)`, read as `p->n`), or a pointer handed on."""
    declared = [p.type for p in parameters(func) if p.name == param]
    addressed = arg.startswith("&")  # rule D26: `run(&cfg)` read as `p->n` in `run`
    arg = arg.lstrip("&")
    if not declared:
        return {}
    # rule D26: a pointer handed on (`run(c)` with `c` a pointer itself) passes the members
    # its own caller set; a pointer to a local only through `&`
    forwarded = not addressed and "*" in declared[0]
    struct = find_struct(type_name(declared[0]), func, scope.grammar, scope.library)
    if struct is not None:
        names = [f.name for f in struct[0] if not f.static]
    else:
        prefix = f"{arg}."
        names = [key[len(prefix) :] for key in scope.defs if key.startswith(prefix)]
    out: dict[str, sympy.Expr] = {}
    for name in names[:MAX_PASSED_MEMBERS]:
        value = scope.member_value(arg, name, at, 1, pointer=forwarded)
        if value is not None:
            out[f"{param}.{name}"] = value
    return out


#: fields of one struct argument followed into the callee, at most
MAX_PASSED_MEMBERS = 64


def _given_name(arg: tree_sitter.Node) -> str | None:
    """`cfg` -> "cfg", `&cfg` -> "&cfg" (a struct handed to a function), else None."""
    if arg.type == "identifier":
        return node_text(arg)
    inner = arg.child_by_field_name("argument") if arg.type == "pointer_expression" else None
    if inner is not None and inner.type == "identifier" and operator(arg) == "&":
        return "&" + node_text(inner)
    return None


def _defaulted_parameters(func: tree_sitter.Node) -> int:
    """How many of a function's parameters have a default (`bool timing = false`)."""
    declarator = func.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    params = declarator.child_by_field_name("parameters") if declarator is not None else None
    named = params.named_children if params is not None else []
    return sum(1 for p in named if p.type == "optional_parameter_declaration")


def _template_values(
    call: tree_sitter.Node, names: list[str], scope: HostScope
) -> dict[str, sympy.Expr]:
    """Rule D13: a call `run<T, 256>(...)` of a function template binds its non-type template
    parameters to the written arguments' values (types are left to D9's bindings)."""
    function = call.child_by_field_name("function")
    if not names or function is None or function.type != "template_function":
        return {}
    arguments = function.child_by_field_name("arguments")
    out: dict[str, sympy.Expr] = {}
    for name, argument in zip(names, arguments.named_children if arguments else [], strict=False):
        if argument.type == "type_descriptor":
            # a bare name parses as a type (`run<T, N>`): a value where the scope gives one
            text = node_text(argument)
            value = scope.name_value(text, call.start_byte) if text.isidentifier() else None
        else:
            value = scope.value(argument, call.start_byte)
        if value is not None:
            out[name] = value
    return out


#: a launch configuration's first two operands -> the builtins they set
_LAUNCH_OPERANDS = ("gridDim", "blockDim")


def launch_geometry(
    config: tree_sitter.Node,
    func: tree_sitter.Node,
    before: int,
    outer: dict[str, sympy.Expr] | None = None,
    library: CallSites | None = None,
) -> dict[str, sympy.Expr]:
    """Rule D11: a launch's `<<<grid, block>>>` as host values, `gridDim_x` .. `blockDim_z`:
    a number, `dim3(a, b)`, or a name defined as one (`dim3 grid(n / 256, 1);`, `dim3 b =
    dim3(16, 16);`, `int threads = 256;`); missing axes are 1. Axes without a value are
    left out (the command line's --block/--grid, and the defaults, decide them)."""
    scope = HostScope(func, "cuda", outer, placeholders=True, library=library)
    out: dict[str, sympy.Expr] = {}
    operands = [c for c in config.named_children if c.type != "comment"]
    for prefix, operand in zip(_LAUNCH_OPERANDS, operands, strict=False):
        components = _dim3_components(operand, scope, before)
        if components is None:
            continue
        for axis, component in zip("xyz", [*components, None, None][:3], strict=True):
            value = sympy.Integer(1) if component is None else scope.value(component, before)
            if value is not None:
                out[f"{prefix}_{axis}"] = value
    return out


def _dim3_components(
    node: tree_sitter.Node, scope: HostScope, before: int
) -> list[tree_sitter.Node | None] | None:
    """The axes of a dim3-valued expression (one node for a scalar), following a name to
    its last definition before the launch; None when there are more than three. A name
    whose definitions end in a scalar is its own one axis (valued as any name is: guards,
    placeholders)."""
    first_name: tree_sitter.Node | None = None
    parts: list[tree_sitter.Node | None]
    for _ in range(MAX_DEPTH):
        if node.type == "identifier":
            earlier = [v for start, v in scope.defs.get(node_text(node), []) if start < before]
            if not earlier:
                return _dim3_members(node, scope, before) or [node]
            first_name = first_name or node
            node = earlier[-1]
            continue
        if node.type in ("argument_list", "initializer_list"):
            parts = [c for c in node.named_children if c.type != "comment"]
            return parts if 0 < len(parts) <= 3 else None
        if node.type == "call_expression":
            name, args = call_parts(node)
            if name == "dim3":
                parts = list(args)
                return parts if 0 < len(parts) <= 3 else None
        return [first_name or node]
    return None


def _dim3_members(
    node: tree_sitter.Node, scope: HostScope, before: int
) -> list[tree_sitter.Node | None] | None:
    """`dim3 g; g.x = a; g.y = b;` (rule D16): the axes as the member assignments before
    the launch left them; an axis never assigned keeps dim3's 1. None without any."""
    name = node_text(node)
    axes: list[tree_sitter.Node | None] = []
    for axis in "xyz":
        earlier = [v for start, v in scope.defs.get(f"{name}.{axis}", []) if start < before]
        axes.append(earlier[-1] if earlier else None)
    return axes if any(axes) else None
