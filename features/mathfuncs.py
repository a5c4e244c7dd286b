"""What CUDA / C math and intrinsic calls count as, in the categories of docs/counting.md.

The catalogue is data (`data/intrinsics.toml`, versioned, each table citing its sources), so
that adding a name or changing a cost is an edit of one reviewed file, not of the counter.
This module reads it once and exposes the lookups the counter uses.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from importlib import resources
from typing import Any

from roofcast.gpu_specs.opclasses import PRECISIONS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: A precision, or None: the call takes its widest floating argument's precision.
Precision = str | None

#: What a prefix call's type is besides a precision (see `prefix_result`).
PREFIX_RESULTS = frozenset({"first", "named", "unknown", *PRECISIONS})


class CatalogueError(ValueError):
    """The intrinsics file is malformed: a packaging or editing mistake, named in the message."""


def _precision(value: str, where: str) -> Precision:
    if value == "arg":
        return None
    if value not in PRECISIONS:
        raise CatalogueError(
            f"intrinsics.toml: {where}: precision '{value}' is not one of arg, hp, sp, dp"
        )
    return value


def _names(table: Mapping[str, Any], where: str) -> frozenset[str]:
    names = table.get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise CatalogueError(f"intrinsics.toml: [{where}] needs a list of names")
    return frozenset(names)


def _costs(table: Mapping[str, Any], where: str) -> dict[str, dict[str, int]]:
    """kind -> precision -> FLOPs per call; every kind must give every precision."""
    out: dict[str, dict[str, int]] = {}
    for kind, by_precision in table.items():
        if not isinstance(by_precision, dict) or set(by_precision) != set(PRECISIONS):
            raise CatalogueError(f"{where}: {kind} needs a cost for each of hp, sp, dp")
        out[kind] = {p: int(by_precision[p]) for p in ("hp", "sp", "dp")}
    return out


class Catalogue:
    """The parsed intrinsics file: each table of it as the lookup the counter wants."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.version = int(data["version"])
        self.sources = {s["id"]: s for s in data.get("sources", [])}
        #: kind -> precision -> FLOPs per call (the order of the file: report columns follow it)
        self.special_costs = _costs(data["special_costs"]["flops"], "[special_costs.flops]")
        #: name -> (special kind, forced precision or None = the argument's precision)
        self.special: dict[str, tuple[str, Precision]] = {}
        for kind, table in data["special"].items():
            if kind not in self.special_costs:
                raise CatalogueError(f"intrinsics.toml: [special.{kind}] has no cost")
            for key in ("arg", *PRECISIONS):
                for name in table.get(key, []):
                    self.special[name] = (kind, _precision(key, f"[special.{kind}]"))
        #: fused multiply-add: name -> (forced precision or None, lanes); 2 FLOPs per lane
        self.fma = self._lanes(data["fma"]["names"], "fma")
        #: one-FLOP intrinsics: name -> (precision, lanes)
        self.basic: dict[str, tuple[str, int]] = {}
        for name, (precision, lanes) in self._lanes(data["basic"]["names"], "basic").items():
            if precision is None:
                raise CatalogueError(f"intrinsics.toml: [basic] {name} needs a precision")
            self.basic[name] = (precision, lanes)
        self.int_intrinsics = _names(data["int"], "int")
        self.free = _names(data["free"], "free")
        self.minmax = _names(data["minmax"], "minmax")
        self.barriers = _names(data["barriers"], "barriers")
        self.loads = _names(data["loads"], "loads")
        self.stores = _names(data["stores"], "stores")
        atomics = data["atomics"]
        self.atomics = re.compile(
            r"^(atomic("
            + "|".join(map(re.escape, atomics["operations"]))
            + r")(_system|_block)?|"
            + "|".join(re.escape(p) + r"\w*" for p in atomics["prefixes"])
            + "|"
            + "|".join(map(re.escape, atomics["names"]))
            + ")$"
        )
        self.prefix_results: dict[str, str] = dict(data["prefixes"]["result"])
        bad = {p: r for p, r in self.prefix_results.items() if r not in PREFIX_RESULTS}
        if bad:
            raise CatalogueError(f"intrinsics.toml: [prefixes.result] unknown results {bad}")
        self.prefixes = tuple(self.prefix_results)
        self._check_sources(data)

    @staticmethod
    def _lanes(table: Mapping[str, Any], where: str) -> dict[str, tuple[Precision, int]]:
        return {
            name: (_precision(entry["precision"], f"[{where}] {name}"), int(entry["lanes"]))
            for name, entry in table.items()
        }

    def _check_sources(self, data: Mapping[str, Any]) -> None:
        """Every table names its sources, and only sources the file lists."""
        tables = [(k, v) for k, v in data.items() if isinstance(v, dict) and k != "special"]
        tables += [(f"special.{k}", v) for k, v in data["special"].items()]
        for where, table in tables:
            cited = table.get("source")
            if not cited or any(s not in self.sources for s in cited):
                raise CatalogueError(f"intrinsics.toml: [{where}] cites no listed source")


def load_catalogue(text: str) -> Catalogue:
    """A catalogue from the text of an intrinsics file (the shipped one: `CATALOGUE`)."""
    return Catalogue(tomllib.loads(text))


CATALOGUE = load_catalogue(
    resources.files("roofcast.features").joinpath("data", "intrinsics.toml").read_text("utf-8")
)

SPECIAL = CATALOGUE.special
SPECIAL_COSTS = CATALOGUE.special_costs
FMA = CATALOGUE.fma
BASIC = CATALOGUE.basic
ATOMICS = CATALOGUE.atomics
BARRIERS = CATALOGUE.barriers
LOADS = CATALOGUE.loads
STORES = CATALOGUE.stores
INT_INTRINSICS = CATALOGUE.int_intrinsics
FREE = CATALOGUE.free
MINMAX = CATALOGUE.minmax


def prefix_result(name: str) -> tuple[str, str] | None:
    """(prefix, result) of the longest catalogue prefix `name` starts with, or None: the
    call does no arithmetic and its type is the result (see [prefixes] in the file)."""
    if not name.startswith(CATALOGUE.prefixes):
        return None
    prefix = max((p for p in CATALOGUE.prefixes if name.startswith(p)), key=len)
    return prefix, CATALOGUE.prefix_results[prefix]


def special_costs(
    overrides: Mapping[str, Mapping[str, int]] | None = None,
) -> dict[str, dict[str, int]]:
    """The catalogue's special-function costs with a GPU file's `[special_flops]` entries over
    them (kind -> precision -> FLOPs); a kind or precision the catalogue lacks is an error."""
    costs = {kind: dict(by_precision) for kind, by_precision in SPECIAL_COSTS.items()}
    for kind, by_precision in (overrides or {}).items():
        if kind not in costs:
            raise CatalogueError(
                f"special_flops: unknown kind '{kind}' (known: {', '.join(costs)})"
            )
        for precision, flops in by_precision.items():
            if precision not in costs[kind]:
                raise CatalogueError(f"special_flops: {kind}.{precision} is not hp, sp or dp")
            costs[kind][precision] = int(flops)
    return costs
