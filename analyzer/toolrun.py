"""Running the compile tools and keeping their output: one place for what CUDA and OpenMP
compile mode share (a tool's one-line failure reason, nvdisasm's listing, the gzip'd JSON
cache files written atomically)."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import threading
from pathlib import Path

#: seconds one compiler or disassembler run may take
TOOL_TIMEOUT = 300.0


def first_error(text: str) -> str:
    """The compiler's first error line, shortened (the one-line fallback reason)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    chosen = next((ln for ln in lines if "error" in ln.lower()), lines[0] if lines else "")
    chosen = re.sub(r"^\S*/", "", chosen)  # the path before the file name
    return chosen[:160]


def run_step(command: list[str], name: str) -> str:
    """Run one tool (an argument list, never a shell); '' or why it failed, in one line."""
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return f"timed out: {name} took longer than {TOOL_TIMEOUT:g} s"
    except OSError as exc:
        return f"{name} could not run: {exc.strerror or exc}"
    if done.returncode != 0:
        return f"{name} failed: {first_error(done.stderr or done.stdout)}"
    return ""


def disassemble(nvdisasm: str, cubin: Path) -> tuple[str, str]:
    """(error, '') or ('', the cubin's `nvdisasm -gi -c` listing, with line information)."""
    try:
        shown = subprocess.run(
            [nvdisasm, "-gi", "-c", str(cubin)],
            capture_output=True,
            text=True,
            timeout=TOOL_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"timed out: nvdisasm took longer than {TOOL_TIMEOUT:g} s", ""
    except OSError as exc:
        return f"nvdisasm could not run: {exc.strerror or exc}", ""
    if shown.returncode != 0:
        return f"nvdisasm failed: {first_error(shown.stderr)}", ""
    return "", shown.stdout


def load_cached(path: Path) -> dict | None:
    """A cache file's JSON object, or None (missing, unreadable, or not an object)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, ValueError, EOFError):
        return None
    return data if isinstance(data, dict) else None


def store_cached(path: Path, data: dict) -> None:
    """Write a cache file whole or not at all (a temporary name, then a rename)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        part.write_bytes(gzip.compress(json.dumps(data).encode()))
        part.replace(path)
    except OSError:
        pass  # a cache that cannot be written only costs time
