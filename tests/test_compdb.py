"""Compile databases (compile_commands.json): each file analysed with its build's flags.

Every source and database here is written by the test. Which `#if` arm a build keeps is
seen through the kernels found (each arm defines a differently named kernel), and a -D
bound at counting time through a loop's trip count (hand count: one SP add per trip).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from roofcast.analyzer.compdb import load_database, parse_entry
from roofcast.gpu_specs import load_gpu
from typer.testing import CliRunner

from roofcast.cli.main import app
from roofcast.evaluation.manifest import load_manifest
from roofcast.evaluation.runner import BuildFlags, analyze_rows
from roofcast.pipeline import analyze_paths

ARMS = """\
#ifdef FAST
__global__ void fast_arm(float* a) { a[threadIdx.x] = 1.0f; }
#else
__global__ void slow_arm(float* a) { a[threadIdx.x] = 2.0f; }
#endif
#if MODE == 2
__global__ void mode_two(float* a) { a[threadIdx.x] = 3.0f; }
#elif MODE
__global__ void mode_set(float* a) { a[threadIdx.x] = 4.0f; }
#endif
"""


def _names(report: dict) -> set[str]:
    return {k["name"] for k in report["kernels"]}


def _write_db(path: Path, entries: list[dict]) -> Path:
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def _analyze(*args: object, cwd: Path | None = None):
    """`roofcast analyze ... -f json` in process; (exit code, report or None, stderr)."""
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, ["analyze", *map(str, args), "-f", "json"])
    finally:
        os.chdir(old)
    report = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, report, result.stderr


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """proj/src/k.cu (the arms), proj/src/plain.cu (no entry), proj/inc/defs.h."""
    src = tmp_path / "proj" / "src"
    src.mkdir(parents=True)
    (src / "k.cu").write_text(ARMS)
    (src / "plain.cu").write_text(ARMS.replace("_arm", "_plain").replace("mode_", "pmode_"))
    inc = tmp_path / "proj" / "inc"
    inc.mkdir()
    (inc / "defs.h").write_text("#define FAST\n")
    return tmp_path / "proj"


def test_bare_name_is_one_and_value_is_kept(tree, tmp_path):
    src = tree / "src"
    db = _write_db(
        tmp_path / "cc.json",
        [{"directory": str(src), "file": "k.cu", "command": "nvcc -DFAST -DMODE -c k.cu"}],
    )
    code, report, _ = _analyze(src / "k.cu", "--compile-commands", db)
    assert code == 0
    assert _names(report) == {"fast_arm", "mode_set"}  # -DMODE is MODE=1: not 2, but true
    db.write_text(db.read_text().replace("-DMODE ", "-DMODE=2 "))
    code, report, _ = _analyze(src / "k.cu", "--compile-commands", db)
    assert _names(report) == {"fast_arm", "mode_two"}
    code, report, _ = _analyze(src / "k.cu")  # no database: nothing defined, as cpp
    assert _names(report) == {"slow_arm"}


def test_folder_means_its_compile_commands_json(tree):
    src = tree / "src"
    _write_db(
        tree / "compile_commands.json",
        [{"directory": str(src), "file": "k.cu", "arguments": ["clang++", "-DFAST", "k.cu"]}],
    )
    code, report, _ = _analyze(src / "k.cu", "--compile-commands", tree)
    assert code == 0 and _names(report) == {"fast_arm"}  # the `arguments` form too


def test_undefines_follow_the_command_order_and_the_command_line_wins(tree, tmp_path):
    src = tree / "src"

    def names(command: str, *extra: str) -> set[str]:
        db = _write_db(
            tmp_path / "cc.json", [{"directory": str(src), "file": "k.cu", "command": command}]
        )
        code, report, _ = _analyze(src / "k.cu", "--compile-commands", db, *extra)
        assert code == 0
        return _names(report)

    assert names("cc -DFAST -UFAST -c k.cu") == {"slow_arm"}
    assert names("cc -UFAST -DFAST -c k.cu") == {"fast_arm"}
    assert names("cc -UFAST -c k.cu", "-D", "FAST=1") == {"fast_arm"}
    assert names("cc -DFAST -DMODE=2 -c k.cu", "-U", "FAST") == {"slow_arm", "mode_two"}
    assert names("cc -DMODE=2 -c k.cu", "-D", "MODE=5") == {"slow_arm", "mode_set"}


def test_a_file_without_entry_gets_the_command_line_flags_only(tree, tmp_path):
    src = tree / "src"
    db = _write_db(
        tmp_path / "cc.json",
        [{"directory": str(src), "file": "k.cu", "command": "nvcc -DFAST -c k.cu"}],
    )
    code, report, _ = _analyze(src, "--compile-commands", db, "-D", "MODE=2")
    assert code == 0
    by_file = {(Path(k["file"]).name, k["name"]) for k in report["kernels"]}
    assert by_file == {
        ("k.cu", "fast_arm"),
        ("k.cu", "mode_two"),
        ("plain.cu", "slow_plain"),
        ("plain.cu", "pmode_two"),
    }
    commands = {Path(k["file"]).name: k.get("compile_command") for k in report["kernels"]}
    assert commands == {"k.cu": {"entry": 0, "file": "k.cu"}, "plain.cu": None}


def test_include_dirs_of_the_entry_are_searched(tree, tmp_path):
    src = tree / "src"
    (src / "k.cu").write_text('#include "defs.h"\n' + ARMS)
    db = _write_db(
        tmp_path / "cc.json",
        [{"directory": str(tree), "file": "src/k.cu", "command": "nvcc -I inc -c src/k.cu"}],
    )
    code, report, _ = _analyze(src / "k.cu", "--compile-commands", db)
    assert code == 0 and _names(report) == {"fast_arm"}  # FAST from inc/defs.h
    db.write_text(db.read_text().replace("-I inc ", ""))
    code, report, _ = _analyze(src / "k.cu", "--compile-commands", db)
    assert _names(report) == {"slow_arm"}


def test_headers_take_the_flags_of_the_unit_that_includes_them(tmp_path):
    # main.cpp has no kernel marker and includes <kern.h> (found through -I only); the
    # header's kernel exists only under the unit's -DUSE_GPU.
    (tmp_path / "app").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "app" / "main.cpp").write_text("#include <kern.h>\nint main() { return 0; }\n")
    (tmp_path / "lib" / "kern.h").write_text(
        "#ifdef USE_GPU\n__global__ void gpu_kernel(float* a) { a[threadIdx.x] = 0.0f; }\n#endif\n"
    )
    db = _write_db(
        tmp_path / "cc.json",
        [
            {
                "directory": str(tmp_path / "app"),
                "file": "main.cpp",
                "command": "clang++ -x cuda -DUSE_GPU -I../lib -c main.cpp",
            }
        ],
    )
    code, report, stderr = _analyze(tmp_path, "--compile-commands", db, "--verbose")
    assert code == 0
    assert _names(report) == {"gpu_kernel"}
    (kernel,) = report["kernels"]
    assert kernel["compile_command"] == {"entry": 0, "file": "main.cpp"}
    assert "kern.h: entry 0 (main.cpp, CUDA): -DUSE_GPU=1 -I" in stderr
    code, _, _ = _analyze(tmp_path)
    assert code == 2  # without the build's flags the header holds no kernel


@pytest.mark.rule("D6")
def test_defines_are_bound_at_counting(tmp_path):
    # One SP add per trip: N trips per thread.
    (tmp_path / "loop.cu").write_text(
        "__global__ void loop(float* a) {\n"
        "  for (int j = 0; j < N; j++) a[threadIdx.x] += 1.0f;\n}\n"
    )
    db = _write_db(
        tmp_path / "cc.json",
        [{"directory": str(tmp_path), "file": "loop.cu", "command": "nvcc -DN=64 -c loop.cu"}],
    )
    _, report, _ = _analyze(tmp_path / "loop.cu", "--compile-commands", db)
    assert report["kernels"][0]["flops_per_thread"]["sp"] == 64
    assert "N" not in report["kernels"][0]["symbols"]
    _, report, _ = _analyze(tmp_path / "loop.cu", "--compile-commands", db, "-D", "N=8")
    assert report["kernels"][0]["flops_per_thread"]["sp"] == 8  # the command line wins


def test_entries_from_another_machine_are_relocated(tree, tmp_path):
    old = "/nonexistent/home/someone/proj"
    db = _write_db(
        tmp_path / "cc.json",
        [
            {
                "directory": f"{old}/build",
                "file": f"{old}/src/k.cu",
                "command": f"nvcc -I{old}/inc -c {old}/src/k.cu",
            },
            {  # a program that is not analysed: left out, no warning
                "directory": "/nonexistent/home/someone/other",
                "file": "/nonexistent/home/someone/other/src/x.cu",
                "command": "nvcc -DFAST -c x.cu",
            },
        ],
    )
    (tree / "src" / "k.cu").write_text('#include "defs.h"\n' + ARMS)
    code, report, stderr = _analyze(tree, "--compile-commands", db)
    assert code == 0, stderr
    assert {("k.cu", "fast_arm"), ("plain.cu", "slow_plain")} <= {
        (Path(k["file"]).name, k["name"]) for k in report["kernels"]
    }  # defs.h found through the relocated -I
    relocated = report["compile_commands"]["relocated"]
    assert relocated == {"from": "/nonexistent/home/someone", "to": str(tree.parent.resolve())}
    assert "warning" not in stderr


def test_file_name_alone_does_not_relocate_when_ambiguous(tmp_path):
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "k.cu").write_text(ARMS)
    db = _write_db(
        tmp_path / "cc.json",
        [
            {"directory": "/nonexistent/a", "file": "/nonexistent/a/k.cu", "command": "cc -DFAST"},
            {"directory": "/nonexistent/b", "file": "/nonexistent/b/k.cu", "command": "cc -DMODE"},
        ],
    )
    code, report, stderr = _analyze(tmp_path / "here", "--compile-commands", db)
    assert code == 0 and _names(report) == {"slow_arm"}
    assert "cannot tell where the database's files are" in stderr
    db = _write_db(tmp_path / "cc.json", json.loads(db.read_text())[:1])  # one candidate
    code, report, _ = _analyze(tmp_path / "here", "--compile-commands", db)
    assert _names(report) == {"fast_arm"}


def test_hostile_define_is_a_warning_and_runs_nothing(tree, tmp_path):
    src = tree / "src"
    command = """nvcc "-DX=__import__('os').system('touch PWNED')" -DFAST -c k.cu"""
    db = _write_db(
        tmp_path / "cc.json", [{"directory": str(src), "file": "k.cu", "command": command}]
    )
    code, report, stderr = _analyze(src / "k.cu", "--compile-commands", db, cwd=tmp_path)
    assert code == 0
    assert _names(report) == {"fast_arm"}  # the entry's other flags still apply
    lines = [line for line in stderr.splitlines() if "PWNED" in line]
    assert len(lines) == 1 and lines[0].startswith("roofcast: warning: ")
    assert "entry 0 (k.cu)" in lines[0] and "not a C expression" in lines[0]
    assert not list(tmp_path.rglob("PWNED")) and not Path("PWNED").exists()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[{"directory": "/x", "file": ', "not valid JSON"),
        ('{"directory": "/x"}', "expected a JSON list"),
        ("[" * 100_000, "not valid JSON"),
    ],
)
def test_unreadable_database_is_one_line_exit_2(tree, tmp_path, text, needle):
    bad = tmp_path / "cc.json"
    bad.write_text(text)
    code, _, stderr = _analyze(tree / "src" / "k.cu", "--compile-commands", bad)
    assert code == 2
    assert stderr.startswith("roofcast: error: ") and needle in stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr


def test_missing_database_is_one_line_exit_2(tree, tmp_path):
    code, _, stderr = _analyze(tree, "--compile-commands", tmp_path / "nope")
    assert code == 2 and stderr.startswith("roofcast: error: ") and stderr.count("\n") == 1


def test_bad_entries_are_warnings_naming_them(tree, tmp_path):
    src = tree / "src"
    db = _write_db(
        tmp_path / "cc.json",
        [
            {"directory": str(src), "command": "cc -c k.cu"},
            "not an entry",
            {"directory": str(src), "file": "k.cu", "command": "cc 'unbalanced -c k.cu"},
            {"directory": str(src), "file": "k.cu", "command": "cc -DFAST -U 9x -DY=nan"},
        ],
    )
    code, report, stderr = _analyze(src / "k.cu", "--compile-commands", db)
    assert code == 0 and _names(report) == {"fast_arm"}
    warnings = [line for line in stderr.splitlines() if line.startswith("roofcast: warning:")]
    assert any("entry 0: needs 'directory' and 'file'" in w for w in warnings)
    assert any("entry 1: not a JSON object" in w for w in warnings)
    assert any("entry 2: cannot split 'command'" in w for w in warnings)
    assert any("entry 3 (k.cu): -U '9x'" in w for w in warnings)
    assert any("entry 3 (k.cu): malformed -D Y=nan: not a finite number" in w for w in warnings)


def test_flag_spellings():
    unit = parse_entry(
        {
            "directory": "/b",
            "file": "k.cpp",
            "arguments": [
                "/usr/bin/clang++",
                "-D",
                "A=2",
                "-DB",
                "--define-macro=C=3",
                "-isystem",
                "sys",
                "-Irel",
                "-I",
                "/abs",
                "-x",
                "c++",
                "-std=c++17",
                "-includepre.h",
                "-include",
                "more.h",
                "-fopenmp-targets=nvptx64",
                "-UB",
                "-c",
                "k.cpp",
            ],
        },
        0,
    )
    assert dict(unit.defines) == {"A": "2", "C": "3"} and unit.undefines == {"B"}
    assert unit.include_dirs == (Path("/b/sys"), Path("/b/rel"), Path("/abs"))
    assert (unit.language, unit.std, unit.forced_includes) == ("c++", "c++17", ("pre.h", "more.h"))
    assert unit.openmp_offload and not unit.cuda
    cu = parse_entry({"directory": "/b", "file": "k.cu", "command": "clang++ -c k.cu"}, 1)
    assert cu.cuda and not cu.openmp_offload


def test_parallel_analysis_equals_serial_with_a_database(tmp_path):
    # Two folders joined only through an <...> include found by the unit's -I.
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    (tmp_path / "a" / "main.cpp").write_text("#include <k.h>\nint main() { return 0; }\n")
    (tmp_path / "b" / "k.h").write_text(ARMS)
    (tmp_path / "b" / "other.cu").write_text(ARMS.replace("_arm", "_other"))
    db = load_database(
        _write_db(
            tmp_path / "cc.json",
            [{"directory": str(tmp_path / "a"), "file": "main.cpp", "command": "cc -DFAST -I../b"}],
        )
    )
    gpu = load_gpu("a100")
    one = analyze_paths([tmp_path], gpu, database=db, jobs=1)
    two = analyze_paths([tmp_path], gpu, database=db, jobs=2)
    assert [k.to_json() for k in one.kernels] == [k.to_json() for k in two.kernels]
    assert {(Path(k.ir.file).name, k.ir.name) for k in one.kernels} == {
        ("k.h", "fast_arm"),
        ("other.cu", "slow_other"),
    }


MANIFEST_HEAD = (
    "target,family,language,kernel,kernel_signature,omp_function,omp_line,block,grid,exe_args,"
    "xtime_ns,dram_bytes,sp_flops,dp_flops,int_ops,sp_ai,dp_ai,int_ai,label\n"
)


def test_evaluate_matches_rows_behind_build_macros(tmp_path):
    prog = tmp_path / "src" / "inc-omp"
    prog.mkdir(parents=True)
    (prog / "main.cpp").write_text(
        "void inc(float* a, int n) {\n"
        "#ifdef OMP_TARGET\n"
        "#pragma omp target teams distribute parallel for map(tofrom: a[0:n])\n"
        "  for (int i = 0; i < n; i++) a[i] += 1.0f;\n"
        "#endif\n"
        "}\n"
    )
    manifest = tmp_path / "m.csv"
    manifest.write_text(
        MANIFEST_HEAD + "inc-omp,inc,OMP,__omp_offloading_1_2_inc_l3,__omp_offloading_1_2_inc_l3,"
        '"inc(float*, int)",3,"(128, 1, 1)","(8, 1, 1)",1024,5000.0,8192,1024,0,4096,'
        "0.125,0.0,0.5,Bandwidth\n"
    )
    db = _write_db(
        tmp_path / "cc.json",
        [
            {
                "directory": "/elsewhere/build",
                "file": "/elsewhere/src/inc-omp/main.cpp",
                "command": "clang++ -fopenmp -fopenmp-targets=nvptx64 -DOMP_TARGET -c main.cpp",
            }
        ],
    )
    base = ["evaluate", "-m", manifest, "-s", tmp_path / "src", "-g", "rtx3080", "-f", "json"]
    base += ["-q", "--predictor", "roofline"]
    without = CliRunner().invoke(app, [str(a) for a in base])
    assert without.exit_code == 0 and json.loads(without.stdout)["n"] == 0
    result = CliRunner().invoke(app, [str(a) for a in [*base, "--compile-commands", db]])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["n"] == 1 and summary["compile_commands"]["units"] == 1
    undefined = CliRunner().invoke(
        app, [str(a) for a in [*base, "--compile-commands", db, "-U", "OMP_TARGET"]]
    )
    assert json.loads(undefined.stdout)["n"] == 0  # evaluate's -U wins over the build's -D
    rows = load_manifest(manifest)
    build = BuildFlags(database=load_database(db))
    (outcome,) = analyze_rows(rows, tmp_path / "src", load_gpu("rtx3080"), build=build)
    assert outcome.result.ir.compile_unit == {"entry": 0, "file": "/elsewhere/src/inc-omp/main.cpp"}
    assert outcome.result.ir.build_defines == {"OMP_TARGET": "1"}


def test_every_analysing_verb_takes_compile_commands():
    result = CliRunner(env={"COLUMNS": "200"})
    for verb in (
        ["analyze"],
        ["evaluate"],
        ["train"],
        ["hook"],
        ["matrix"],
        ["plot"],
        ["baseline", "update"],
    ):
        out = result.invoke(app, [*verb, "--help"])
        assert out.exit_code == 0 and "--compile-commands" in out.stdout, verb
