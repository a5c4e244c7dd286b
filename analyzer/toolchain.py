"""Finding clang for CUDA and a CUDA tree it can compile against.

The ground truth's binaries were built with `clang++ -x cuda`, and clang emits different
device code from nvcc (popcount idioms, approximate sqrtf, loop shapes), so compile mode
uses clang where the build does. clang checks the CUDA version it is given and fails on
CUDA 13 (headers it includes are gone), so it needs a CUDA 12 tree: a toolkit of that
major version, or one assembled from PyPI's CUDA 12 wheels (the `compile` extra) as a
folder of symbolic links under the roofcast cache. Shared by compile mode (CUDA units) and
OpenMP offload compiles (ptxas and libdevice for nvptx64).

Overrides (both read from the environment, as a build would):
- `ROOFCAST_CLANG`: the clang++ to use (a name on PATH or a path), or `none` for never;
- `ROOFCAST_CLANG_CUDA`: the CUDA tree to give clang as `--cuda-path`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePath

#: the CUDA major version clang's CUDA support is built against (CUDA 13 drops headers
#: clang's CUDA wrappers include)
CUDA_MAJOR = 12
#: a compiler name that is clang's (clang, clang++, clang++-19, clang-19.1)
_CLANG_NAME = re.compile(r"^clang(\+\+)?(-\d+(\.\d+)*)?$")
_VERSIONED_CLANGXX = re.compile(r"^clang\+\+-(\d+)$")
_CLANG_VERSION = re.compile(r"clang version (\d+)\.(\d+)(?:\.(\d+))?")
_CUDA_VERSION = re.compile(rb"#\s*define\s+CUDA_VERSION\s+(\d+)")
#: the PyPI CUDA 12 wheels' folders under the `nvidia` namespace package, and what each
#: gives the tree: headers (runtime, C++ core libraries, nvcc's crt/, cuRAND, which
#: clang's CUDA wrapper includes), ptxas and libdevice
_WHEEL_INCLUDES = ("cuda_runtime", "cuda_cccl", "cuda_nvcc", "curand")
_OFF = frozenset({"none", "off", "no", "0", "false"})


class ToolchainError(RuntimeError):
    """Why no clang toolchain for CUDA can be had: one line for the user."""


def is_clang(driver: str) -> bool:
    """Whether a compile command's first word names clang (any path, any version suffix)."""
    return bool(_CLANG_NAME.match(PurePath(driver).name))


@dataclass(frozen=True)
class CudaTree:
    """A CUDA installation as clang's `--cuda-path` wants it (include/, bin/ptxas,
    nvvm/libdevice/)."""

    path: Path
    version: str  # "12.6"

    @property
    def ptxas(self) -> Path:
        return self.path / "bin" / "ptxas"

    @property
    def libdevice(self) -> Path:
        return self.path / "nvvm" / "libdevice"


@dataclass(frozen=True)
class ClangCuda:
    """A clang that compiles CUDA, with the tree it compiles against."""

    clang: str  # the program (an absolute path)
    version: str  # "19.1.7"
    cuda: CudaTree

    @property
    def name(self) -> str:
        return PurePath(self.clang).name

    def describe(self) -> str:
        """One line for reports: which clang, which CUDA."""
        return f"{self.name} {self.version}, CUDA {self.cuda.version}"


def find_clang(preferred: str | None = None) -> str:
    """The clang++ program to compile CUDA with: `ROOFCAST_CLANG` if set; else
    `preferred` (a build's compiler: only its name is looked up on PATH, never a path a
    data file gives); else the newest `clang++-NN` on PATH, then `clang++`.
    ToolchainError when none is found or `ROOFCAST_CLANG` says none."""
    override = os.environ.get("ROOFCAST_CLANG", "").strip()
    if override:
        if override.lower() in _OFF:
            raise ToolchainError(f"ROOFCAST_CLANG={override}: clang not used")
        found = shutil.which(override)
        if found is None:
            raise ToolchainError(f"ROOFCAST_CLANG={override}: no such program")
        return os.path.abspath(found)
    if preferred and is_clang(preferred):
        found = shutil.which(PurePath(preferred).name)
        if found is not None:
            return os.path.abspath(found)
    newest = _newest_versioned_clang()
    if newest is not None:
        return newest
    found = shutil.which("clang++")
    if found is None:
        wanted = PurePath(preferred).name if preferred else "clang++"
        raise ToolchainError(f"{wanted} not found on PATH (nor any clang++-NN)")
    return os.path.abspath(found)


def _newest_versioned_clang() -> str | None:
    """The `clang++-NN` with the highest NN in PATH's folders (the first of equals)."""
    best: tuple[int, str] | None = None
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for name in names:
            found = _VERSIONED_CLANGXX.match(name)
            path = os.path.join(folder or ".", name)
            if found and os.access(path, os.X_OK) and os.path.isfile(path):
                major = int(found.group(1))
                if best is None or major > best[0]:
                    best = (major, os.path.abspath(path))
    return best[1] if best else None


