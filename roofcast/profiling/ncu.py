"""Build and run Nsight Compute (`ncu`) command lines, always as argument lists (never a shell
string), and turn its known failures into one-line errors a user can act on."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from roofcast.errors import EXIT_RUNTIME, EXIT_USAGE, RoofcastError

#: Counters added to the roofline set: thread-level integer instructions (the INT roofline,
#: as gpuFLOPBench does) and half-precision add/mul/fma as plain `.sum` counts.
EXTRA_METRICS: tuple[str, ...] = (
    "smsp__sass_thread_inst_executed_op_integer_pred_on",
    "smsp__sass_thread_inst_executed_op_hadd_pred_on",
    "smsp__sass_thread_inst_executed_op_hmul_pred_on",
    "smsp__sass_thread_inst_executed_op_hfma_pred_on",
)
CSV_FLAGS: tuple[str, ...] = ("--csv", "--page", "raw", "--print-units", "base")

PERMISSION_HELP = (
    "GPU performance counters are restricted to admin users (ERR_NVGPUCTRPERM): run as root "
    "or with CAP_SYS_ADMIN, or allow all users with the nvidia kernel module option "
    "`options nvidia NVreg_RestrictProfilingToAdminUsers=0` (e.g. in "
    "/etc/modprobe.d/nvidia-profiling.conf, then reload the module or reboot)"
)
_NO_GPU = re.compile(
    r"no (supported|cuda-capable) (gpu|device)|cuda_error_no_device|cudaErrorNoDevice|"
    r"no devices? (were|was) found|unable to find any supported gpu",
    re.IGNORECASE,
)
_APP_ERROR = re.compile(r"application returned an error code \((-?\d+)\)", re.IGNORECASE)


class ProfilingError(RoofcastError):
    """A profiling step failed for a reason outside roofcast (ncu, the GPU, the program)."""

    def __init__(self, message: str, exit_code: int = EXIT_RUNTIME) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def find_ncu() -> str:
    """Path of `ncu`: $PATH first, then the CUDA toolkit's usual places."""
    found = shutil.which("ncu")
    if found:
        return found
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = Path(cuda_home) / "bin" / "ncu"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    raise ProfilingError(
        "ncu (Nsight Compute CLI) not found: install Nsight Compute (it ships with the CUDA "
        "toolkit) and put its bin directory on PATH, or set CUDA_HOME"
    )


def profile_command(
    program: Sequence[str],
    *,
    kernel_regex: str | None = None,
    launch_count: int | None = None,
    ncu: str = "ncu",
    log_file: str | None = None,
) -> list[str]:
    """`ncu --set roofline --metrics ... --csv --page raw --print-units base [-k regex:R] app`."""
    if not program:
        raise ProfilingError("no program to profile: give it after `--`", EXIT_USAGE)
    cmd = [ncu, "--set", "roofline", "--metrics", ",".join(EXTRA_METRICS), *CSV_FLAGS]
    if kernel_regex:
        cmd += ["-k", f"regex:{kernel_regex}"]
    if launch_count:
        cmd += ["-c", str(launch_count)]
    if log_file:
        cmd += ["--log-file", log_file]
    return cmd + list(program)


def import_command(report: str | Path, ncu: str = "ncu") -> list[str]:
    """`ncu --import report.ncu-rep --csv --page raw --print-units base`."""
    return [ncu, "--import", str(report), *CSV_FLAGS]


def diagnose(output: str, returncode: int, kernel_regex: str | None = None) -> None:
    """Raise the one error that explains a failed or empty ncu run; return if none applies."""
    if "ERR_NVGPUCTRPERM" in output:
        raise ProfilingError(PERMISSION_HELP)
    if _NO_GPU.search(output):
        raise ProfilingError("no usable NVIDIA GPU: ncu found no supported CUDA device here")
    app = _APP_ERROR.search(output)
    if app:
        raise ProfilingError(
            f"the profiled program failed with exit code {app.group(1)}{_last_error(output)}"
        )
    if "No kernels were profiled" in output:
        what = (
            f"no kernel matched regex '{kernel_regex}'"
            if kernel_regex
            else "the program launched no kernels"
        )
        raise ProfilingError(f"ncu profiled nothing: {what}")
    if returncode != 0:
        raise ProfilingError(f"ncu failed with exit code {returncode}{_last_error(output)}")


def _last_error(output: str) -> str:
    errors = [ln.strip() for ln in output.splitlines() if ln.startswith("==ERROR==")]
    return f": {errors[-1].removeprefix('==ERROR==').strip()}" if errors else ""


def check_program(program: Sequence[str]) -> None:
    """Fail early, with the path, when the program to profile cannot be run at all."""
    exe = program[0]
    resolved = shutil.which(exe) if os.sep not in exe else (exe if Path(exe).is_file() else None)
    if resolved is None:
        raise ProfilingError(f"program not found: {exe}", EXIT_USAGE)
    if not os.access(resolved, os.X_OK):
        raise ProfilingError(f"program is not executable: {exe}", EXIT_USAGE)


def run_profile(
    program: Sequence[str],
    *,
    kernel_regex: str | None = None,
    launch_count: int | None = None,
    timeout: float | None = None,
    strict: bool = True,
) -> str:
    """Profile `program` under ncu and return the raw CSV text; ProfilingError on failure.
    ncu's log (and its CSV) go to a file of their own so the program's output cannot mix in.
    `strict=False` keeps the launches of a program that exits non-zero (some benchmarks do
    after printing a failed self-check)."""
    check_program(program)
    ncu = find_ncu()
    with tempfile.TemporaryDirectory(prefix="roofcast-ncu-") as tmp:
        log = Path(tmp) / "ncu.log"
        cmd = profile_command(
            program,
            kernel_regex=kernel_regex,
            launch_count=launch_count,
            ncu=ncu,
            log_file=str(log),
        )
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired as err:
            raise ProfilingError(f"ncu did not finish within {timeout:g} s") from err
        text = log.read_text(errors="replace") if log.exists() else ""
    output = "\n".join((text, done.stdout, done.stderr))
    if '"ID",' not in text:
        diagnose(output, done.returncode, kernel_regex)
        raise ProfilingError("ncu produced no CSV table" + _last_error(output))
    if "ERR_NVGPUCTRPERM" in output or (strict and _APP_ERROR.search(output)):
        diagnose(output, done.returncode, kernel_regex)
    return text


def run_import(report: str | Path, timeout: float | None = 600) -> str:
    """Raw CSV of an existing .ncu-rep report."""
    ncu = find_ncu()
    try:
        done = subprocess.run(
            import_command(report, ncu),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as err:
        raise ProfilingError(f"ncu --import did not finish within {timeout:g} s") from err
    if done.returncode != 0 or '"ID",' not in done.stdout:
        diagnose(done.stdout + done.stderr, done.returncode or 1)
    return done.stdout
