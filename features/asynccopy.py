"""Recognisers for the Ampere-era data paths: asynchronous global->shared copies
(`cuda::memcpy_async`, `cooperative_groups::memcpy_async`, `__pipeline_memcpy_async`, PTX
`cp.async`) and warp matrix (WMMA) fragments. Text in, facts out: the counter decides what
they cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter

ASYNC_COPIES = frozenset({"memcpy_async", "__pipeline_memcpy_async"})
WMMA_CALLS = frozenset({"mma_sync", "bmma_sync", "load_matrix_sync", "store_matrix_sync"})
#: lanes of a warp: a WMMA operation's work and data are spread over them
WARP = 32

_CP_ASYNC = re.compile(
    r"cp\.async\.(?:ca|cg)\.shared(?:::cta)?\.global[\w.:]*\s*"
    r"\[\s*%(\d+)\s*\]\s*,\s*\[\s*%(\d+)\s*\]\s*,\s*(\d+|%\d+)"
)
_FRAGMENT = re.compile(
    r"fragment\s*<\s*(?:[\w:]*::)?(matrix_a|matrix_b|accumulator)\s*,([^,<>]+),([^,<>]+),"
    r"([^,<>]+)(?:,([^,<>]+))?"
)
#: element bytes of a fragment's type argument (precision::tf32 is stored as float)
_ELEMENT_BYTES = {
    "half": 2.0,
    "__half": 2.0,
    "__nv_bfloat16": 2.0,
    "bf16": 2.0,
    "float": 4.0,
    "tf32": 4.0,
    "double": 8.0,
    "int": 4.0,
    "signed char": 1.0,
    "unsigned char": 1.0,
    "s8": 1.0,
    "u8": 1.0,
    "s4": 0.5,
    "u4": 0.5,
    "b1": 0.125,
}


@dataclass(frozen=True)
class CpAsync:
    """One `cp.async` instruction: operand numbers of its shared destination and global
    source, and its size (a number, or the operand number holding it)."""

    dst_operand: int
    src_operand: int
    size: int | None
    size_operand: int | None


def cp_async(asm_text: str) -> list[CpAsync]:
    """Every `cp.async.{ca,cg}.shared.global [%d], [%s], size` in an asm string."""
    found = []
    for m in _CP_ASYNC.finditer(asm_text):
        size = m.group(3)
        found.append(
            CpAsync(
                int(m.group(1)),
                int(m.group(2)),
                int(size) if size.isdigit() else None,
                int(size[1:]) if size.startswith("%") else None,
            )
        )
    return found


@dataclass(frozen=True)
class Fragment:
    """`wmma::fragment<role, M, N, K, T, ...>`: the shape texts and the element bytes."""

    role: str  # matrix_a | matrix_b | accumulator
    m: str
    n: str
    k: str
    element_bytes: float | None

    @property
    def rows_cols(self) -> tuple[str, str]:
        """The matrix this fragment holds: A is M x K, B is K x N, C/D is M x N."""
        return {"matrix_a": (self.m, self.k), "matrix_b": (self.k, self.n)}.get(
            self.role, (self.m, self.n)
        )


def fragment(type_text: str) -> Fragment | None:
    """The WMMA fragment a type names, or None."""
    m = _FRAGMENT.search(type_text)
    if m is None:
        return None
    element = (m.group(5) or "").strip().split("::")[-1].strip()
    return Fragment(
        m.group(1),
        m.group(2).strip(),
        m.group(3).strip(),
        m.group(4).strip(),
        _ELEMENT_BYTES.get(element),
    )


def asm_operand_values(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The expressions an inline-asm statement's output and input operands name, in order:
    what is evaluated around the PTX, which itself is not read."""
    values: list[tree_sitter.Node] = []
    for part in node.named_children:
        if part.type in ("gnu_asm_output_operand_list", "gnu_asm_input_operand_list"):
            for operand in part.named_children:
                value = operand.child_by_field_name("value") or (
                    operand.named_children[-1] if operand.named_children else None
                )
                if value is not None:
                    values.append(value)
    return values