@cache
def clang_version(clang: str) -> str:
    """clang's `major.minor.patch` from `--version`; ToolchainError if it is not clang."""
    try:
        done = subprocess.run(
            [clang, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolchainError(f"{clang}: cannot run ({exc})") from None
    found = _CLANG_VERSION.search(done.stdout)
    if done.returncode != 0 or found is None:
        raise ToolchainError(f"{clang}: not a clang (its --version names no clang version)")
    return ".".join(g for g in found.groups() if g is not None)


def cuda_version(root: Path) -> str | None:
    """A tree's CUDA version from include/cuda.h's CUDA_VERSION (12060 -> "12.6")."""
    try:
        text = (root / "include" / "cuda.h").read_bytes()
    except OSError:
        return None
    found = _CUDA_VERSION.search(text)
    if found is None:
        return None
    number = int(found.group(1))
    return f"{number // 1000}.{number % 1000 // 10}"


def _usable(root: Path) -> CudaTree | None:
    """The tree at `root` if it is a CUDA 12 tree clang can use."""
    version = cuda_version(root)
    if version is None or int(version.split(".")[0]) != CUDA_MAJOR:
        return None
    tree = CudaTree(root, version)
    if not os.access(tree.ptxas, os.X_OK) or not (tree.libdevice / "libdevice.10.bc").is_file():
        return None
    return tree


def find_cuda_tree() -> CudaTree:
    """A CUDA 12 tree for clang: `ROOFCAST_CLANG_CUDA`; else CUDA_HOME/CUDA_PATH, then
    /usr/local/cuda and /usr/local/cuda-12.* (newest first), where those are CUDA 12;
    else one assembled from the CUDA 12 wheels. ToolchainError when there is none."""
    override = os.environ.get("ROOFCAST_CLANG_CUDA", "").strip()
    if override:
        tree = _usable(Path(override))
        if tree is None:
            raise ToolchainError(
                f"ROOFCAST_CLANG_CUDA={override}: not a CUDA {CUDA_MAJOR} tree "
                "(include/cuda.h, bin/ptxas, nvvm/libdevice)"
            )
        return tree
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    local = sorted(Path("/usr/local").glob(f"cuda-{CUDA_MAJOR}.*"), key=_version_key)
    for root in [*(Path(c) for c in candidates if c), *reversed(local)]:
        tree = _usable(root)
        if tree is not None:
            return tree
    tree = wheel_tree()
    if tree is None:
        raise ToolchainError(
            f"no CUDA {CUDA_MAJOR} tree for clang (install a CUDA {CUDA_MAJOR} toolkit, or "
            "pip install 'roofcast[compile]', or set ROOFCAST_CLANG_CUDA)"
        )
    return tree


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", path.name))


def _wheel_roots() -> list[Path]:
    """The folders of the `nvidia` namespace package (where PyPI's CUDA wheels install)."""
    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _wheel_parts() -> dict[str, Path] | None:
    """The wheels' folders a tree is made of, or None when one is missing."""
    parts: dict[str, Path] = {}
    for root in _wheel_roots():
        for name in _WHEEL_INCLUDES:
            if name not in parts and (root / name / "include").is_dir():
                parts[name] = root / name
    nvcc = parts.get("cuda_nvcc")
    if len(parts) < len(_WHEEL_INCLUDES) or nvcc is None:
        return None
    if not (nvcc / "bin" / "ptxas").is_file() or not (nvcc / "nvvm" / "libdevice").is_dir():
        return None
    return parts


def cache_root() -> Path:
    """roofcast's cache folder (`XDG_CACHE_HOME`, else ~/.cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "roofcast"


@cache
def wheel_tree() -> CudaTree | None:
    """The CUDA 12 tree made of the installed wheels: a folder of symbolic links under the
    cache, named by a hash of where the wheels are and their version (a reinstall makes a
    new one), built once in a temporary folder and renamed into place (so concurrent
    processes never see half a tree). None when the wheels are not all installed."""
    parts = _wheel_parts()
    if parts is None:
        return None
    version = cuda_version(parts["cuda_runtime"])
    if version is None:
        return None
    digest = hashlib.sha256()
    for name, folder in sorted(parts.items()):
        digest.update(f"{name}={folder}\0".encode())
        metadata = sorted(folder.parent.parent.glob(f"nvidia_{name}_cu{CUDA_MAJOR}-*.dist-info"))
        digest.update(" ".join(m.name for m in metadata).encode())
    target = cache_root() / f"cuda-{version}-{digest.hexdigest()[:12]}"
    tree = _usable(target)
    if tree is not None:
        return tree
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".cuda-") as tmp:
            staged = Path(tmp) / "tree"
            _link_tree(staged, parts)
            with contextlib.suppress(OSError):  # another process put its (same) tree first
                staged.rename(target)
    except OSError:
        return None
    return _usable(target)


def _link_tree(root: Path, parts: dict[str, Path]) -> None:
    """include/ holding a link to each entry of the wheels' include folders (the first
    wheel naming an entry wins), bin/ptxas and nvvm/libdevice."""
    include = root / "include"
    include.mkdir(parents=True)
    for name in _WHEEL_INCLUDES:
        for entry in sorted((parts[name] / "include").iterdir()):
            if entry.name == "__init__.py" or entry.name == "__pycache__":
                continue
            link = include / entry.name
            if not link.exists():
                link.symlink_to(entry.resolve())
    (root / "bin").mkdir()
    (root / "bin" / "ptxas").symlink_to((parts["cuda_nvcc"] / "bin" / "ptxas").resolve())
    (root / "nvvm").mkdir()
    (root / "nvvm" / "libdevice").symlink_to((parts["cuda_nvcc"] / "nvvm" / "libdevice").resolve())


def clang_cuda(preferred: str | None = None) -> ClangCuda:
    """clang (`find_clang`) and a CUDA 12 tree (`find_cuda_tree`) together;
    ToolchainError, one line, when either is missing."""
    clang = find_clang(preferred)
    version = clang_version(clang)
    return ClangCuda(clang, version, find_cuda_tree())


def clang_cuda_flags(toolchain: ClangCuda, arch: str) -> list[str]:
    """The flags any device compile against the tree needs: the architecture, the tree,
    and no warning that clang does not know the tree's CUDA version (it compiles a newer
    CUDA 12 as the newest it knows)."""
    return [
        f"--cuda-gpu-arch={arch}",
        f"--cuda-path={toolchain.cuda.path}",
        "-Wno-unknown-cuda-version",
    ]
