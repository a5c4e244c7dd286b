"""Compile mode: compile CUDA translation units for the GPU's architecture, disassemble them,
and keep each kernel's classed SASS (analyzer.sass), cached on disk.

A unit the compile database builds with clang (`clang++ -x cuda`, or a .cu given to clang)
is compiled with clang again (analyzer.toolchain finds one and a CUDA tree for it): clang's
device code differs from nvcc's, and the build's is what ran. Every other unit, and a clang
unit where no clang toolchain is found (said per kernel), is compiled with nvcc; where nvcc
is missing (no CUDA toolkit, only clang and the `compile` extra), clang compiles them too.

Commands are data: compilers run with an argument list, never through a shell, and -D
values are passed as single arguments. Any failure (tool missing, unit not compiling, kernel absent
from the cubin) is a one-line reason, and the kernel is counted from source instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from roofcast.analyzer.compdb import CompileDatabase, CompileUnit
from roofcast.analyzer.sass import (
    KernelSass,
    LineCounts,
    Loop,
    classify_kernel,
    parse_disassembly,
)
from roofcast.analyzer.sasslink import link_functions
from roofcast.analyzer.toolchain import (
    ClangCuda,
    ToolchainError,
    clang_cuda,
    clang_cuda_flags,
    is_clang,
)
from roofcast.analyzer.toolrun import (
    disassemble,
    load_cached,
    run_step,
    store_cached,
)

#: seconds one compiler or nvdisasm run may take
#: bumped when what the cache holds changes meaning
CACHE_FORMAT = 10
_INCLUDE = re.compile(rb'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_STD = re.compile(r"^(?:gnu|c)\+\+(\d+)$")


NO_NVCC = "nvcc not found (set CUDA_HOME or put nvcc on PATH)"
NO_NVDISASM = "nvdisasm not found (CUDA toolkit, or pip install 'roofcast[compile]')"


@dataclass(frozen=True)
class Tools:
    """The toolkit programs compile mode runs; None where not found."""

    nvcc: str | None
    nvdisasm: str | None

    def missing(self) -> str:
        """Why these tools alone cannot compile ('' when they can); without nvcc a clang
        toolchain may still compile (`Compiler.unavailable`)."""
        if self.nvcc is None:
            return NO_NVCC
        if self.nvdisasm is None:
            return NO_NVDISASM
        return ""


def find_tools() -> Tools:
    """nvcc from CUDA_HOME or PATH; nvdisasm beside it, on PATH, or from PyPI's
    nvidia-cuda-nvdisasm wheel (the `compile` extra)."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    dirs = [Path(home) / "bin"] if home else []
    nvcc = _first([d / "nvcc" for d in dirs]) or shutil.which("nvcc")
    if nvcc:
        dirs.append(Path(nvcc).resolve().parent)
    nvdisasm = _first([d / "nvdisasm" for d in dirs]) or shutil.which("nvdisasm")
    return Tools(nvcc, nvdisasm or _wheel_nvdisasm())


def _first(paths: Iterable[Path]) -> str | None:
    return next((str(p) for p in paths if p.is_file() and os.access(p, os.X_OK)), None)


