"""Symbols and small sympy helpers shared by counting and resolution."""

from __future__ import annotations

from functools import cache

import sympy

#: CUDA built-ins -> symbol names (`blockDim.x` -> `blockDim_x`)
BUILTIN_VECTORS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
THREAD_POSITION_PREFIXES = ("threadIdx_", "blockIdx_")


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


def zero_thread_position(expr: sympy.Expr) -> sympy.Expr:
    """threadIdx/blockIdx -> 0: a loop's per-thread trip count averaged over threads."""
    subs = {s: 0 for s in expr.free_symbols if s.name.startswith(THREAD_POSITION_PREFIXES)}
    return expr.subs(subs) if subs else expr


def unknown_trip_symbol(line: int) -> sympy.Symbol:
    return symbol(f"trip_L{line}")
