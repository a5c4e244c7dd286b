"""A small C/CUDA type model: enough to know an operation's precision and an element's size."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

#: base name -> (kind, scalar size in bytes, lanes)
_SCALARS: dict[str, tuple[str, int, int]] = {
    "float": ("sp", 4, 1),
    "double": ("dp", 8, 1),
    "half": ("hp", 2, 1),
    "__half": ("hp", 2, 1),
    "__nv_bfloat16": ("hp", 2, 1),
    "nv_bfloat16": ("hp", 2, 1),
    "bfloat16": ("hp", 2, 1),
    "__half2": ("hp", 2, 2),
    "half2": ("hp", 2, 2),
    "__nv_bfloat162": ("hp", 2, 2),
    "_Float16": ("hp", 2, 1),
    "int": ("int", 4, 1),
    "unsigned": ("int", 4, 1),
    "signed": ("int", 4, 1),
    "uint": ("int", 4, 1),
    "int32_t": ("int", 4, 1),
    "uint32_t": ("int", 4, 1),
    "unsigned int": ("int", 4, 1),
    "long": ("int", 8, 1),
    "long long": ("int", 8, 1),
    "unsigned long": ("int", 8, 1),
    "unsigned long long": ("int", 8, 1),
    "long int": ("int", 8, 1),
    "size_t": ("int", 8, 1),
    "int64_t": ("int", 8, 1),
    "uint64_t": ("int", 8, 1),
    "ptrdiff_t": ("int", 8, 1),
    "long long int": ("int", 8, 1),
    "unsigned long long int": ("int", 8, 1),
    "ulong": ("int", 8, 1),
    "short": ("int", 2, 1),
    "unsigned short": ("int", 2, 1),
    "int16_t": ("int", 2, 1),
    "uint16_t": ("int", 2, 1),
    "ushort": ("int", 2, 1),
    "char": ("int", 1, 1),
    "unsigned char": ("int", 1, 1),
    "signed char": ("int", 1, 1),
    "int8_t": ("int", 1, 1),
    "uint8_t": ("int", 1, 1),
    "uchar": ("int", 1, 1),
    "bool": ("bool", 1, 1),
    "void": ("void", 1, 1),
    "auto": ("unknown", 4, 1),
}
_VECTOR = re.compile(r"^(u?char|u?short|u?int|u?long|ulonglong|longlong|float|double|half)([1-4])$")
_VECTOR_BASE = {
    "char": ("int", 1),
    "uchar": ("int", 1),
    "short": ("int", 2),
    "ushort": ("int", 2),
    "int": ("int", 4),
    "uint": ("int", 4),
    "long": ("int", 8),
    "ulong": ("int", 8),
    "longlong": ("int", 8),
    "ulonglong": ("int", 8),
    "float": ("sp", 4),
    "double": ("dp", 8),
    "half": ("hp", 2),
}
_DROP = re.compile(
    r"\b(const|volatile|__restrict__|__restrict|restrict|static|extern|inline|__shared__|"
    r"__constant__|__device__|__managed__|register|constexpr|struct|class|typename|"
    r"__forceinline__|__host__|mutable|thread_local|__align__\(\d+\))\b"
)


_MEMBER_TYPE = re.compile(r"^([A-Za-z_][\w:]*?)\s*(?:<(.*)>)?\s*::\s*([A-Za-z_]\w*)$")


def split_args(text: str) -> list[str]:
    """Template arguments split at top-level commas: `A<B, C>, D` -> ['A<B, C>', 'D']."""
    args, depth, start = [], 0, 0
    for pos, char in enumerate(text):
        depth += (char in "<([") - (char in ">)]")
        if char == "," and depth == 0:
            args.append(text[start:pos].strip())
            start = pos + 1
    args.append(text[start:].strip())
    return args


@dataclass(frozen=True)
class CType:
    """kind: hp/sp/dp (floating), int, bool, void, struct, unknown. `size` is one lane's bytes;
    `pointer` counts levels of indirection (arrays count as one)."""

    kind: str
    size: int
    lanes: int = 1
    pointer: int = 0
    name: str = ""

    @property
    def is_float(self) -> bool:
        return self.pointer == 0 and self.kind in ("hp", "sp", "dp")

    @property
    def is_int(self) -> bool:
        return self.pointer == 0 and self.kind in ("int", "bool")

    @property
    def element_bytes(self) -> int:
        return self.size * self.lanes

    def deref(self) -> CType:
        return _with_pointer(self, max(0, self.pointer - 1))

    def address_of(self) -> CType:
        return _with_pointer(self, self.pointer + 1)


@lru_cache(maxsize=4096)
def _with_pointer(t: CType, pointer: int) -> CType:
    """Types are immutable and few: share them rather than copy one per expression."""
    return t if t.pointer == pointer else replace(t, pointer=pointer)


UNKNOWN = CType("unknown", 4)
INT = CType("int", 4)
LONG = CType("int", 8)
BOOL = CType("bool", 1)
FLOAT = CType("sp", 4)
DOUBLE = CType("dp", 8)
HALF = CType("hp", 2)

_RANK = {"bool": 0, "int": 1, "unknown": 1, "struct": 1, "void": 1, "hp": 2, "sp": 3, "dp": 4}


def promote(a: CType, b: CType) -> CType:
    """The usual arithmetic conversions, reduced to what decides precision and size."""
    if a.pointer:
        return a
    if b.pointer:
        return b
    if a.kind == b.kind:
        return a if a.element_bytes >= b.element_bytes else b
    if a.kind == "unknown" and b.kind in ("hp", "sp", "dp"):
        return b
    if b.kind == "unknown" and a.kind in ("hp", "sp", "dp"):
        return a
    winner = a if _RANK[a.kind] >= _RANK[b.kind] else b
    if winner.kind == "bool":
        return INT
    return winner


class TypeResolver:
    """Parses type text with typedefs, struct layouts and bound template parameters."""

    def __init__(
        self,
        typedefs: dict[str, str],
        structs: dict[str, list[tuple[str, str, str]]],
        template_types: dict[str, str],
    ) -> None:
        self.typedefs = typedefs
        self.structs = structs
        self.template_types = template_types
        self._cache: dict[str, CType] = {}

    def clear_cache(self) -> None:
        """Forget parsed types (after a template parameter is bound anew, rule M10)."""
        self._cache.clear()

    def parse(self, text: str, depth: int = 0) -> CType:
        key = text
        if key in self._cache:
            return self._cache[key]
        stars = text.count("*") + text.count("[")
        base = _DROP.sub(" ", text.replace("*", " ").replace("&", " "))
        base = re.sub(r"\[[^\]]*\]", " ", base)
        base = " ".join(base.split())
        base = re.sub(r"^(std|thrust|sycl|cuda)::", "", base)
        result = self._base(base, depth)
        result = replace(result, pointer=result.pointer + stars)
        self._cache[key] = result
        return result

    def _base(self, base: str, depth: int) -> CType:
        if base in _SCALARS:
            kind, size, lanes = _SCALARS[base]
            return CType(kind, size, lanes, name=base)
        if base.startswith("unsigned ") or base.startswith("signed "):
            return CType("int", 4 if "long" not in base else 8, name=base)
        match = _VECTOR.match(base)
        if match:
            kind, size = _VECTOR_BASE[match.group(1)]
            return CType(kind, size, int(match.group(2)), name=base)
        if base in self.template_types and depth < 8 and self.template_types[base] != base:
            return self.parse(self.template_types[base], depth + 1)
        # `typedef struct {..} T;` names no struct to follow: T's own layout is indexed
        if base in self.typedefs and depth < 8 and self.typedefs[base] not in (base, "struct"):
            return self.parse(self.typedefs[base], depth + 1)
        if base in self.structs:
            return CType("struct", max(1, self.struct_size(base, depth)), name=base)
        if "::" in base and depth < 8:
            member = self.member_type(base)
            if member is not None:
                return self.parse(member, depth + 1)
        if base.startswith("complex") or "Complex" in base:
            return CType(
                "sp" if "double" not in base else "dp", 4 if "double" not in base else 8, 2
            )
        return CType("unknown", 4, name=base)

    def member_type(self, text: str) -> str | None:
        """`vec4<T>::Type` -> the type text the class's typedef names for these arguments
        (T bound first): a specialisation's own typedef, else the primary template's with
        its parameters replaced by the arguments. None when no class typedef matches."""
        match = _MEMBER_TYPE.match(text)
        if match is None:
            return None
        owner, args_text, alias = match.group(1), match.group(2), match.group(3)
        args = [self._bound(a) for a in split_args(args_text)] if args_text else []
        joined = "".join(f"{owner}<{','.join(args)}>".split()) if args_text else owner
        found = self.typedefs.get(f"{joined}::{alias}")
        if found is None:
            found = self.typedefs.get(f"{owner}::{alias}")
            if found is None:
                return None
            for i, arg in enumerate(args):
                found = found.replace(f"${i}", arg)
        return found

    def _bound(self, arg: str) -> str:
        arg = " ".join(arg.split())
        return self.template_types.get(arg, arg)

    def struct_size(self, name: str, depth: int = 0) -> int:
        total = 0
        for type_text, _field, size in self.structs.get(name, []):
            field_type = self.parse(type_text, depth + 1) if depth < 8 else UNKNOWN
            count = int(size) if size.isdigit() else 1
            total += (8 if field_type.pointer else field_type.element_bytes) * count
        return total

    def member(self, struct: CType, field: str) -> CType:
        """Type of `s.field` / `v.x`."""
        if struct.lanes > 1 and field in ("x", "y", "z", "w"):
            return CType(struct.kind, struct.size, name=struct.name)
        for type_text, name, size in self.structs.get(struct.name, []):
            if name == field:
                t = self.parse(type_text)
                return t.address_of() if size else t
        return UNKNOWN