def _wheel_nvdisasm() -> str | None:
    """nvdisasm inside PyPI's nvidia-cuda-nvdisasm wheel (nvidia/<dir>/bin/nvdisasm)."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        found = _first(sorted(Path(root).glob("*/bin/nvdisasm")))
        if found:
            return found
    return None


@cache
def tool_version(program: str) -> str:
    """The `--version` line naming the release: part of every cache key."""
    try:
        done = subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = [ln for ln in done.stdout.splitlines() if "release" in ln or "Build" in ln]
    return " ".join(lines) or done.stdout.strip()[-200:]


def sm_arch(compute_capability: str) -> str | None:
    """ "8.6" -> "sm_86"; None for what is no NVIDIA compute capability (AMD's gfx names)."""
    found = re.fullmatch(r"(\d+)\.(\d+)", compute_capability.strip())
    return f"sm_{found.group(1)}{found.group(2)}" if found else None


def _std(unit: CompileUnit | None) -> str:
    """The unit's -std, raised to C++17 (the oldest CUDA 12.x/13 headers accept); gnu++ as c++."""
    if unit is not None and unit.std:
        found = _STD.match(unit.std)
        if found and int(found.group(1)) >= 17 and int(found.group(1)) < 90:
            return f"c++{found.group(1)}"
    return "c++17"


def nvcc_command(
    nvcc: str,
    arch: str,
    source: Path,
    output: Path,
    unit: CompileUnit | None = None,
    defines: Mapping[str, str] | None = None,
    undefines: Iterable[str] = (),
    include_dirs: Sequence[Path] = (),
) -> list[str]:
    """The argument list compiling one unit to a cubin: the default command
    (`-cubin -arch -O3 -lineinfo -std=c++17 -I<file dir>`) plus the unit's flags from
    compile_commands.json (its -D, -U, -I and -std: flags nvcc and clang++ -x cuda share;
    the rest of a clang command has no nvcc meaning here) and the command line's.
    `--expt-relaxed-constexpr --extended-lambda`: clang compiles CUDA that calls constexpr
    host functions and annotates lambdas without being asked; nvcc only with these."""
    args = [nvcc, "-cubin", f"-arch={arch}", "-O3", "-lineinfo", f"-std={_std(unit)}"]
    args += ["--expt-relaxed-constexpr", "--extended-lambda"]  # what clang CUDA allows as is
    args.append(f"-I{source.parent}")
    if unit is not None:
        args += [f"-I{d}" for d in unit.include_dirs]
        args += [f"-D{n}={v}" for n, v in unit.defines if n not in (defines or {})]
        args += [f"-U{n}" for n in sorted(unit.undefines)]
    args += [f"-I{d}" for d in include_dirs]
    args += [f"-D{n}={v}" for n, v in (defines or {}).items()]
    args += [f"-U{n}" for n in sorted(undefines)]
    return [*args, "-o", str(output), str(source)]


def _sm(arch: str) -> int:
    found = re.match(r"sm_(\d+)", arch)
    return int(found.group(1)) if found else 0


def ptx_arch(unit: CompileUnit, arch: str) -> str | None:
    """The architecture whose PTX the driver would JIT-compile for the GPU's `arch`, when
    the build compiled for others: the newest of the build's not newer than the GPU.
    None when the build compiles for `arch` itself, names none, or only newer ones (its
    binary would not run there: the GPU's own is compiled)."""
    if not unit.gpu_archs or arch in unit.gpu_archs:
        return None
    older = [a for a in unit.gpu_archs if 0 < _sm(a) <= _sm(arch)]
    return max(older, key=_sm) if older else None


def _default_unit(source: Path, unit: CompileUnit | None) -> CompileUnit:
    """The flags nvcc's default command would use (-std raised to C++17, -I<file dir>,
    the database's -D/-U/-I where it has the file), as a unit clang can compile."""
    include_dirs = (source.parent, *(unit.include_dirs if unit is not None else ()))
    base = unit if unit is not None else CompileUnit(source, -1, str(source))
    return replace(base, std=_std(unit), include_dirs=include_dirs, codegen=("-O3",), gpu_archs=())


def clang_command(
    toolchain: ClangCuda,
    arch: str,
    source: Path,
    output: Path,
    unit: CompileUnit,
    defines: Mapping[str, str] | None = None,
    undefines: Iterable[str] = (),
    include_dirs: Sequence[Path] = (),
    ptx_for: str | None = None,
) -> list[str]:
    """The argument list compiling one unit's device side with the build's own clang
    command: its -std, code-generation flags (-O, floating point, -fcuda/-fgpu, -Wno-),
    -I, -D, -U and -include as written, then the command line's. What changes: the CUDA
    tree is the one clang is given here; the device side alone is compiled, with
    `-gline-tables-only` for nvdisasm's line table (full `-g` would make ptxas compile
    without optimisation); the output is a cubin for the GPU's `arch`, or with
    `ptx_for` the PTX for that older architecture (`ptxas_command` then builds the GPU's
    cubin from it, as the driver's JIT does for such a binary)."""
    args = [toolchain.clang, "-x", "cuda", "--cuda-device-only"]
    args += ["-S"] if ptx_for else ["-c"]
    args += clang_cuda_flags(toolchain, ptx_for or arch)
    args.append("-gline-tables-only")
    if unit.std:
        args.append(f"-std={unit.std}")
    args += unit.codegen
    args += [f"-I{d}" for d in unit.include_dirs]
    args += [f"-D{n}={v}" for n, v in unit.defines if n not in (defines or {})]
    args += [f"-U{n}" for n in sorted(unit.undefines)]
    for forced in unit.forced_includes:
        args += ["-include", forced]
    args += [f"-I{d}" for d in include_dirs]
    args += [f"-D{n}={v}" for n, v in (defines or {}).items()]
    args += [f"-U{n}" for n in sorted(undefines)]
    return [*args, "-o", str(output), str(source)]


def ptxas_command(toolchain: ClangCuda, arch: str, ptx: Path, cubin: Path) -> list[str]:
    """ptxas of the clang's CUDA tree building the GPU's cubin from PTX, with the line
    table (`-lineinfo`) and the optimisation clang itself asks of ptxas."""
    ptxas = str(toolchain.cuda.ptxas)
    return [ptxas, "-m64", "-O3", "-lineinfo", f"--gpu-name={arch}", "-o", str(cubin), str(ptx)]


@dataclass(frozen=True)
class Plan:
    """How one unit is compiled: the argument list (and a second one run after it, when
    there is one), and the line reports give (which compiler, and why that one)."""

    command: list[str]
    how: str
    #: what else decides the output beside the commands: the CUDA tree's version for clang
    identity: tuple[str, ...] = ()
    then: list[str] = field(default_factory=list)


@cache
def _reader_digest() -> str:
    """A hash of the SASS reader's source: the cache holds its output, not the SASS."""
    from roofcast.analyzer import (
        sass,
        sassbeside,
        sassdiverge,
        sassladder,
        sasslane,
        sasslink,
        sassspin,
    )

    digest = hashlib.sha256()
    for module in (sass, sassspin, sasslink, sassdiverge, sassladder, sassbeside, sasslane):
        if module.__file__:
            digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "roofcast" / "sass"


def local_headers(source: Path, search: Sequence[Path], limit: int = 500) -> list[Path]:
    """Quoted includes found beside the file or in `search`, transitively (a work list, no
    recursion), in the order met: what the cache key hashes besides the file."""
    seen: dict[Path, None] = {}
    todo = [source]
    while todo and len(seen) < limit:
        path = todo.pop()
        try:
            text = path.read_bytes()
        except OSError:
            continue
        for name in _INCLUDE.findall(text):
            rel = name.decode("utf-8", "replace")
            for folder in (path.parent, *search):
                candidate = (folder / rel).resolve()
                if candidate.is_file():
                    if candidate not in seen and candidate != source:
                        seen[candidate] = None
                        todo.append(candidate)
                    break
    return list(seen)


#: a CUDA tree's path in a command (`--cuda-path=...`): not part of a cache key
_CUDA_PATH_ARG = "--cuda-path="


def unit_key(
    source: Path,
    search: Sequence[Path],
    command: Sequence[str],
    versions: Iterable[str],
    salt: str = "",
) -> str:
    """SHA-256 of what decides a unit's compiled code: the file and its local headers (path
    and bytes), the command and the tools' versions. Left out of the command: its output
    (a fresh temporary) and the CUDA tree's path, which differs between installs of the
    same wheels (the tree is named by its CUDA and ptxas versions in `versions`)."""
    digest = hashlib.sha256(salt.encode())
    for path in (source, *local_headers(source, search)):
        digest.update(str(path).encode() + b"\0" + file_digest(path).encode())
    stable = [
        _CUDA_PATH_ARG if a.startswith(_CUDA_PATH_ARG) else a
        for a in command
        if not a.startswith(tempfile.gettempdir())
    ]
    digest.update(json.dumps(stable).encode())
    for version in versions:
        digest.update(b"\0" + version.encode())
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    """A file's SHA-256, computed once per version of it (its size and modification time)."""
    try:
        stat = path.stat()
    except OSError:
        return "<unreadable>"
    return _digest(path, stat.st_size, stat.st_mtime_ns)


@cache
def _digest(path: Path, size: int, mtime: int) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return "<unreadable>"


@dataclass
class UnitSass:
    """One compiled unit: kernels' classed SASS by mangled name, or why there is none."""

    kernels: dict[str, KernelSass] = field(default_factory=dict)
    error: str = ""
    cached: bool = False
    command: list[str] = field(default_factory=list)
    how: str = ""  # which compiler, and why that one (Plan.how)


def _to_json(unit: UnitSass) -> dict:
    return {
        "format": CACHE_FORMAT,
        "error": unit.error,
        "kernels": {
            name: {
                "dropped": k.dropped,
                "groups": [
                    [
                        g.where,
                        g.depth,
                        g.unroll,
                        dict(g.counts),
                        list(g.copies),
                        list(g.regions),
                        list(g.loops),
                        g.callee,
                        [[start, n] for start, n in g.calls.items()],
                        g.guards,
                        [list(w) for w in g.beside],
                        g.lanes,
                        g.odd,
                    ]
                    for g in k.groups
                ],
                "regions": [[r, w] for r, w in k.regions.items()],
                "loops": [
                    [
                        lp.start,
                        lp.end,
                        lp.line,
                        lp.unroll,
                        lp.remainder,
                        lp.copies,
                        lp.spin,
                        lp.step,
                        lp.bound,
                        lp.odd,
                    ]
                    for lp in k.loops
                ],
            }
            for name, k in unit.kernels.items()
        },
    }


def _from_json(data: dict) -> UnitSass | None:
    from collections import Counter

    if data.get("format") != CACHE_FORMAT:
        return None
    kernels = {}
    for name, k in data["kernels"].items():
        groups = [
            LineCounts(
                tuple((str(f), int(n)) for f, n in where),
                depth,
                unroll,
                Counter(counts),
                tuple(int(c) for c in copies),
                tuple(int(r) for r in regions),
                tuple(int(a) for a in loops),
                int(callee),
                Counter({int(start): int(n) for start, n in calls}),
                int(guards),
                tuple((str(f), int(n)) for f, n in beside),
                int(lanes),
                int(odd),
            )
            for (
                where,
                depth,
                unroll,
                counts,
                copies,
                regions,
                loops,
                callee,
                calls,
                guards,
                beside,
                lanes,
                odd,
            ) in k["groups"]
        ]
        found = {
            int(r): [tuple((str(f), int(n)) for f, n in w) for w in wheres]
            for r, wheres in k["regions"]
        }
        loops = [
            Loop(
                int(start),
                int(end),
                (str(line[0]), int(line[1])) if line else None,
                int(unroll),
                bool(remainder),
                int(copies),
                spin=bool(spin),
                step=int(step),
                bound=int(bound),
                odd=bool(odd),
            )
            for start, end, line, unroll, remainder, copies, spin, step, bound, odd in k["loops"]
        ]
        kernels[name] = KernelSass(name, groups, loops, int(k["dropped"]), found)
    return UnitSass(kernels, str(data.get("error", "")), cached=True)


def demangled_base(mangled: str) -> str:
    """A kernel's plain name from its Itanium-mangled symbol: `_Z6kernelPf` -> `kernel`,
    `_ZN2ns6kernelEv` -> `kernel`, `kernel` (extern "C") -> itself."""
    if not mangled.startswith("_Z"):
        return mangled
    text = mangled[2:]
    nested = text.startswith("N")
    i = 1 if nested else 0
    while i < len(text) and text[i] in "KVrL":  # qualifiers, internal linkage
        i += 1
    name = ""
    while i < len(text) and text[i].isdigit():
        j = i
        while j < len(text) and text[j].isdigit():
            j += 1
        size = int(text[i:j])
        name = text[j : j + size]
        i = j + size
        if not nested:
            break
    return name or mangled


class Compiler:
    """Compiles units on demand or in advance (`prepare`), in memory and on disk once each."""

    def __init__(
        self,
        arch: str | None,
        database: CompileDatabase | None = None,
        defines: Mapping[str, str] | None = None,
        undefines: Iterable[str] = (),
        include_dirs: Sequence[Path] = (),
        tools: Tools | None = None,
        cache_root: Path | None = None,
        use_cache: bool = True,
        jobs: int = 1,
    ) -> None:
        self.arch = arch
        self.jobs = jobs
        self.database = database
        self.defines = dict(defines or {})
        self.undefines = frozenset(undefines)
        self.include_dirs = list(include_dirs)
        self.tools = tools or find_tools()
        self.cache_root = cache_root or cache_dir()
        self.use_cache = use_cache
        self.units: dict[Path, UnitSass] = {}
        self._candidates: dict[Path, list[Path]] = {}
        self._clangs: dict[str, ClangCuda | str] = {}
        self._lock = threading.Lock()

    def unavailable(self) -> str:
        """Why nothing can be compiled ('' when units can): no NVIDIA architecture, no
        nvdisasm, or neither nvcc nor a clang toolchain (clang alone compiles every unit)."""
        if self.arch is None:
            return "the GPU has no NVIDIA compute capability (no SASS)"
        if self.tools.nvdisasm is None:
            return NO_NVDISASM
        if self.tools.nvcc is None:
            fallback = self.clang_for("")
            if not isinstance(fallback, ClangCuda):
                return f"{NO_NVCC}, and no clang for CUDA: {fallback}"
        return ""

    def command(self, source: Path, output: Path) -> list[str]:
        return self.plan(source, output).command

    def clang_for(self, compiler: str) -> ClangCuda | str:
        """The clang toolchain for a build's compiler name, or why there is none (looked
        up once per name)."""
        with self._lock:
            known = self._clangs.get(compiler)
        if known is None:
            try:
                known = clang_cuda(compiler)
            except ToolchainError as exc:
                known = str(exc)
            with self._lock:
                self._clangs[compiler] = known
        return known

    def plan(self, source: Path, output: Path) -> Plan:
        """The unit's own clang command where the database builds it with clang and a
        clang toolchain is found; else the nvcc command (saying why, for a clang unit), or
        without nvcc, clang with nvcc's default flags."""
        unit = self.database.unit_for(source) if self.database is not None else None
        assert self.arch is not None
        nvcc_how = f"nvcc -arch={self.arch}"
        clang_unit = unit is not None and unit.cuda and is_clang(unit.compiler)
        if clang_unit or self.tools.nvcc is None:
            build = unit.compiler if unit is not None and clang_unit else ""
            toolchain = self.clang_for(build)
            if isinstance(toolchain, ClangCuda):
                if clang_unit:
                    assert unit is not None
                    return self._clang_plan(toolchain, source, output, unit, f"the build's {build}")
                because = "nvcc not found: nvcc's default flags"
                return self._clang_plan(
                    toolchain, source, output, _default_unit(source, unit), because
                )
            if clang_unit:
                nvcc_how += f" (not the build's {build}: {toolchain})"
        assert self.tools.nvcc is not None  # `unavailable` said so otherwise
        command = nvcc_command(
            self.tools.nvcc,
            self.arch,
            source,
            output,
            unit,
            self.defines,
            self.undefines,
            self.include_dirs,
        )
        return Plan(command, nvcc_how)

    def _clang_plan(
        self, toolchain: ClangCuda, source: Path, output: Path, unit: CompileUnit, because: str
    ) -> Plan:
        """clang's command for the unit (through the PTX of an older GPU the build names,
        then ptxas, as the driver's JIT would), and the line saying which and why."""
        assert self.arch is not None
        older = ptx_arch(unit, self.arch)
        ptx = output.with_suffix(".ptx")
        command = clang_command(
            toolchain,
            self.arch,
            source,
            ptx if older else output,
            unit,
            self.defines,
            self.undefines,
            self.include_dirs,
            older,
        )
        then = ptxas_command(toolchain, self.arch, ptx, output) if older else []
        how = f"{toolchain.name} -x cuda --cuda-gpu-arch={older or self.arch} "
        if older:
            how += f"then ptxas --gpu-name={self.arch} "
        how += f"({toolchain.describe()}; {because})"
        identity = (toolchain.cuda.version, tool_version(str(toolchain.cuda.ptxas)))
        return Plan(command, how, identity, then)

    def how(self, file: str | Path, name: str) -> str:
        """Which compiler built the SASS `kernel` finds for this kernel, and why that one:
        what reports give as `counted_why`."""
        for candidate in self.candidates(Path(file).resolve()):
            unit = self.unit(candidate)
            if not unit.error and any(_names(m, name) for m in unit.kernels):
                return unit.how
        return f"nvcc -arch={self.arch}"

    def summary(self) -> str:
        """One line for --verbose: the default command, and what a database changes."""
        shown = self.command(Path("<dir>/FILE.cu"), Path("OUT.cubin"))
        if self.database is None:
            return " ".join(shown)
        clangs = sorted(
            {u.compiler for u in self.database.units.values() if u.cuda and is_clang(u.compiler)}
        )
        more = " (plus each file's -D/-U/-I/-std from --compile-commands)"
        for name in clangs:
            found = self.clang_for(name)
            if isinstance(found, ClangCuda):
                more += f"; units built with {name}: {found.clang} ({found.describe()})"
            else:
                more += f"; units built with {name}: nvcc ({found})"
        return " ".join(shown) + more

    def unit(self, source: Path) -> UnitSass:
        """The unit compiled from `source` (resolved), from memory, disk cache or nvcc."""
        source = source.resolve()
        with self._lock:
            done = self.units.get(source)
        if done is not None:
            return done
        why = self.unavailable()
        result = UnitSass(error=why) if why else self._compile(source)
        with self._lock:
            self.units[source] = result
        return result

    def _key(self, source: Path, command: list[str], identity: Sequence[str] = ()) -> str:
        unit = self.database.unit_for(source) if self.database is not None else None
        search = [*(unit.include_dirs if unit else ()), *self.include_dirs]
        versions = [tool_version(p or "") for p in (command[0], self.tools.nvdisasm)]
        return unit_key(source, search, command, [*versions, *identity])

    def _compile(self, source: Path) -> UnitSass:
        """Two cache levels under one key (sources, command, tool versions): the SASS text
        (or the compiler's error), and the counts read from it by this version of the
        reader; a changed reader re-reads the SASS without compiling again, and so do
        changed units a kernel's calls were linked from (S33)."""
        plan, key = self._planned(source)
        command = plan.command
        counts_file = self.cache_root / key[:2] / f"{key}-{_reader_digest()[:16]}.json.gz"
        data = self._load(counts_file)
        loaded = _from_json(data) if data is not None else None
        if loaded is not None and data is not None and self._linked_current(data):
            loaded.command, loaded.how = command, plan.how
            return loaded
        error, text = self._sass(source, key)
        result = UnitSass(error=error, command=command, how=plan.how)
        linked: list[tuple[str, str]] = []
        if not error:
            functions = parse_disassembly(text)
            linked = link_functions(functions, self._beside(source), self._linkable)
            result.kernels = {name: classify_kernel(f, functions) for name, f in functions.items()}
        self._store(counts_file, {**_to_json(result), "linked": linked})
        return result

    def _planned(self, source: Path) -> tuple[Plan, str]:
        """A unit's plan and cache key (the key leaves the output file out)."""
        with tempfile.TemporaryDirectory(prefix="roofcast-cubin-") as tmp:
            plan = self.plan(source, Path(tmp) / "unit.cubin")
        return plan, self._key(source, [*plan.command, *plan.then], plan.identity)

    def _sass(self, source: Path, key: str) -> tuple[str, str]:
        """(error, SASS text) of a unit: from the cache, else compiled and cached."""
        sass_file = self.cache_root / key[:2] / f"{key}.sass.gz"
        stored = self._load(sass_file)
        if stored is not None and isinstance(stored.get("sass"), str):
            return str(stored.get("error", "")), stored["sass"]
        with tempfile.TemporaryDirectory(prefix="roofcast-cubin-") as tmp:
            cubin = Path(tmp) / "unit.cubin"
            plan = self.plan(source, cubin)
            error, text = self._run(plan.command, cubin, plan.then)
        if not error.startswith("timed out"):
            self._store(sass_file, {"error": error, "sass": text})
        return error, text

    def _linkable(self, source: Path) -> tuple[str, str]:
        """S33: a unit's (cache key, SASS text; '' when it does not compile)."""
        key = self._planned(source)[1]
        error, text = self._sass(source, key)
        return key, "" if error else text

    def _beside(self, source: Path) -> list[Path]:
        """S33: the other units of the program: the database's CUDA units in the same
        folder, else the .cu files there."""
        if self.database is not None:
            units = [u.file for u in self.database.units.values() if u.cuda]
            found = sorted(f for f in units if f.parent == source.parent and f != source)
            if found:
                return found
        return [f for f in sorted(source.parent.glob("*.cu")) if f != source]

    def _linked_current(self, data: dict) -> bool:
        """S33: whether the units a cached reading linked functions from are unchanged."""
        for path, key in data.get("linked", ()):
            other = Path(path)
            if not other.is_file() or self._planned(other)[1] != key:
                return False
        return True

    def _load(self, path: Path) -> dict | None:
        return load_cached(path) if self.use_cache else None

    def _store(self, path: Path, data: dict) -> None:
        if self.use_cache:
            store_cached(path, data)

    def _run(self, command: list[str], cubin: Path, then: list[str]) -> tuple[str, str]:
        """(error, '') or ('', the cubin's `nvdisasm -gi -c` text)."""
        for step in (command, then) if then else (command,):
            name = "nvcc" if step[0] == self.tools.nvcc else Path(step[0]).name
            error = run_step(step, name)
            if error:
                return error, ""
        if not cubin.is_file():
            return f"{Path(command[0]).name} failed: no cubin written", ""
        assert self.tools.nvdisasm is not None
        return disassemble(self.tools.nvdisasm, cubin)

    def prepare(
        self,
        sources: Iterable[Path],
        jobs: int = 1,
        on_done: Callable[[int, int], None] | None = None,
    ) -> None:
        """Compile the CUDA files among `sources` in `jobs` threads (each waits on nvcc)."""
        todo = sorted({Path(s).resolve() for s in sources if Path(s).suffix == ".cu"})
        if self.unavailable() or not todo:
            return
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for done, _ in enumerate(pool.map(self.unit, todo), 1):
                if on_done:
                    on_done(done, len(todo))

    def kernel(
        self, file: str | Path, name: str, template_args: Sequence[str] = ()
    ) -> tuple[KernelSass | None, str]:
        """(the kernel's classed SASS, '') or (None, why not). A kernel in a file that does
        not compile alone (a header, or a .cu meant to be #included) is looked for in the
        .cu files beside it that include it."""
        path = Path(file).resolve()
        why = ""
        for candidate in self.candidates(path):
            unit = self.unit(candidate)
            if unit.error:
                why = why or unit.error
                continue
            found = [(m, k) for m, k in sorted(unit.kernels.items()) if _names(m, name)]
            if found:
                return _instance(found, template_args), ""
            why = why or f"no SASS for {name} in {candidate.name} (never instantiated?)"
        return None, why or f"{path.name}: no .cu file compiles it"

    def candidates(self, path: Path) -> list[Path]:
        """The file itself if a .cu, then the .cu files beside it or up to two folders up
        that include it, directly or through other local headers (a kernel in a header, or
        in a .cu meant to be #included, is compiled in the unit that includes it)."""
        with self._lock:
            known = self._candidates.get(path)
        if known is not None:
            return known
        out = [path] if path.suffix == ".cu" else []
        siblings: list[Path] = []
        for folder in (path.parent, *path.parents[1:3]):  # beside it, then up two folders
            try:
                siblings += sorted(folder.glob("*.cu"))
            except OSError:
                continue
        unit = self.database.unit_for(path) if self.database is not None else None
        search = [*(unit.include_dirs if unit else ()), *self.include_dirs]
        for sibling in siblings:
            if sibling != path and path in local_headers(sibling, search):
                out.append(sibling)
        if self.database is not None and unit is None:
            # S22: a .cu the build never compiles alone runs as part of the units that
            # include it: those come first, compiled as the build compiled them
            built = [c for c in out if self.database.unit_for(c) is not None]
            out = built + [c for c in out if c not in built]
        with self._lock:
            self._candidates[path] = out
        return out


def _instance(found: list[tuple[str, KernelSass]], args: Sequence[str]) -> KernelSass:
    """Of a template kernel's instances, the first whose demangled template arguments hold
    every bound argument (`T=double` -> `k<double>`); else the first by mangled name."""
    if len(found) > 1 and args:
        names = demangle([m for m, _ in found])
        for (_, kernel), text in zip(found, names, strict=True):
            head = text.split("(", 1)[0]
            if all(re.search(rf"[<,\s]{re.escape(a.strip())}[,>\s]", head) for a in args):
                return kernel
    return found[0][1]


def demangle(names: Sequence[str]) -> list[str]:
    """Itanium names demangled by cu++filt or c++filt (the names as data on stdin); the
    names themselves where neither is found or it fails."""
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if tool is None or not names:
        return list(names)
    try:
        done = subprocess.run(
            [tool], input="\n".join(names), capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return list(names)
    lines = done.stdout.splitlines()
    return lines if done.returncode == 0 and len(lines) == len(names) else list(names)


def template_args(ir, bound: Mapping[str, str]) -> list[str]:
    """The values `bound` gives the kernel's template parameters, in their order."""
    out = []
    for param in ir.template_params:
        found = re.search(r"([A-Za-z_]\w*)\s*$", param.split("=", 1)[0].strip().rstrip("."))
        if found and found.group(1) in bound:
            out.append(str(bound[found.group(1)]))
    return out


def _names(mangled: str, name: str) -> bool:
    return demangled_base(mangled) == name.split("::")[-1]
