"""The block scopes a kernel's walk sees, innermost last, with the names visible from the
innermost kept in one dict: a name is found by one probe, not one per enclosing block (every
block opens a scope, most of them empty, and names are looked up at each operand)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

_V = TypeVar("_V")


class Scopes(Generic[_V]):
    """A stack of scopes (name -> value; a value is never None)."""

    __slots__ = ("_frames", "_undo", "visible")

    def __init__(self, scopes: Iterable[dict[str, _V]] | None = None) -> None:
        """`scopes`, outermost first (their dicts then belong to this stack); by default one
        empty scope."""
        self._frames: list[dict[str, _V]] = []
        #: per scope, (name, the value it hid or None) for each name it bound, in order
        self._undo: list[list[tuple[str, _V | None]]] = []
        #: name -> its innermost binding: read it (one probe finds a name), never write it
        self.visible: dict[str, _V] = {}
        for scope in scopes if scopes is not None else [{}]:
            self.push(scope)

    def push(self, scope: dict[str, _V] | None = None) -> None:
        """Open a scope (empty, or holding `scope`'s names, which then belongs to it)."""
        scope = {} if scope is None else scope
        undo: list[tuple[str, _V | None]] = []
        visible = self.visible
        for name, value in scope.items():
            undo.append((name, visible.get(name)))
            visible[name] = value
        self._frames.append(scope)
        self._undo.append(undo)

    def pop(self) -> None:
        """Close the innermost scope: the names it hid are visible again."""
        self._frames.pop()
        visible = self.visible
        for name, hidden in reversed(self._undo.pop()):
            if hidden is None:
                del visible[name]
            else:
                visible[name] = hidden

    def close_to(self, depth: int) -> None:
        """Close scopes until `depth` are open."""
        while len(self._frames) > depth:
            self.pop()

    def declare(self, name: str, value: _V) -> None:
        """Bind `name` in the innermost scope."""
        self._undo[-1].append((name, self.visible.get(name)))
        self._frames[-1][name] = value
        self.visible[name] = value

    def get(self, name: str) -> _V | None:
        """The innermost binding of `name`, or None."""
        return self.visible.get(name)

    @property
    def outermost(self) -> dict[str, _V]:
        """The first scope (a kernel's parameters)."""
        return self._frames[0]

    def __len__(self) -> int:
        return len(self._frames)
