"""Kernel names as profilers print them: short CUDA names from demangled signatures, and
OpenMP offload entries `__omp_offloading_<device>_<file>_<function>_l<line>` decoded into the
enclosing function (demangled with c++filt when it is installed) and the pragma's line.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache

_OMP_ENTRY = re.compile(
    r"^__omp_offloading_(?P<device>[0-9a-fA-F]+)_(?P<file>[0-9a-fA-F]+)_(?P<function>.+)"
    r"_l(?P<line>\d+)(?:_\d+)?$"
)


@dataclass(frozen=True)
class OmpEntry:
    """An OpenMP offload kernel: enclosing function (demangled if possible) and pragma line."""

    function: str
    mangled_function: str
    line: int
    device_id: str
    file_id: str


def parse_omp_entry(name: str) -> OmpEntry | None:
    """Decode an offload entry name; None for anything else (a CUDA kernel)."""
    match = _OMP_ENTRY.match(name.strip())
    if not match:
        return None
    mangled = match.group("function")
    return OmpEntry(
        function=demangle(mangled),
        mangled_function=mangled,
        line=int(match.group("line")),
        device_id=match.group("device"),
        file_id=match.group("file"),
    )


@cache
def _cxxfilt() -> str | None:
    return shutil.which("c++filt")


@cache
def demangle(name: str) -> str:
    """Itanium-demangled `name` via c++filt; the name unchanged if it is not mangled or
    c++filt is missing (the manifest then keeps the mangled name, which still identifies it)."""
    cxxfilt = _cxxfilt()
    if not name.startswith("_Z") or cxxfilt is None:
        return name
    try:
        done = subprocess.run(
            [cxxfilt, name], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return name
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else name


def _top_level_paren(text: str) -> int:
    """Index of the '(' that opens the parameter list (outside template brackets), or -1."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch == "(" and depth == 0:
            return i
    return -1


def _strip_template_args(head: str) -> str:
    """'void adam<float, float>' -> 'void adam' (only a trailing, balanced argument list)."""
    if not head.endswith(">"):
        return head
    depth = 0
    for i in range(len(head) - 1, -1, -1):
        if head[i] == ">":
            depth += 1
        elif head[i] == "<":
            depth -= 1
            if depth == 0:
                return head[:i]
    return head


def short_name(signature: str) -> str:
    """The bare kernel name `ncu -k` matches: no return type, template arguments,
    parameters or namespaces. Offload entries and unparsable names come back unchanged."""
    text = signature.strip()
    if text.startswith("__omp_offloading_"):
        return text
    text = demangle(text)
    text = text.replace("(anonymous namespace)", "anonymous_namespace")
    paren = _top_level_paren(text)
    head = text[:paren] if paren > 0 else text
    head = _strip_template_args(head.strip())
    head = head.rsplit(" ", 1)[-1]  # drop a return type ("void ")
    head = head.rsplit("::", 1)[-1]
    return head or signature
