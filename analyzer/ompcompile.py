"""Compile mode for OpenMP offload: compile a C/C++ unit's target regions for the GPU with
clang, disassemble the device code, and find each region's kernel in it.

Nsight Compute counts what the offloaded kernel executes, and clang links its device
runtime (team and thread setup, worksharing-loop scheduling, reductions) into that kernel;
the source shows none of it. `clang++ -fopenmp --offload-device-only` links the runtime's
bitcode (`libomptarget-nvptx-<arch>.bc`) into the unit and optimises them together, so the
cubin holds what ran. Commands are argument lists, never a shell; any failure is a one-line
reason and the region is counted from source (docs/counting.md, rules S11-S13).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from roofcast.analyzer.compdb import CompileDatabase, CompileUnit
from roofcast.analyzer.compile import (
    cache_dir,
    demangle,
    demangled_base,
    file_digest,
    find_tools,
    local_headers,
    tool_version,
    unit_key,
)
from roofcast.analyzer.sass import KernelSass, classify_kernel, parse_disassembly
from roofcast.analyzer.toolchain import ToolchainError, find_clang
from roofcast.analyzer.toolrun import (
    disassemble,
    load_cached,
    run_step,
    store_cached,
)

#: seconds one clang or nvdisasm run may take
#: bumped when what the cache holds changes meaning
CACHE_FORMAT = 1
#: C and C++ sources an OpenMP region is compiled in (a header is compiled in an includer)
SOURCE_SUFFIXES = frozenset({".c", ".cc", ".cpp", ".cxx", ".c++", ".C"})
#: `__omp_offloading_<device id>_<file id>_<enclosing function>_l<pragma line>`
_ENTRY = re.compile(r"^__omp_offloading_[0-9a-f]+_[0-9a-f]+_(.+)_l(\d+)$")
_TARGET = re.compile(rb"^[ \t]*#[ \t]*pragma[ \t]+omp\b[^\n]*\btarget\b", re.MULTILINE)
_LIBDEVICE = Path("nvvm", "libdevice", "libdevice.10.bc")


@dataclass(frozen=True)
class OffloadTools:
    """What an offload compile runs; None where not found."""

    clang: str | None
    #: the folder holding clang's device runtime bitcode (libomptarget-nvptx-sm_XY.bc)
    runtime_dir: Path | None
    #: the CUDA tree clang takes ptxas and libdevice from (`--cuda-path`)
    cuda: Path | None
    nvdisasm: str | None

    def runtime(self, arch: str) -> Path | None:
        """The device runtime's bitcode for `arch`, where clang's install has it."""
        if self.runtime_dir is None:
            return None
        path = self.runtime_dir / f"libomptarget-nvptx-{arch}.bc"
        return path if path.is_file() else None

    def missing(self, arch: str) -> str:
        """Why no offload compile can run for `arch` ('' when it can)."""
        if self.clang is None:
            return "no clang++ for OpenMP offload (put one on PATH or set ROOFCAST_CLANG)"
        if self.runtime(arch) is None:
            where = self.runtime_dir or "clang's lib folder"
            return f"no OpenMP device runtime libomptarget-nvptx-{arch}.bc in {where}"
        if self.cuda is None:
            return "no CUDA tree with ptxas for clang (set CUDA_HOME)"
        if self.nvdisasm is None:
            return "nvdisasm not found (CUDA toolkit, or pip install 'roofcast[compile]')"
        return ""


def _cuda_tree() -> Path | None:
    """CUDA_HOME / CUDA_PATH, else /usr/local/cuda, else the tree of the ptxas on PATH: the
    first holding bin/ptxas and nvvm/libdevice (clang's OpenMP offload needs those two,
    not the CUDA headers, so any CUDA major version does)."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    ptxas = shutil.which("ptxas")
    if ptxas:
        roots.append(str(Path(ptxas).resolve().parent.parent))
    for root in roots:
        tree = Path(root) if root else None
        if tree and (tree / "bin" / "ptxas").is_file() and (tree / _LIBDEVICE).is_file():
            return tree
    return None


