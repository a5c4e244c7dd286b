"""Plain call sites of a function (`f(...)`, `f<T>(...)`) over a folder's files, found on demand.

Host bindings ask for the callers of a handful of functions per folder; querying every call
expression of every file up front cost more than the rest of discovery in large host files.
A byte search for the name, then a check of the parse node found there, finds the same calls.
A file searched many times (one of thousands of kernels, each asking for its own callers) has
its words mapped to their offsets once instead: a search per name over the whole file made
the cost of such a file grow with the square of its size.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path

import tree_sitter
from roofcast.analyzer.index import FileIndex
from roofcast.analyzer.parsing import captures, language

CallSite = tuple[tree_sitter.Node, str]  # (call_expression node, grammar)

#: byte searches of one file before its words are mapped (mapping costs many searches)
SEARCHES_BEFORE_MAP = 64


class CallSites:
    """Function name -> its plain call sites over the given files, in file then source order."""

    def __init__(
        self,
        indices: Sequence[FileIndex],
        host_files: Sequence[Path] = (),
        load: Callable[[Path], FileIndex | None] | None = None,
    ) -> None:
        self.indices = list(indices)
        #: rule D12: the folder's files without kernel markers (not parsed for discovery),
        #: searched, and parsed by `load`, only for a name no parsed file calls
        self.host_files = list(host_files) if load is not None else []
        self.load = load
        self.host_bytes: dict[Path, bytes] = {}
        self.host_indices: dict[Path, FileIndex | None] = {}
        #: names whose value (a function's address) is stored or passed, not only called
        self.referenced: set[str] = set()
        self._pointer_calls: list[CallSite] | None = None
        self.found: dict[str, list[CallSite]] = {}
        self.searches = [0] * len(self.indices)  # per file: byte searches so far
        self.words: list[dict[bytes, list[int]] | None] = [None] * len(self.indices)

    def get(self, name: str, default: list[CallSite] | None = None) -> list[CallSite]:
        if name not in self.found:
            self.found[name] = self._search(name)
        return self.found[name] or (default if default is not None else [])

    def _search(self, name: str) -> list[CallSite]:
        if not name.isidentifier():
            return []
        needle = name.encode()
        out: list[CallSite] = []
        for i, index in enumerate(self.indices):
            root = index.tree.root_node
            base = root.start_byte  # the source starts at the root's first token, not byte 0
            for start in self._offsets(i, needle):
                node = root.descendant_for_byte_range(base + start, base + start + len(needle))
                call = _call_of(node) if node is not None else None
                if call is not None:
                    out.append((call, index.grammar))
                elif node is not None and _stored(node):
                    self.referenced.add(name)
        if not out and name != "main":  # nothing calls `main`: no host file is parsed for it
            out = self._search_host_files(needle)
        return out

    def pointer_calls(self, name: str, arity: int) -> list[CallSite]:
        """Rule D17: calls through a table of function pointers (`table[j](a, b)`, `(*f)(a,
        b)`) with `arity` arguments, in file then source order, for a function no file calls
        by name but whose address is stored or passed (`{f, g}`, `p = f`). Empty otherwise."""
        if self.get(name) or name not in self.referenced:
            return []
        if self._pointer_calls is None:
            self._pointer_calls = [
                (call, index.grammar)
                for index in self.indices
                for call in captures(_pointer_calls_query(index.grammar), index.tree.root_node).get(
                    "c", []
                )
            ]
        out = []
        for call, grammar in self._pointer_calls:
            args = call.child_by_field_name("arguments")
            if args is not None and len(args.named_children) == arity:
                out.append((call, grammar))
        return out

    def _search_host_files(self, needle: bytes) -> list[CallSite]:
        """Calls in the host-only files whose bytes name `needle`, in listing order; each such
        file is parsed once, when first named. Whether a file is searched depends only on
        the name, so the answer is the same whatever was asked before."""
        out: list[CallSite] = []
        for path in self.host_files:
            if path not in self.host_bytes:
                try:
                    self.host_bytes[path] = path.read_bytes()
                except OSError:
                    self.host_bytes[path] = b""
            if next(_whole_words(self.host_bytes[path], needle), None) is None:
                continue
            if path not in self.host_indices and self.load is not None:
                self.host_indices[path] = self.load(path)
            index = self.host_indices.get(path)
            if index is None:
                continue
            root = index.tree.root_node
            base = root.start_byte
            for start in _whole_words(index.source, needle):
                node = root.descendant_for_byte_range(base + start, base + start + len(needle))
                call = _call_of(node) if node is not None else None
                if call is not None:
                    out.append((call, index.grammar))
        return out

    def _offsets(self, i: int, needle: bytes) -> Iterable[int]:
        """Offsets of `needle` as a whole word in file i's source, in source order."""
        mappable = needle.isascii()  # the map has ASCII names, as `_WORD_BYTES` has
        words = self.words[i]
        if words is None and mappable and self.searches[i] >= SEARCHES_BEFORE_MAP:
            words = self.words[i] = _word_offsets(self.indices[i].source)
        if words is not None and mappable:
            return words.get(needle, ())
        self.searches[i] += 1
        source = self.indices[i].source
        if needle not in source:  # most files of a folder never mention the name
            return ()
        return _whole_words(source, needle)


