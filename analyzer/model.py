"""The kernel IR: what the analyzer hands to feature counting, predictors, the LLM and reports.

Consumers read plain fields; `ast` and `context` are the parse-tree handles that feature
counting walks, kept out of repr, comparison and every serialised form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Language = Literal["cuda", "openmp"]


@dataclass(frozen=True)
class Param:
    """One kernel parameter as declared: `const float* __restrict__ x` -> name x, type text."""

    name: str
    type: str
    is_pointer: bool


@dataclass(frozen=True)
class LaunchSite:
    """A host-side launch `k<<<grid, block, smem, stream>>>(args)` found in the same tree."""

    file: str
    line: int
    grid: str
    block: str
    args: tuple[str, ...]
    #: the launch lies in a loop of its host function: it runs again before that function
    #: moves on, as far as host code shows (rule D34)
    repeated: bool = False


@dataclass
class KernelIR:
    """One kernel: a CUDA `__global__` function or one OpenMP `#pragma omp target` region.

    `name` is the CUDA function name or, for OpenMP, the enclosing function's name;
    `line` is the function's line (CUDA) or the pragma's line (OpenMP), 1-based.
    `source` is the kernel's own text; `device_sources` the text of the `__device__`
    functions it reaches through the call graph, in call order. `host_context` is host
    code that sizes or launches the kernel (for the LLM), possibly empty.
    """

    name: str
    file: str
    line: int
    language: Language
    signature: str
    params: list[Param]
    source: str
    device_functions: list[str] = field(default_factory=list)
    device_sources: list[str] = field(default_factory=list)
    template_params: list[str] = field(default_factory=list)
    launches: list[LaunchSite] = field(default_factory=list)
    host_context: str = ""
    pragma: str = ""
    end_line: int = 0
    #: parameter (or OpenMP host local) -> its value at the call site, a sympy expression
    #: over constants and `argv_k` (the program's k-th command-line argument)
    host_bindings: dict[str, Any] = field(default_factory=dict)
    #: CUDA, a kernel launched from more than one site: each site's bindings as
    #: `host_bindings` has the first's, in `launches` order (rule D33); empty otherwise
    site_bindings: list[dict[str, Any]] = field(default_factory=list)
    #: CUDA, one launch site outside a loop of its host function, that function called in
    #: a for loop: the site's bindings on that loop's second trip, where they differ from
    #: `host_bindings` (rule D43); empty otherwise
    second_trip_bindings: dict[str, Any] = field(default_factory=dict)
    #: device data footprint in bytes from host code (allocations, map clauses), a sympy
    #: expression over constants and argv_k; None when not found
    footprint: Any = None
    #: array (a CUDA pointer parameter, an OpenMP host name) -> what host code allocated for
    #: it, an `analyzer.allocations.Allocation` (rule D28); absent when not shown
    allocations: dict[str, Any] = field(default_factory=dict)
    #: macros nothing defined whose absence chose an arm of an `#if` in the kernel's file or
    #: the headers it includes (cpp takes them as undefined; a --define changes the arm)
    undefined_macros: list[str] = field(default_factory=list)
    #: OpenMP: number of loops merged by collapse(n) into the work-shared iteration space.
    collapse: int = 0
    #: -D of the compile command the kernel's file was analysed with (compile_commands.json),
    #: less those the command line sets or unsets: bound at counting time as --define is
    build_defines: dict[str, str] = field(default_factory=dict)
    #: CUDA: the template arguments of the kernel's first launch (`k<double, 8><<<...>>>`), by
    #: template parameter: bound as `--define T=double` would be, under any other binding
    launch_defines: dict[str, str] = field(default_factory=dict)
    #: which compile command that was ({"entry": n, "file": as written}); None without one
    compile_unit: dict[str, Any] | None = None
    #: that command's flags (an `analyzer.compdb.CompileUnit`), for libclang's parse (rule M10)
    unit: Any = field(default=None, repr=False, compare=False)
    ast: Any = field(default=None, repr=False, compare=False)
    context: Any = field(default=None, repr=False, compare=False)
    #: the grammar `ast` was parsed with: its own file's, which a header counted in its
    #: includer's context (rule U7) need not share with that context
    grammar: str = ""
    #: OpenMP: the grammar of the function around the region (`ast`'s third item), which is
    #: the includer's when the region sits in a header pasted into that function
    host_grammar: str = ""

    @property
    def id(self) -> str:
        """Stable identity inside one analysis: file:line:name."""
        return f"{self.file}:{self.line}:{self.name}"


@dataclass(frozen=True)
class FileProblem:
    """A file that could not be read or parsed (fully or partly); analysis goes on."""

    file: str
    message: str
    fatal: bool = True