def find_offload_tools() -> OffloadTools:
    """clang (find_clang), the runtime bitcode beside its install (`<prefix>/lib`), a CUDA
    tree, and compile mode's nvdisasm."""
    try:
        clang: str | None = find_clang()
    except ToolchainError:
        clang = None
    runtime_dir = Path(os.path.realpath(clang)).parent.parent / "lib" if clang else None
    return OffloadTools(clang, runtime_dir, _cuda_tree(), find_tools().nvdisasm)


def offload_command(
    tools: OffloadTools,
    arch: str,
    source: Path,
    output: Path,
    unit: CompileUnit | None = None,
    defines: Mapping[str, str] | None = None,
    undefines: Iterable[str] = (),
    include_dirs: Sequence[Path] = (),
) -> list[str]:
    """The argument list compiling one unit's target regions to a cubin (rule S11):
    `clang++ -fopenmp --offload-arch=sm_XY --offload-device-only -O3 -gline-tables-only -c`
    with the device runtime's bitcode and the CUDA tree, `-I<file dir>`, then the unit's
    -std, -I, -D and -U from compile_commands.json and the command line's."""
    runtime = tools.runtime(arch)
    assert tools.clang is not None and runtime is not None and tools.cuda is not None
    args = [tools.clang, "-fopenmp", f"--offload-arch={arch}", "--offload-device-only"]
    args += ["-O3", "-gline-tables-only", "-c", "-w"]
    args += [f"--libomptarget-nvptx-bc-path={runtime}", f"--cuda-path={tools.cuda}"]
    args += ["-x", "c" if unit is not None and unit.language == "c" else "c++"]
    args.append(f"-I{source.parent}")
    if unit is not None:
        if unit.std:
            args.append(f"-std={unit.std}")
        args += [f"-I{d}" for d in unit.include_dirs]
        args += [f"-D{n}={v}" for n, v in unit.defines if n not in (defines or {})]
        args += [f"-U{n}" for n in sorted(unit.undefines)]
    args += [f"-I{d}" for d in include_dirs]
    args += [f"-D{n}={v}" for n, v in (defines or {}).items()]
    args += [f"-U{n}" for n in sorted(undefines)]
    return [*args, "-o", str(output), str(source)]


def has_target_region(path: Path) -> bool:
    """Whether a file has an `#pragma omp ... target ...` line (what is worth compiling)."""
    try:
        return _TARGET.search(path.read_bytes()) is not None
    except OSError:
        return False


@dataclass(frozen=True)
class OffloadEntry:
    """One offloaded kernel: its symbol, the enclosing function's symbol and the pragma line."""

    symbol: str
    function: str
    line: int


def entry_of(symbol: str) -> OffloadEntry | None:
    """The parts of an `__omp_offloading_..._l<line>` symbol; None for other functions (the
    runtime's own, such as `__cuda_sm70_shflsync_down`)."""
    found = _ENTRY.match(symbol)
    return OffloadEntry(symbol, found.group(1), int(found.group(2))) if found else None


def function_base(mangled: str) -> str:
    """The plain name of an entry's enclosing function: `main` -> main,
    `_Z6kernelPf` -> kernel, `_ZN2ns1kEv` -> k (its last qualified part)."""
    return demangled_base(mangled)


@dataclass
class OffloadUnit:
    """One compiled unit: the offloaded kernels' classed SASS by symbol, or why none."""

    kernels: dict[str, KernelSass] = field(default_factory=dict)
    error: str = ""
    command: list[str] = field(default_factory=list)


