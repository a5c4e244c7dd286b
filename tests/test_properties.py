"""Properties of `analyze` over generated CUDA / OpenMP sources and hostile `--define` values.

The sources come from a small grammar (tests/fuzzing/strategies.py): kernels with
declarations, loops, branches, array accesses, arithmetic of several types, __device__
helpers, macros, #if/#ifdef and OpenMP target regions. Whatever the input, the CLI must
answer with a report or a one-line error and a documented exit code; the report must not
depend on the number of processes or on blanks and comments; nothing but the requested
output may be written. Budgets are fractions of the Hypothesis profile (tests/conftest.py):
`--hypothesis-profile=long` searches for longer.

The tests at the end pin known issues that other branches are fixing; they are expected to
fail (strict) until then, so each turns into an unexpected pass when its fix is merged.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fuzzing.strategies import Source, defines, gaps, plain_defines, render, sources
from hypothesis import given, note, settings
from hypothesis import strategies as st
from roofcast.gpu_specs import load_gpu
from typer.testing import CliRunner

from roofcast.cli.main import app
from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor

EXIT_CODES = {0, 1, 2, 3}  # README: ok, --fail-on met, bad input, an outside tool failed
REPO = Path(__file__).resolve().parents[1]


def budget(fraction: float) -> settings:
    """Settings for a property that gets `fraction` of the profile's examples (at least 2):
    spawning processes costs seconds, an in-process analysis a tenth of one."""
    return settings(max_examples=max(2, int(settings.default.max_examples * fraction)))


@contextmanager
def written(source: Source, name: str = "gen") -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}{source.suffix}"
        path.write_text(render(source), encoding="utf-8")
        yield path


def invoke(*args: str):
    """The real `roofcast` entry in this process (one job: no fork per example)."""
    return CliRunner().invoke(app, ["analyze", *args], catch_exceptions=True)


# hostile values for the other options, beside valid ones
_OPTIONS = st.lists(
    st.sampled_from(
        [
            ("--format", "json"),
            ("--format", "csv"),
            ("--format", "sarif"),
            ("--format", "table"),
            ("--format", "yaml"),
            ("--gpu", "h100"),
            ("--gpu", "rtx3080"),
            ("--gpu", "nope"),
            ("--gpu", ""),
            ("--block", "256"),
            ("--block", "16,16"),
            ("--block", "0"),
            ("--block", "-4"),
            ("--block", "1,2,3,4"),
            ("--block", "abc"),
            ("--block", "99999999999999999999"),
            ("--grid", "4096"),
            ("--grid", "64x64"),
            ("--grid", "(1,1,1)"),
            ("--grid", ","),
            ("--kernel", "kernel0"),
            ("--kernel", "("),
            ("--kernel", "^$"),
            ("--predictor", "roofline"),
            ("--predictor", "baseline"),
            ("--predictor", "nope"),
            ("--jobs", "0"),
        ]
    ),
    max_size=3,
)


@st.composite
def invocations(draw) -> tuple[Source, list[str]]:
    """A generated file with `-D` bindings and other options, valid or not."""
    source = draw(sources())
    args = [a for d in draw(defines()) for a in ("-D", d)]
    args += [a for pair in draw(_OPTIONS) for a in pair]
    return source, args


@budget(1.0)
@given(invocations())
def test_analyze_never_shows_a_traceback(case):
    source, args = case
    with written(source) as path:
        result = invoke(str(path), "-j", "1", *args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}\n{render(source)}"
    )
    assert "Traceback" not in result.stdout + result.stderr
    # a crash inside one file's analysis is contained as an "internal error" line: still a bug
    assert "internal error" not in result.stdout + result.stderr, render(source)
    if result.exit_code != 0:
        assert result.stderr.strip(), "a failure must say why on stderr"


@budget(1.0)
@given(invocations())
def test_analyze_exit_codes_are_the_documented_ones(case):
    source, args = case
    with written(source) as path:
        result = invoke(str(path), "-j", "1", *args)
    code = result.exit_code
    if not isinstance(result.exception, SystemExit | None):
        code = 1  # what the interpreter exits with on an uncaught exception (CliRunner's too)
    assert code in EXIT_CODES, (code, result.stderr)
    formats = [args[i + 1] for i, a in enumerate(args) if a == "--format"]
    if code == 0 and formats and formats[-1] == "json":  # the last --format wins
        json.loads(result.stdout, parse_constant=_reject)  # strict JSON: no NaN or Infinity


def _reject(name: str) -> float:
    raise AssertionError(f"the JSON report holds {name}, which is not JSON")


def _report(paths: list[Path], defs: dict[str, str], jobs: int) -> dict:
    report = analyze_paths(paths, load_gpu("a100"), defs, RooflinePredictor(), jobs=jobs)
    return report.to_json()


def _as_defines(items: list[str]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in items)


@budget(0.25)
@given(st.lists(sources(), min_size=2, max_size=5), defines())
def test_jobs_1_and_2_give_identical_reports(files, defs):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i, source in enumerate(files):
            path = root / f"prog{i % 3}" / f"file{i}{source.suffix}"  # several groups
            path.parent.mkdir(exist_ok=True)
            path.write_text(render(source), encoding="utf-8")
        bindings = _as_defines(defs)
        assert _report([root], bindings, 2) == _report([root], bindings, 1)


#: what a layout change may move: the line a kernel starts on; the two files differ in path
_POSITIONS = ("line", "file")


def _counts(report: dict) -> list[dict]:
    """The kernels without their positions. The symbol of an unknown trip count is named by
    its loop's line (`trip_L12`): renamed by its rank among the kernel's loop lines, which a
    layout keeps in order."""
    kernels = []
    for kernel in report["kernels"]:
        kept = {k: v for k, v in kernel.items() if k not in _POSITIONS}
        for array in (kept.get("dram_bytes") or {}).get("arrays", []):
            array.pop("lines", None)  # positions too
        text = json.dumps(kept)
        rank = {n: f"trip_loop{i}" for i, n in enumerate(sorted(set(_TRIP.findall(text)), key=int))}
        kernels.append(json.loads(_TRIP.sub(lambda m, rank=rank: rank[m.group(1)], text)))
    return sorted(kernels, key=lambda k: k["name"])


_TRIP = re.compile(r"trip_L(\d+)")
#: fields that name the trip symbols; two loops put on one line share one (finding F6)
_SYMBOLIC = ("flops_per_thread", "bytes_per_thread", "symbols", "defaults_applied", "reason")


def _comparable(expected: list[dict], got: list[dict]) -> tuple[list[dict], list[dict]]:
    """Both reports, without the symbolic fields of a kernel whose loops came to share a
    trip symbol under the new layout (pinned by its own test)."""
    for old, new in zip(expected, got, strict=False):
        if len(old["symbols"]) != len(new["symbols"]) and any(
            s.startswith("trip_") for s in old["symbols"]
        ):
            for field in _SYMBOLIC:
                old.pop(field), new.pop(field)
    return expected, got


@budget(1.0)
@given(sources(), gaps(), plain_defines())
def test_counts_do_not_depend_on_blanks_and_comments(source, layout, defs):
    bindings = _as_defines(defs)
    with tempfile.TemporaryDirectory() as tmp:
        plain, spaced = Path(tmp) / "a" / f"k{source.suffix}", Path(tmp) / "b" / f"k{source.suffix}"
        plain.parent.mkdir()
        spaced.parent.mkdir()
        plain.write_text(render(source), encoding="utf-8")
        spaced.write_text(render(source, layout), encoding="utf-8")
        expected = _report([plain], bindings, 1)
        got = _report([spaced], bindings, 1)
    note(f"plain:\n{render(source)}\nre-spaced:\n{render(source, layout)}")
    assert expected["kernels"], "every generated source has a kernel"
    before, after = _comparable(_counts(expected), _counts(got))
    assert after == before, _differences(before, after)
    assert len(got["problems"]) == len(expected["problems"])


def _differences(expected: list[dict], got: list[dict]) -> list[str]:
    """Per kernel, the fields that differ: a short message instead of two whole reports."""
    out = [f"{len(expected)} kernels, then {len(got)}"] if len(expected) != len(got) else []
    for old, new in zip(expected, got, strict=False):
        out += [
            f"{old['name']}.{k}: {old[k]!r} -> {new.get(k)!r}" for k in old if old[k] != new.get(k)
        ]
    return out


def _subprocess(
    path: Path, *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    code = "import sys; from roofcast.cli.main import app; sys.argv[0] = 'roofcast'; app()"
    return subprocess.run(
        [sys.executable, "-c", code, "analyze", str(path), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=env or {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=_memory_cap,
    )


def _memory_cap() -> None:
    """A runaway computation (a tower of powers) fails instead of swapping the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _tree(*roots: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                path = Path(folder) / name
                stat = path.stat()
                out[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return out


def _repo_tree() -> dict[str, tuple[int, int]]:
    """The checkout's own files (not the virtual environment or git's)."""
    skip = {".venv", ".git", ".pytest_cache", ".ruff_cache", ".hypothesis", "__pycache__"}
    out = {}
    for folder, dirs, names in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in names:
            stat = (Path(folder) / name).stat()
            out[os.path.join(folder, name)] = (stat.st_size, stat.st_mtime_ns)
    return out


@budget(0.1)
@given(
    sources(),
    defines(),
    st.sampled_from(["json", "csv", "sarif", "table"]),
    st.sampled_from(["1", "2"]),
)
def test_nothing_is_written_but_the_output(source, defs, fmt, jobs):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, cache, temp, cwd, inputs = (root / n for n in ("home", "cache", "tmp", "cwd", "in"))
        for folder in (home, cache, temp, cwd, inputs):
            folder.mkdir()
        path = inputs / f"k{source.suffix}"
        path.write_text(render(source), encoding="utf-8")
        env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CACHE_HOME": str(cache),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "TMPDIR": str(temp),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.pop("MPLCONFIGDIR", None)
        before, repo_before = _tree(root), _repo_tree()
        args = [a for d in defs for a in ("-D", d)]
        proc = _subprocess(path, "-f", fmt, "-j", jobs, "-o", "report.out", *args, cwd=cwd, env=env)
        after = _tree(root)
        assert "Traceback" not in proc.stderr, proc.stderr
        allowed = {str(cwd / "report.out")}
        changed = {p for p in after if after[p] != before.get(p)} | (set(before) - set(after))
        assert changed <= allowed, (sorted(changed - allowed), proc.stderr)
        assert _repo_tree() == repo_before


# ---------------------------------------------------------------- known issues


def _analyze_text(tmp_path: Path, text: str, suffix: str = ".cu", *args: str):
    path = tmp_path / f"k{suffix}"
    path.write_text(text, encoding="utf-8")
    return invoke(str(path), "-j", "1", "-f", "json", *args)


def _clean_exit(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {str(result.exception)[:200]}"
    )
    assert result.exit_code == 0, result.stderr


def test_known_issue_400_nested_ifs_are_analysed(tmp_path):
    depth = 400
    body = "if (i > 0) {\n" * depth + "y[i] = x[i] * 2.0f;\n" + "}\n" * depth
    text = f"__global__ void deep(const float* x, float* y) {{\nint i = threadIdx.x;\n{body}}}\n"
    result = _analyze_text(tmp_path, text)
    _clean_exit(result)
    assert json.loads(result.stdout)["kernels"][0]["name"] == "deep"


def test_known_issue_a_500_term_sum_is_analysed(tmp_path):
    terms = " + ".join(f"x[{k}]" for k in range(500))
    text = f"__global__ void flat(const float* x, float* y) {{\ny[0] = {terms};\n}}\n"
    result = _analyze_text(tmp_path, text)
    _clean_exit(result)
    assert json.loads(result.stdout)["kernels"][0]["flops_per_thread"]["sp"] == 499


#: Seconds before a run counts as hung: one run takes about 4 s here, a power tower evaluated
#: would take hours; 10 s was exceeded on a loaded 2-core machine with no hang at all.
HANG = 60

_KERNEL = "__global__ void k(float* y) {\n  for (int j = 0; j < N; j++) y[j] += 1.0f;\n}\n"


def test_known_issue_a_define_value_is_never_run_as_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "ran"
    payload = f"N=__import__('pathlib').Path({str(marker)!r}).touch()"
    _analyze_text(tmp_path, _KERNEL, ".cu", "-D", payload)
    assert not marker.exists(), "the --define value was executed"


def test_known_issue_a_define_power_tower_does_not_hang(tmp_path):
    (tmp_path / "k.cu").write_text(_KERNEL, encoding="utf-8")
    proc = _subprocess(
        tmp_path / "k.cu", "-f", "json", "-D", "N=9**9**9**9", cwd=tmp_path, timeout=HANG
    )
    assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr


def test_known_issue_an_if_power_tower_does_not_hang(tmp_path):
    text = "#if 9**9**9**9\n#define N 4\n#else\n#define N 8\n#endif\n" + _KERNEL
    (tmp_path / "k.cu").write_text(text, encoding="utf-8")
    proc = _subprocess(tmp_path / "k.cu", "-f", "json", cwd=tmp_path, timeout=HANG)
    assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr


def test_known_issue_output_to_a_folder_is_a_clear_error(tmp_path):
    (tmp_path / "out").mkdir()
    result = _analyze_text(tmp_path, _KERNEL, ".cu", "-o", str(tmp_path / "out"))
    assert isinstance(result.exception, SystemExit) and result.exit_code == 2
    assert result.stderr.startswith("roofcast: error: ") and "Traceback" not in result.stderr


# ---------------------------------------------------------------- findings (findings.md)


def test_finding_a_comment_after_define_still_defines_the_macro(tmp_path):
    kernel = "__global__ void k(float* a, int n) {\n  float v = a[AT(n, 1)];\n}\n"
    plain = "#define M 1\n#define AT(r, c) ((r) * M + (c))\n" + kernel
    commented = "#define /* c */ M 1\n#define /* c */ AT(r, c) ((r) * M + (c))\n" + kernel
    counts = [
        json.loads(_analyze_text(tmp_path, text).stdout)["kernels"][0]["flops_per_thread"]
        for text in (plain, commented)
    ]
    assert counts[1] == counts[0]


def test_a_comment_between_the_words_of_pragma_omp_target_keeps_the_region(tmp_path):
    """Finding F1 (fixed here): the prefilter of non-.cu files skipped such a file."""
    loop = "for (int i = 0; i < n; i++) { a[i] = 1.0f; }\n"
    for pragma in (
        "#pragma omp /* c */ target teams distribute parallel for",
        "# /* c */ pragma /* c */ omp target teams distribute parallel for",
    ):
        text = f"void f(float* a, int n) {{\n{pragma}\n{loop}}}\n"
        result = _analyze_text(tmp_path, text, ".cpp", "--predictor", "roofline")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["kernels"][0]["bytes_per_thread"]["store"] == 4


def test_finding_two_loops_on_one_line_have_their_own_trip_symbols(tmp_path):
    loops = "for (int j = 0; j < idx[0]; j++) for (int q = 0; q < idx[1]; q++) a[q] += 1.0f;"
    text = f"__global__ void k(float* a, const int* idx) {{\n  {loops}\n}}\n"
    result = _analyze_text(tmp_path, text, ".cu", "--predictor", "roofline")
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["kernels"][0]["symbols"]) == 2


def test_finding_an_access_spelled_without_blanks_is_the_same_access(tmp_path):
    def loads(product: str) -> object:
        body = f"  int i = threadIdx.x;\n  b[i] = {product};\n"
        text = f"__global__ void k(float* a, float* b) {{\n{body}}}\n"
        result = _analyze_text(tmp_path, text, ".cu", "--predictor", "roofline")
        return json.loads(result.stdout)["kernels"][0]["bytes_per_thread"]["load"]

    assert loads("a[i + 1] * a[i + 1]") == 4  # one load: the same element, read twice
    assert loads("a[i + 1] * a[i+1]") == 4