#: a whole word that can be a name: no word byte before it, all of them after it
_NAME = re.compile(rb"(?<![A-Za-z0-9_$])[A-Za-z_$][A-Za-z0-9_$]*")


def _word_offsets(source: bytes) -> dict[bytes, list[int]]:
    """Each name in `source` -> its offsets: what `_whole_words` finds for an ASCII name."""
    words: dict[bytes, list[int]] = {}
    for match in _NAME.finditer(source):
        word = match.group()
        if word in words:
            words[word].append(match.start())
        else:
            words[word] = [match.start()]
    return words


_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$")


def _whole_words(source: bytes, needle: bytes) -> Iterator[int]:
    """Offsets of `needle` where no identifier character touches it: a byte search (fast in
    C) visits only the name's occurrences, where a regex with a look-behind tried every byte."""
    size = len(needle)
    at = source.find(needle)
    while at >= 0:
        end = at + size
        if (at == 0 or source[at - 1] not in _WORD_BYTES) and (
            end == len(source) or source[end] not in _WORD_BYTES
        ):
            yield at
            at = source.find(needle, end)
        else:
            at = source.find(needle, at + 1)


def _call_of(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The call_expression that `node` (an identifier) names as its function, if any; a
    qualified name's last part names it too (`ns::Decoder::decode(...)`, rule D30)."""
    if node.type != "identifier":
        return None
    callee = node
    parent = node.parent
    while parent is not None and parent.type == "qualified_identifier":
        name = parent.child_by_field_name("name")
        if name is None or name.id != callee.id:
            return None
        callee, parent = parent, parent.parent
    if parent is not None and parent.type == "template_function":
        name = parent.child_by_field_name("name")
        if name is None or name.id != node.id:
            return None
        callee, parent = parent, parent.parent
    if parent is None or parent.type != "call_expression":
        return None
    function = parent.child_by_field_name("function")
    return parent if function is not None and function.id == callee.id else None


#: where a function's name is its address, stored or passed rather than called
_STORING = frozenset(
    {"initializer_list", "init_declarator", "assignment_expression", "argument_list"}
)


def _stored(node: tree_sitter.Node) -> bool:
    parent = node.parent
    return node.type == "identifier" and parent is not None and parent.type in _STORING


@cache
def _pointer_calls_query(grammar: str) -> tree_sitter.Query:
    return tree_sitter.Query(
        language(grammar),
        """
(call_expression function: (subscript_expression)) @c
(call_expression function: (parenthesized_expression (pointer_expression))) @c
""",
    )