class OffloadCompiler:
    """Compiles OpenMP units on demand or in advance (`prepare`), once each, cached on disk
    (the disassembly text: reading it again is cheap, compiling is not)."""

    def __init__(
        self,
        arch: str | None,
        database: CompileDatabase | None = None,
        defines: Mapping[str, str] | None = None,
        undefines: Iterable[str] = (),
        include_dirs: Sequence[Path] = (),
        tools: OffloadTools | None = None,
        cache_root: Path | None = None,
        use_cache: bool = True,
    ) -> None:
        self.arch = arch
        self.database = database
        self.defines = dict(defines or {})
        self.undefines = frozenset(undefines)
        self.include_dirs = list(include_dirs)
        self.tools = tools or find_offload_tools()
        self.cache_root = cache_root or cache_dir()
        self.use_cache = use_cache
        self.units: dict[Path, OffloadUnit] = {}
        self._candidates: dict[Path, list[Path]] = {}
        self._lock = threading.Lock()

    def unavailable(self) -> str:
        """Why nothing can be compiled ('' when units can)."""
        if self.arch is None:
            return "the GPU has no NVIDIA compute capability (no SASS)"
        return self.tools.missing(self.arch)

    def describe(self) -> str:
        """Which compiler, for `counted_why`."""
        return f"{Path(self.tools.clang or 'clang++').name} -fopenmp --offload-arch={self.arch}"

    def command(self, source: Path, output: Path) -> list[str]:
        assert self.arch is not None
        unit = self.database.unit_for(source) if self.database is not None else None
        return offload_command(
            self.tools,
            self.arch,
            source,
            output,
            unit,
            self.defines,
            self.undefines,
            self.include_dirs,
        )

    def unit(self, source: Path) -> OffloadUnit:
        """The unit compiled from `source` (resolved), from memory, disk cache or clang."""
        source = source.resolve()
        with self._lock:
            done = self.units.get(source)
        if done is not None:
            return done
        why = self.unavailable()
        result = OffloadUnit(error=why) if why else self._compile(source)
        with self._lock:
            self.units[source] = result
        return result

    def _key(self, source: Path, command: list[str]) -> str:
        unit = self.database.unit_for(source) if self.database is not None else None
        search = [*(unit.include_dirs if unit else ()), *self.include_dirs]
        runtime = self.tools.runtime(self.arch or "")
        ptxas = self.tools.cuda / "bin" / "ptxas" if self.tools.cuda else None
        versions = [
            file_digest(runtime) if runtime else "",
            *(tool_version(p or "") for p in (self.tools.clang, self.tools.nvdisasm)),
            tool_version(str(ptxas or "")),
        ]
        return unit_key(source, search, command, versions, f"omp-offload {CACHE_FORMAT}")

    def _compile(self, source: Path) -> OffloadUnit:
        with tempfile.TemporaryDirectory(prefix="roofcast-omp-") as tmp:
            cubin = Path(tmp) / "unit.cubin"
            command = self.command(source, cubin)
            stored = self.cache_root / "omp" / f"{self._key(source, command)}.sass.gz"
            data = self._load(stored)
            if data is not None:
                error, text = data
            else:
                error, text = self._run(command, cubin)
                if not error.startswith("timed out"):
                    self._store(stored, error, text)
        result = OffloadUnit(error=error, command=command)
        if not error:
            functions = parse_disassembly(text)
            result.kernels = {
                name: classify_kernel(function, functions)
                for name, function in functions.items()
                if entry_of(name) is not None
            }
        return result

    def _load(self, path: Path) -> tuple[str, str] | None:
        data = load_cached(path) if self.use_cache else None
        if data is None or not isinstance(data.get("sass"), str):
            return None
        return str(data.get("error", "")), data["sass"]

    def _store(self, path: Path, error: str, text: str) -> None:
        if self.use_cache:
            store_cached(path, {"error": error, "sass": text})

    def _run(self, command: list[str], cubin: Path) -> tuple[str, str]:
        """(error, '') or ('', the cubin's `nvdisasm -gi -c` text)."""
        name = Path(command[0]).name
        error = run_step(command, name)
        if error:
            return error, ""
        if not cubin.is_file():
            return f"{name} failed: no cubin written", ""
        assert self.tools.nvdisasm is not None
        return disassemble(self.tools.nvdisasm, cubin)

    def prepare(
        self,
        sources: Iterable[Path],
        jobs: int = 1,
        on_done: Callable[[int, int], None] | None = None,
    ) -> None:
        """Compile the units of those `sources` that hold a target region (a header's in
        its first includer) in `jobs` threads."""
        todo: dict[Path, None] = {}
        for source in sources:
            if has_target_region(Path(source)):
                for candidate in self.candidates(Path(source).resolve())[:1]:
                    todo[candidate] = None
        if self.unavailable() or not todo:
            return
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for done, _ in enumerate(pool.map(self.unit, sorted(todo)), 1):
                if on_done:
                    on_done(done, len(todo))

    def candidates(self, path: Path) -> list[Path]:
        """The file itself if a C/C++ source, then the sources beside it or up to two
        folders up that include it, directly or through local headers (a region in a
        header, or in a .cpp meant to be #included, is compiled in its includer)."""
        with self._lock:
            known = self._candidates.get(path)
        if known is not None:
            return known
        out = [path] if path.suffix in SOURCE_SUFFIXES else []
        unit = self.database.unit_for(path) if self.database is not None else None
        search = [*(unit.include_dirs if unit else ()), *self.include_dirs]
        for folder in (path.parent, *path.parents[1:3]):
            try:
                siblings = sorted(p for p in folder.iterdir() if p.suffix in SOURCE_SUFFIXES)
            except OSError:
                continue
            out += [s for s in siblings if s != path and path in local_headers(s, search)]
        with self._lock:
            self._candidates[path] = out
        return out

    def region(
        self, file: str | Path, function: str, line: int, template_args: Sequence[str] = ()
    ) -> tuple[KernelSass | None, str]:
        """(the classed SASS of the region at `line` of `file`, '') or (None, why not):
        rule S12, the kernel whose symbol ends in `_l<line>` and whose enclosing function
        is `function`, in the first candidate unit that compiles and has one."""
        path = Path(file).resolve()
        why = ""
        for candidate in self.candidates(path):
            unit = self.unit(candidate)
            if unit.error:
                why = why or unit.error
                continue
            found = match_region(unit.kernels, function, line, template_args)
            if found is not None:
                return found, ""
            why = why or f"no offloaded kernel for line {line} in {candidate.name}"
        return None, why or f"{path.name}: no C/C++ source compiles it"


