"""Symbols and small sympy helpers shared by counting and resolution."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any, cast

import sympy

#: CUDA built-ins -> symbol names (`blockDim.x` -> `blockDim_x`)
BUILTIN_VECTORS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
THREAD_POSITION_PREFIXES = ("threadIdx_", "blockIdx_")
#: every launch symbol: a thread's position and the launch's extents
LAUNCH_PREFIXES = (*THREAD_POSITION_PREFIXES, "blockDim_", "gridDim_")


@cache
def symbol(name: str) -> sympy.Symbol:
    """Problem sizes, launch dimensions and trip counts are positive integers."""
    return sympy.Symbol(name, integer=True, positive=True)


@cache
def position_symbol(name: str) -> sympy.Symbol:
    """threadIdx / blockIdx can be 0."""
    return sympy.Symbol(name, integer=True, nonnegative=True)


def builtin(base: str, member: str) -> sympy.Symbol:
    name = f"{base}_{member}"
    return position_symbol(name) if base in ("threadIdx", "blockIdx") else symbol(name)


@lru_cache(maxsize=8192, typed=True)
def free_symbols(expr: sympy.Basic) -> frozenset[sympy.Symbol]:
    """`expr.free_symbols`, kept: sympy walks the whole expression again at each ask, and
    resolution and the traffic model ask it of the same counts, indices and trip counts
    (an access's repeats are its nest's) again and again."""
    return frozenset(expr.free_symbols)


@lru_cache(maxsize=4096, typed=True)
def zero_thread_position(expr: sympy.Expr) -> sympy.Expr:
    """threadIdx/blockIdx -> 0: a loop's per-thread trip count averaged over threads. Kept:
    a kernel asks it of the same trip counts again and again, and `subs` is costly."""
    subs = {s: 0 for s in expr.free_symbols if s.name.startswith(THREAD_POSITION_PREFIXES)}
    return expr.subs(subs) if subs else expr


def on_thread_position(expr: sympy.Expr) -> bool:
    """Whether an expression depends on threadIdx/blockIdx."""
    return any(s.name.startswith(THREAD_POSITION_PREFIXES) for s in free_symbols(expr))


def mean_thread_position(expr: sympy.Expr) -> sympy.Expr:
    """threadIdx/blockIdx -> their means over the launch ((blockDim - 1)/2, (gridDim - 1)/2):
    rule S27's per-thread average of a loop bound that grows with the thread."""
    subs = {}
    for s in free_symbols(expr):
        base, _, axis = s.name.partition("_")
        if s.name.startswith(THREAD_POSITION_PREFIXES) and axis in ("x", "y", "z"):
            extent = "blockDim" if base == "threadIdx" else "gridDim"
            subs[s] = (symbol(f"{extent}_{axis}") - 1) / 2
    return expr.subs(subs) if subs else expr


def unknown_trip_symbol(line: int, ordinal: int = 1) -> sympy.Symbol:
    """The trip count of the `ordinal`-th data-dependent loop starting on `line`."""
    return symbol(f"trip_L{line}" if ordinal == 1 else f"trip_L{line}_{ordinal}")


#: classes rebuilt from their arguments without re-running sympy's simplification
_REBUILT: dict[str, Any] = {
    cls.__name__: cls
    for cls in (
        sympy.Add,
        sympy.Mul,
        sympy.Pow,
        sympy.ceiling,
        sympy.floor,
        sympy.Max,
        sympy.Min,
        sympy.log,
        sympy.Abs,
    )
}


def expr_to_tuple(expr: sympy.Basic) -> object:
    """An expression as nested tuples of plain values: cheap to pickle, and `expr_from_tuple`
    rebuilds it without sympy's evaluation (pickle's default rebuild re-simplifies every node,
    which made reading worker results back the slowest part of a parallel analysis)."""
    if expr.is_Integer:
        return int(expr)
    if expr.is_Rational:
        return ("Q", int(expr.p), int(expr.q))
    if expr.is_Float:
        return ("F", expr._mpf_, expr._prec)
    if expr.is_Symbol and type(expr) is sympy.Symbol:
        return _encoded_symbol(expr)
    name = type(expr).__name__
    if _REBUILT.get(name) is type(expr):
        return (name, *(expr_to_tuple(arg) for arg in expr.args))
    return ("P", expr)  # anything else: pickled as sympy does it


def expr_from_tuple(data: object) -> sympy.Basic:
    if isinstance(data, int):
        return sympy.Integer(data)
    kind, *rest = cast("tuple[Any, ...]", data)
    if kind == "Q":
        return sympy.Rational(rest[0], rest[1])
    if kind == "F":
        return sympy.Float._new(rest[0], rest[1])
    if kind == "S":
        return _decoded_symbol(rest[0], rest[1])
    if kind == "P":
        return rest[0]
    cls = _REBUILT[kind]
    args = [expr_from_tuple(arg) for arg in rest]
    if cls in (sympy.Add, sympy.Mul):
        return cls._from_args(args)
    return cls(*args, evaluate=False)


@cache
def _encoded_symbol(symbol: sympy.Symbol) -> tuple[str, str, tuple[tuple[str, bool], ...]]:
    """A symbol's name and assumptions: a few dozen symbols recur in every kernel's counts."""
    return ("S", symbol.name, tuple(sorted(symbol.assumptions0.items())))


@cache
def _decoded_symbol(name: str, assumptions: tuple[tuple[str, bool], ...]) -> sympy.Symbol:
    return sympy.Symbol(name, **dict(assumptions))
