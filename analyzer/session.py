"""An analysis session: what one analysis remembers while it runs, and nothing after.

Analysing a folder asks the same questions again and again (a function's parameters, the
names a loop assigns, where a path really lives, the parse of a header copied under two
folders). The answers are kept in the session of the analysis that asked, never in a
module: a new analysis starts empty (files may have changed since the last one), two
analyses never see each other's entries, and no entry point has to remember to empty a
cache.

A module declares what it keeps with a handle (`SessionNodeCache`, `SessionRecentTexts`,
`SessionMemo`), as it would declare a `contextvars.ContextVar`: the declaration is
module-level, its entries live in the current session. With no session current a handle
computes every answer afresh (correct, only slower), so a library call never depends on one.

The session is made current with `with session:` (or `analysis_session()`, which joins
the current one if there is one). Its node caches are scoped to one group of files
(`session.group()`): the trees a group parsed are not asked about after it, and entries
would keep them alive. A session sent to another process arrives empty: each process keeps
its own answers (`roofcast.scheduler`)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Generic, TypeVar

import tree_sitter

_T = TypeVar("_T")


class RecentTexts(Generic[_T]):
    """Values computed from large texts, kept for the texts met last (bounded by their total
    size): benchmark suites keep the same header or source under several folders
    (`prog-cuda/`, `prog-hip/`), analysed one after the other, so a copy's work is reused."""

    def __init__(self, budget: int) -> None:
        self.budget = budget  # characters
        self.size = 0
        self.entries: OrderedDict[Hashable, tuple[int, _T]] = OrderedDict()

    def get(self, key: Hashable, size: int, compute: Callable[[], _T]) -> _T:
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
            return hit[1]
        value = compute()
        if size <= self.budget:
            self.entries[key] = (size, value)
            self.size += size
            while self.size > self.budget:
                self.size -= self.entries.popitem(last=False)[1][0]
        return value


class NodeCache:
    """Values derived from a parse node alone (a function's parameters, the names a loop
    assigns), computed once although counting and host analysis ask again and again.

    An entry keeps its node, which keeps the node's tree alive, so the node id in a key
    cannot be reused by a later tree while the entry exists. Least recently used entries go."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.entries: OrderedDict[tuple, tuple[tree_sitter.Node, object]] = OrderedDict()

    def get(self, node: tree_sitter.Node, compute: Callable[[], _T], extra: Hashable = None) -> _T:
        key = (node.id, node.start_byte, node.end_byte, extra)
        hit = self.entries.get(key)
        if hit is not None:
            self.entries.move_to_end(key)
            return hit[1]  # type: ignore[return-value]
        value = compute()
        self.entries[key] = (node, value)
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return value


class AnalysisSession:
    """The caches of one analysis (a run of `analyze`, `evaluate`, `train`, the hook).

    Session-wide: resolved paths and recent texts (expansions, parses), which groups of
    files share (copies of a file under sibling folders). Per group: node caches."""

    def __init__(self) -> None:
        self._kept: dict[object, object] = {}  # handle -> its store, for the whole session
        self._nodes: dict[SessionNodeCache, NodeCache] = {}  # for the current group
        self._tokens: list[Token[AnalysisSession | None]] = []

    def __enter__(self) -> AnalysisSession:
        self._tokens.append(_CURRENT.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._tokens.pop())

    def __reduce__(self) -> tuple:
        """Pickled (sent to a spawned process): a fresh session; parse trees cannot travel,
        and a process's answers are its own."""
        return (AnalysisSession, ())

    @contextmanager
    def group(self) -> Iterator[None]:
        """One group of files: the node caches start empty and are dropped when it ends
        (the group's trees go with them; nothing after counting reads them)."""
        self._nodes = {}
        try:
            yield
        finally:
            self._nodes = {}

    def store(self, handle: object, make: Callable[[], _T]) -> _T:
        """The session's store for a handle, made on first use."""
        found = self._kept.get(handle)
        if found is None:
            found = self._kept[handle] = make()
        return found  # type: ignore[return-value]

    def node_entries(self) -> int:
        """How many node cache entries the current group holds (0 between groups)."""
        return sum(len(cache.entries) for cache in self._nodes.values())

    def nodes(self, handle: SessionNodeCache) -> NodeCache:
        found = self._nodes.get(handle)
        if found is None:
            found = self._nodes[handle] = NodeCache(handle.size)
        return found


_CURRENT: ContextVar[AnalysisSession | None] = ContextVar("roofcast_session", default=None)


def current_session() -> AnalysisSession | None:
    return _CURRENT.get()


@contextmanager
def analysis_session() -> Iterator[AnalysisSession]:
    """The current session, or a new one made current for the block: an
    analysis run inside another's session (the LLM's few-shot examples, evaluation's
    targets) shares its answers."""
    current = _CURRENT.get()
    if current is not None:
        yield current
        return
    with AnalysisSession() as session:
        yield session


class SessionNodeCache:
    """A `NodeCache` per session and group of files, declared once by the module that uses it."""

    __slots__ = ("size",)

    def __init__(self, size: int = 4096) -> None:
        self.size = size

    def get(self, node: tree_sitter.Node, compute: Callable[[], _T], extra: Hashable = None) -> _T:
        session = _CURRENT.get()
        if session is None:
            return compute()
        cache = session._nodes.get(self)  # inlined `session.nodes`: a hot path
        if cache is None:
            cache = session.nodes(self)
        return cache.get(node, compute, extra)


class SessionRecentTexts(Generic[_T]):
    """A `RecentTexts` per session, declared once by the module that uses it."""

    __slots__ = ("budget",)

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def get(self, key: Hashable, size: int, compute: Callable[[], _T]) -> _T:
        session = _CURRENT.get()
        if session is None:
            return compute()
        recent: RecentTexts[_T] = session.store(self, lambda: RecentTexts(self.budget))
        return recent.get(key, size, compute)


_K = TypeVar("_K", bound=Hashable)


class SessionMemo(Generic[_K, _T]):
    """key -> value, computed once per session: answers that hold while one analysis runs
    but not beyond it (the file system may change between analyses)."""

    __slots__ = ("compute",)

    def __init__(self, compute: Callable[[_K], _T]) -> None:
        self.compute = compute

    def __call__(self, key: _K) -> _T:
        session = _CURRENT.get()
        if session is None:
            return self.compute(key)
        memo: dict[_K, _T] | None = session._kept.get(self)  # type: ignore[assignment]
        if memo is None:
            memo = session.store(self, dict)
        try:
            return memo[key]
        except KeyError:
            value = memo[key] = self.compute(key)
            return value