def match_region(
    kernels: Mapping[str, KernelSass], function: str, line: int, template_args: Sequence[str] = ()
) -> KernelSass | None:
    """Rule S12: of the kernels whose entry names pragma line `line`, those of the enclosing
    function `function` (the only one when a single kernel has the line); of a template's
    instances, the first whose demangled name holds every bound template argument."""
    at_line = [
        (entry, k) for name, k in sorted(kernels.items()) if (entry := entry_of(name)) is not None
    ]
    at_line = [(e, k) for e, k in at_line if e.line == line]
    wanted = function.split("::")[-1]
    named = [(e, k) for e, k in at_line if function_base(e.function) == wanted]
    if not named and len({e.function for e, _ in at_line}) == 1:
        named = at_line  # one function has the line: a lambda's or an operator's region
    if not named:
        return None
    if len(named) > 1 and template_args:
        texts = demangle([e.function for e, _ in named])
        for (_, kernel), text in zip(named, texts, strict=True):
            head = text.split("(", 1)[0]
            if all(re.search(rf"[<,\s]{re.escape(a.strip())}[,>\s]", head) for a in template_args):
                return kernel
    return named[0][1]


_OFFLOAD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_OFFLOAD_LOCK = threading.Lock()


def offload_for(compiler) -> OffloadCompiler:
    """The OpenMP offload compiler going with a compile-mode `Compiler` (its architecture,
    database, -D/-U/-I and cache), made once per Compiler."""
    with _OFFLOAD_LOCK:
        known = _OFFLOAD.get(compiler)
        if known is not None:
            known.database = getattr(compiler, "database", None)  # evaluate sets it late
            return known
        made = OffloadCompiler(
            getattr(compiler, "arch", None),
            getattr(compiler, "database", None),
            getattr(compiler, "defines", None),
            getattr(compiler, "undefines", ()),
            getattr(compiler, "include_dirs", ()),
            cache_root=getattr(compiler, "cache_root", None),
            use_cache=getattr(compiler, "use_cache", True),
        )
        _OFFLOAD[compiler] = made
        return made
