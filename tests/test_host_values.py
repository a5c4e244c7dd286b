"""Host values (docs/counting.md D12 on): a kernel argument's value followed through host code
that the D8-D11 rules did not reach."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import tree_sitter
from roofcast.analyzer.hostvalues import HostScope, argv_symbol
from roofcast.analyzer.hostwords import argv_length_symbol
from roofcast.analyzer.parsing import captures, language, node_text, parse
from roofcast.gpu_specs import load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.base import LaunchContext
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.results import KernelResult

#: a kernel whose SP FLOPs are its parameter `n`: one add per trip
LOOP_KERNEL = """\
__global__ void k(float* a, int n) {
  float s = 0.0f;
  for (int j = 0; j < n; j++) s += a[j];
  a[threadIdx.x] = s;
}
"""


#: a kernel whose SP FLOPs are `n + m` (one operation per trip of each loop), and the struct
#: whose fields the D26 tests pass as `n` and `m`
CFG_KERNEL = """\
struct Cfg { int n; int m; };
__global__ void k(float* a, int n, int m) {
  float s = 0.0f;
  for (int j = 0; j < n; j++) s += a[j];
  for (int j = 0; j < m; j++) s *= a[j];
  a[threadIdx.x] = s;
}
"""


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))


def kernels(folder: Path) -> dict[str, KernelResult]:
    report = analyze_paths([folder], load_gpu("a100"), {}, RooflinePredictor())
    assert not [p for p in report.problems if p.fatal], report.problems
    return {k.ir.name: k for k in report.kernels}


@pytest.mark.rule("D12")
def test_a_caller_in_a_host_only_file_binds_the_launching_functions_parameters(tmp_path):
    """`main.cpp` has no kernel marker (it is not parsed to find kernels), yet it is where
    `launch(a, 300)` is called: the launch's `n` is 300. A name that no file calls stays a
    default."""
    write(
        tmp_path,
        {
            "kernels.cu": LOOP_KERNEL
            + """\
            void launch(float* a, int n) { k<<<1, 1>>>(a, n); }
            """,
            "main.cpp": """\
            void launch(float* a, int n);
            int main() {
              float* a = 0;
              int size = 3 * 100;
              launch(a, size);
            }
            """,
        },
    )
    k = kernels(tmp_path)["k"]
    assert k.resolved.flops["sp"] == 300 and not k.resolved.defaults
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    assert "n" in kernels(tmp_path)["k"].resolved.defaults


@pytest.mark.rule("D13")
def test_a_function_templates_value_arguments_and_defaulted_parameters_bind(tmp_path):
    """`run<100>(a, 1000)` makes run's `N` 100 and `blocks = (n + N - 1) / N` 10, passed on
    through `runTest<float, N>` (a bare name in a template argument list parses as a type);
    `launch(a, 50)` binds `launch(float*, int, bool timing = false)`, its default left out."""
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL
            + """\
            template <typename T, int N>
            void runTest(float* a, int n) {
              int blocks = (n + N - 1) / N;
              k<<<1, 1>>>(a, blocks);
            }
            template <int N>
            void run(float* a, int n) { runTest<float, N>(a, n); }
            int main() {
              float* a = 0;
              run<100>(a, 1000);
            }
            """,
        },
    )
    k = kernels(tmp_path)["k"]
    assert k.resolved.flops["sp"] == 10 and not k.resolved.defaults
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL
            + """\
            void launch(float* a, int n, bool timing = false) { k<<<1, 1>>>(a, n); }
            int main() {
              float* a = 0;
              launch(a, 50);
            }
            """,
        },
    )
    assert kernels(tmp_path)["k"].resolved.flops["sp"] == 50


@pytest.mark.rule("D14")
def test_a_size_host_code_cannot_show_is_solved_from_the_profiled_launch(tmp_path):
    """`n` comes from a function the folder does not define; the launch `<<<(n + 255) / 256,
    256>>>` as profiled with 40 blocks makes it 10240 (C's division: the largest such n), and
    the kernel's loop over `n` runs that many times. Without the profiled grid it is the
    documented default, as before."""
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL
            + """\
            int readSize(const char* path);
            int main(int argc, char** argv) {
              float* a = 0;
              const int n = readSize(argv[1]);
              k<<<(n + 255) / 256, 256>>>(a, n);
            }
            """,
        },
    )
    report = analyze_paths(
        [tmp_path],
        load_gpu("a100"),
        {},
        RooflinePredictor(),
        LaunchContext(block=(256, 1, 1), grid=(40, 1, 1)),
    )
    (k,) = report.kernels
    assert k.resolved.flops["sp"] == 10240 and not k.resolved.defaults
    assert any("[D14] n = 10240" in note for note in k.resolved.notes)
    assert "n" in kernels(tmp_path)["k"].resolved.defaults


@pytest.mark.rule("D15")
def test_an_element_of_a_listed_array_at_a_known_index_is_a_host_value(tmp_path):
    """`dims[d]` in a loop over `const int dims[] = {7, 5, 10}` launches first with d = 0
    (D8's first iteration): 7; a file-level list's `sizes[2]` is 30; an index past the list
    stays unknown."""
    write(
        tmp_path,
        {
            "main.cu": """\
            __global__ void k(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            __global__ void g(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            __global__ void past(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            static const int sizes[] = {10, 20, 30};
            int main() {
              float* a = 0;
              const int dims[] = {7, 5, 10};
              for (int d = 0; d < 3; d++) {
                const int dim = dims[d];
                k<<<1, 1>>>(a, dim);
              }
              g<<<1, 1>>>(a, sizes[2]);
              past<<<1, 1>>>(a, sizes[3]);
            }
            """,
        },
    )
    found = kernels(tmp_path)
    assert found["k"].resolved.flops["sp"] == 7 and not found["k"].resolved.defaults
    assert found["g"].resolved.flops["sp"] == 30
    assert "n" in found["past"].resolved.defaults


@pytest.mark.rule("D16")
def test_members_assigned_one_by_one_size_arguments_and_the_launch(tmp_path):
    """`p.size = 2 * 64;` makes `p.size` 128 at the launch; `dim3 grid; grid.x = 8;` with y
    never assigned launches 8 x 1 blocks of `block.x = 32` threads."""
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL
            + """\
            struct Params { int size; };
            int main() {
              float* a = 0;
              Params p;
              p.size = 2 * 64;
              dim3 grid, block;
              grid.x = 8;
              block.x = 32;
              k<<<grid, block>>>(a, p.size);
            }
            """,
        },
    )
    k = kernels(tmp_path)["k"]
    assert k.resolved.flops["sp"] == 128 and not k.resolved.defaults
    assert k.resolved.threads == 8 * 32


@pytest.mark.rule("D17")
def test_a_launcher_called_only_through_a_pointer_table_takes_that_calls_arguments(tmp_path):
    """`launch` is never called by name: its address sits in `table`, and `table[j](a, w)`
    calls it with `w` 12 (two arguments, as `launch` takes). A launcher whose address is
    never taken is not matched to a pointer call."""
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL
            + """\
            __global__ void other(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            void launch(float* a, int n) { k<<<1, 1>>>(a, n); }
            void unused(float* a, int n) { other<<<1, 1>>>(a, n); }
            typedef void (*launcher)(float*, int);
            launcher table[] = {launch};
            int main() {
              float* a = 0;
              int w = 12;
              for (int j = 0; j < 1; j++) table[j](a, w);
            }
            """,
        },
    )
    found = kernels(tmp_path)
    assert found["k"].resolved.flops["sp"] == 12 and not found["k"].resolved.defaults
    assert "n" in found["other"].resolved.defaults


@pytest.mark.rule("D18")
def test_constants_and_one_line_helpers_of_an_included_header_value_arguments(tmp_path):
    """`util.h` defines `STEP` and `roundUp`; the launch in `main.cu` passes `roundUp(1000,
    STEP)`: (1000 + 3) / 4 = 250 with C's division."""
    write(
        tmp_path,
        {
            "util.h": """\
            static const unsigned int STEP = 4;
            inline int roundUp(const int x, const int y) { return (x + y - 1) / y; }
            """,
            "main.cu": '#include "util.h"\n'
            + LOOP_KERNEL
            + """\
            int main() {
              float* a = 0;
              k<<<1, 1>>>(a, roundUp(1000, STEP));
            }
            """,
        },
    )
    k = kernels(tmp_path)["k"]
    assert k.resolved.flops["sp"] == 250 and not k.resolved.defaults


@pytest.mark.rule("D19")
def test_command_line_options_are_read_from_the_programs_arguments(tmp_path):
    """`-steps N` (strcmp) and getopt's `-m N` set sizes whose built-in values are 100 and 7:
    with `-steps 40` on the command line the first is 40 and the second keeps 7; with no
    arguments both keep their built-in values."""
    write(
        tmp_path,
        {
            "main.cu": """\
            #include <cstring>
            #include <cstdlib>
            #include <unistd.h>
            __global__ void k(float* a, int n, int m) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              for (int j = 0; j < m; j++) s *= a[j];
              a[threadIdx.x] = s;
            }
            int main(int argc, char** argv) {
              int steps = 100;
              int m = 7;
              for (int i = 1; i < argc; ++i) {
                if (!strcmp(argv[i], "-steps"))
                  steps = strtol(argv[++i], NULL, 10);
              }
              int opt;
              while ((opt = getopt(argc, argv, "m:")) >= 0) {
                switch (opt) {
                  case 'm': m = atoi(optarg); break;
                }
              }
              float* a = 0;
              k<<<1, 1>>>(a, steps, m);
            }
            """,
        },
    )

    def run(exe_args: str) -> KernelResult:
        context = LaunchContext(exe_args=exe_args)
        report = analyze_paths([tmp_path], load_gpu("a100"), {}, RooflinePredictor(), context)
        (k,) = report.kernels
        return k

    given = run("-steps 40 -x 3")
    assert (given.resolved.flops["sp"], given.resolved.defaults) == (40 + 7, {})
    built_in = run("")
    assert (built_in.resolved.flops["sp"], built_in.resolved.defaults) == (100 + 7, {})


@pytest.mark.rule("D20")
def test_compound_assignments_update_a_host_value_but_a_loops_step_does_not(tmp_path):
    """`n = 32; n *= 1024; n += 8;` launches with 32776; the launch inside `for (s = 3; ...;
    s += 2)` sees the counter's first value, 3; `r -= r % readQ()` leaves r at 64."""
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL
            + """\
            __global__ void g(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            __global__ void h(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            int readQ();
            int main() {
              float* a = 0;
              int n = 32;
              n *= 1024;
              n += 8;
              k<<<1, 1>>>(a, n);
              for (int s = 3; s < 10; s += 2) g<<<1, 1>>>(a, s);
              int r = 64;
              r -= r % readQ();
              h<<<1, 1>>>(a, r);
            }
            """,
        },
    )
    found = kernels(tmp_path)
    assert found["k"].resolved.flops["sp"] == 32 * 1024 + 8
    assert found["g"].resolved.flops["sp"] == 3
    assert found["h"].resolved.flops["sp"] == 64  # an unknown rounding is left out


@pytest.mark.rule("D21")
def test_an_openmp_regions_local_is_valued_with_the_folders_headers(tmp_path):
    """The function around the region sets `m = roundUp(1000, STEP)`, both from `util.h`
    (rule D18 for an OpenMP host scope): each iteration sums (1000 + 3) / 4 = 250 values."""
    write(
        tmp_path,
        {
            "util.h": """\
            static const int STEP = 4;
            inline int roundUp(const int x, const int y) { return (x + y - 1) / y; }
            """,
            "main.cpp": """\
            #include "util.h"
            void run(float* a, float* b) {
              int m = roundUp(1000, STEP);
              #pragma omp target teams distribute parallel for map(to: a[0:1000]) map(from: b[0:16])
              for (int i = 0; i < 16; i++) {
                float s = 0.0f;
                for (int j = 0; j < m; j++) s += a[j];
                b[i] = s;
              }
            }
            int main() {
              float a[1000], b[16];
              run(a, b);
            }
            """,
        },
    )
    region = kernels(tmp_path)["run"]
    assert region.resolved.flops["sp"] == 250 and not region.resolved.defaults


@pytest.mark.rule("D22")
def test_a_scan_of_a_command_line_word_with_one_integer_conversion_reads_it(tmp_path):
    """`sscanf(argv[2], "%d", &n)` is the program's second word (40); a format of two
    conversions is not read, so `m` keeps no value (its documented default)."""
    write(
        tmp_path,
        {
            "main.cu": """\
            #include <cstdio>
            __global__ void k(float* a, int n, int m) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              for (int j = 0; j < m; j++) s *= a[j];
              a[threadIdx.x] = s;
            }
            int main(int argc, char** argv) {
              int n, m = 7;
              if (sscanf(argv[2], "%d", &n) == EOF) {
                return 1;
              }
              if (sscanf(argv[4], "%d %d", &m) == EOF) {
                return 1;
              }
              float* a = 0;
              k<<<1, 1>>>(a, n, m);
            }
            """,
        },
    )
    context = LaunchContext(exe_args="-x 40 -y 9")
    report = analyze_paths([tmp_path], load_gpu("a100"), {}, RooflinePredictor(), context)
    (k,) = report.kernels
    assert set(k.resolved.defaults) == {"m"}
    assert k.resolved.flops["sp"] == 40 + k.resolved.defaults["m"]


@pytest.mark.rule("D23")
def test_struct_fields_from_lists_defaults_range_for_and_a_struct_argument(tmp_path):
    """`run` reads its struct parameters' fields: `shape` is the first element of the list
    main's range-for walks ({10}: rows 10, cols and halo their default member initializers
    48 and pad * 3 = 6), `d` is main's `{5, 7}` with `width` then set to 9. One add or
    multiply per trip: 10 + 48 + 6 + 9 + 5."""
    write(
        tmp_path,
        {
            "cfg.h": """\
            struct Shape { int rows; int cols = 48; static const int pad = 2; int halo = pad * 3; };
            typedef struct { int batch; int width; } Dims;
            """,
            "main.cu": """\
            #include "cfg.h"
            __global__ void k(float* a, int n, int m, int h, int w, int b) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              for (int j = 0; j < m; j++) s *= a[j];
              for (int j = 0; j < h; j++) s -= a[j];
              for (int j = 0; j < w; j++) s += a[j];
              for (int j = 0; j < b; j++) s *= a[j];
              a[threadIdx.x] = s;
            }
            void run(float* a, const Shape& shape, Dims d) {
              k<<<1, 1>>>(a, shape.rows, shape.cols, shape.halo, d.width, d.batch);
            }
            int main() {
              const Shape shapes[] = {{10}, {20, 30}};
              Dims d = {5, 7};
              d.width = 9;
              float* a = 0;
              for (auto shape : shapes) run(a, shape, d);
            }
            """,
        },
    )
    k = kernels(tmp_path)["k"]
    assert k.resolved.flops["sp"] == 10 + 48 + 6 + 9 + 5 and not k.resolved.defaults


@pytest.mark.rule("D20")
def test_a_sum_kept_in_a_loop_is_unknown_after_the_loop(tmp_path):
    """`total += 16` and `c.n++` run once per trip of a loop whose trips host code does not
    fix: after the loop both are unknown (the documented default), not their first trip."""
    write(
        tmp_path,
        {
            "main.cu": """\
            struct Count { int n; };
            __global__ void k(float* a, int n, int m) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              for (int j = 0; j < m; j++) s *= a[j];
              a[threadIdx.x] = s;
            }
            int main(int argc, char** argv) {
              int total = 0;
              Count c;
              c.n = 3;
              for (int i = 0; i < argc; i++) {
                total += 16;
                c.n++;
              }
              float* a = 0;
              k<<<1, 1>>>(a, total, c.n);
            }
            """,
        },
    )
    k = kernels(tmp_path)["k"]
    assert set(k.resolved.defaults) == {"n", "m"}


@pytest.mark.rule("D24")
def test_names_a_for_loop_steps_are_followed_to_the_loops_end(tmp_path):
    """`for (; w > 4; w -= 2, n <<= 2)` from w = 9 runs 3 times (9, 7, 5): after it `n`
    is 40 << 6 = 2560; a launch inside the loop sees its start, 40 (D8)."""
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL.replace("void k(", "void inside(")
            + LOOP_KERNEL
            + """            void run(float* a, int n, int w) {
              for (; w > 4; w -= 2, n <<= 2) {
                inside<<<1, 1>>>(a, n);
              }
              k<<<1, 1>>>(a, n);
            }
            int main() {
              float* a = 0;
              run(a, 40, 9);
            }
            """,
        },
    )
    found = kernels(tmp_path)
    assert found["k"].resolved.flops["sp"] == 2560 and not found["k"].resolved.defaults
    assert found["inside"].resolved.flops["sp"] == 40


@pytest.mark.rule("D24")
def test_a_for_loops_step_written_as_a_plain_assignment_is_a_step(tmp_path):
    """`for (c = 32; c <= 512; c = c * 4)` steps `c` as `c *= 4` does: a launch inside the
    loop sees its first trip, 32 (not 32 * 4, as if the step ran before the body); after
    the loop `c` is 2048 (32, 128, 512, then 2048 fails the test)."""
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL.replace("void k(", "void inside(")
            + LOOP_KERNEL
            + """            int main() {
              float* a = 0;
              int c;
              for (c = 32; c <= 512; c = c * 4) {
                inside<<<1, 1>>>(a, c);
              }
              k<<<1, 1>>>(a, c);
            }
            """,
        },
    )
    found = kernels(tmp_path)
    assert found["inside"].resolved.flops["sp"] == 32
    assert found["k"].resolved.flops["sp"] == 2048 and not found["k"].resolved.defaults


@pytest.mark.rule("D25")
def test_members_a_constructor_sets_from_its_body_and_initializer_list(tmp_path):
    """`const Params p(argc, argv);` runs Params' constructor: `block` is the getopt option
    `-b` over its body's 256, `rows = cols = 30` sets both, `twice(argc * 2)` comes from the
    member initializer list with argc bound (`-b 64`: 3, none: 1), `halo` is set by nobody in
    the constructor and keeps its default member initializer 5. `Grid g(7);`, with two
    one-argument constructors, is not followed: its `n` stays a default."""
    write(
        tmp_path,
        {
            "params.h": """\
            #include <unistd.h>
            #include <cstdlib>
            struct Params {
              int block;
              int rows, cols;
              int twice;
              int halo = 5;
              Params(int argc, char** argv) : twice(argc * 2) {
                block = 256;
                rows = cols = 30;
                int opt;
                while ((opt = getopt(argc, argv, "b:")) >= 0) {
                  switch (opt) {
                    case 'b': block = atoi(optarg); break;
                  }
                }
              }
            };
            struct Grid {
              int n;
              Grid(int size) : n(size) {}
              Grid(float scale) : n(100) {}
            };
            """,
            "main.cu": """\
            #include "params.h"
            __global__ void k(float* a, int n, int m, int h, int w, int b) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              for (int j = 0; j < m; j++) s *= a[j];
              for (int j = 0; j < h; j++) s -= a[j];
              for (int j = 0; j < w; j++) s += a[j];
              for (int j = 0; j < b; j++) s *= a[j];
              a[threadIdx.x] = s;
            }
            __global__ void g(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            int main(int argc, char** argv) {
              const Params p(argc, argv);
              Grid grid(7);
              float* a = 0;
              k<<<1, 1>>>(a, p.block, p.rows, p.cols, p.twice, p.halo);
              g<<<1, 1>>>(a, grid.n);
            }
            """,
        },
    )

    def run(exe_args: str) -> dict[str, KernelResult]:
        context = LaunchContext(exe_args=exe_args)
        report = analyze_paths([tmp_path], load_gpu("a100"), {}, RooflinePredictor(), context)
        return {k.ir.name: k for k in report.kernels}

    given = run("-b 64")["k"]
    assert (given.resolved.flops["sp"], given.resolved.defaults) == (64 + 30 + 30 + 6 + 5, {})
    built_in = run("")
    assert built_in["k"].resolved.flops["sp"] == 256 + 30 + 30 + 2 + 5
    assert not built_in["k"].resolved.defaults
    assert "n" in built_in["g"].resolved.defaults


@pytest.mark.rule("D26")
def test_members_set_through_a_pointer_or_reference_by_a_called_function(tmp_path):
    """`init(&cfg, 2)` sets `c->n = 512 * scale` (1024) over main's earlier `cfg.n = 3`,
    `resize(cfg)` (a reference) sets `m` to 64, and `run(&cfg)` reads `p->n` and `p->m`
    through a pointer to main's `cfg`. A later call that sets `n` from something host code
    does not show (`reload(&cfg)`) leaves it unknown: the earlier 1024 is not kept."""
    main = (
        CFG_KERNEL
        + """\
        void init(Cfg* c, int scale) { c->n = 512 * scale; }
        void resize(Cfg& c) { c.m = 64; }
        void reload(Cfg* c) { c->n = read_size(); }
        void run(float* a, const Cfg* p) { k<<<1, 1>>>(a, p->n, p->m); }
        int main() {
          Cfg cfg;
          cfg.n = 3;
          init(&cfg, 2);
          resize(cfg);
          float* a = 0;
          run(a, &cfg);
        }
        """
    )
    write(tmp_path, {"main.cu": main})
    k = kernels(tmp_path)["k"]
    assert (k.resolved.flops["sp"], k.resolved.defaults) == (1024 + 64, {})
    write(tmp_path, {"main.cu": main.replace("resize(cfg);", "resize(cfg);\n  reload(&cfg);")})
    assert "n" in kernels(tmp_path)["k"].resolved.defaults


@pytest.mark.rule("D26")
def test_one_call_given_several_names_binds_each_by_its_own_position(tmp_path):
    """`setup(&x, 7, &y)` sets its first pointer's `n` to 40 and its third's `m` to 5: `x`
    is the call's first argument and `y` its third (the 7 between them is no name), so the
    kernel's loops run 40 and 5 times, not once each (the values before the call)."""
    main = (
        CFG_KERNEL
        + """\
        void setup(Cfg* p, int unused, Cfg* q) { p->n = 40; q->m = 5; }
        int main() {
          Cfg x, y;
          x.n = 1;
          y.m = 1;
          setup(&x, 7, &y);
          float* a = 0;
          k<<<1, 1>>>(a, x.n, y.m);
        }
        """
    )
    write(tmp_path, {"main.cu": main})
    k = kernels(tmp_path)["k"]
    assert (k.resolved.bindings["n"], k.resolved.bindings["m"]) == (40, 5)
    assert k.resolved.flops["sp"] == 40 + 5


@pytest.mark.rule("D30")
def test_a_qualified_call_binds_the_functions_parameters(tmp_path):
    """`cuhd::Decoder::decode(a, 12)` calls `Decoder::decode` (a static method defined out
    of its class): its `size` is 12, so the kernel's loop runs 12 times."""
    write(
        tmp_path,
        {
            "main.cu": """\
            __global__ void k(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            namespace cuhd {
            struct Decoder { static void decode(float* a, int size); };
            }
            void cuhd::Decoder::decode(float* a, int size) {
              k<<<1, 32>>>(a, size);
            }
            int main() {
              float* a = 0;
              cuhd::Decoder::decode(a, 12);
            }
            """,
        },
    )
    k = kernels(tmp_path)["k"]
    assert k.resolved.bindings["n"] == 12 and not k.resolved.defaults
    assert k.resolved.flops["sp"] == 12


@pytest.mark.rule("D29")
def test_a_struct_passed_by_value_to_a_kernel_passes_its_fields(tmp_path):
    """`k<<<...>>>(a, cfg, d)`: the kernel's `cfg.rows` is main's 10 (through `run`, D23),
    `cfg.cols` the default member initializer 48 and `d.y` the uint2 list's 5: one add or
    multiply per trip, 10 + 48 + 5. A field host code does not set stays unknown (C4)."""
    write(
        tmp_path,
        {
            "main.cu": """\
            struct Shape { int rows; int cols = 48; int depth; };
            __global__ void k(float* a, Shape cfg, uint2 d) {
              float s = 0.0f;
              for (int j = 0; j < cfg.rows; j++) s += a[j];
              for (int j = 0; j < cfg.cols; j++) s *= a[j];
              for (int j = 0; j < d.y; j++) s -= a[j];
              a[threadIdx.x] = s;
            }
            __global__ void u(float* a, Shape cfg) {
              float s = 0.0f;
              for (int j = 0; j < cfg.depth; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            void run(float* a, Shape cfg) {
              uint2 d = {3, 5};
              k<<<1, 1>>>(a, cfg, d);
              u<<<1, 1>>>(a, cfg);
            }
            int main() {
              Shape cfg;
              cfg.rows = 10;
              float* a = 0;
              run(a, cfg);
            }
            """,
        },
    )
    found = kernels(tmp_path)
    k, u = found["k"], found["u"]
    assert k.resolved.flops["sp"] == 10 + 48 + 5 and not k.resolved.defaults
    assert k.resolved.bindings["cfg.rows"] == 10
    assert set(u.resolved.defaults) == {"trip_L11"}  # cfg.depth: unknown, C4's loop


@pytest.mark.rule("D23")
def test_a_cuda_vector_types_list_gives_its_members_in_order(tmp_path):
    """`int3 vol = {v, v, 5};` with v the first argument (12): `(vol.x + 1) * vol.z` is 65;
    `vol.w`, which an int3 lacks, stays unknown."""
    write(
        tmp_path,
        {
            "main.cu": LOOP_KERNEL
            + """\
            #include <cstdlib>
            __global__ void g(float* a, int n) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              a[threadIdx.x] = s;
            }
            int main(int argc, char** argv) {
              int v = atoi(argv[1]);
              int3 vol = {v, v, 5};
              float* a = 0;
              k<<<1, 1>>>(a, (vol.x + 1) * vol.z);
              g<<<1, 1>>>(a, vol.w);
            }
            """,
        },
    )
    context = LaunchContext(exe_args="12")
    report = analyze_paths([tmp_path], load_gpu("a100"), {}, RooflinePredictor(), context)
    found = {k.ir.name: k for k in report.kernels}
    assert (found["k"].resolved.flops["sp"], found["k"].resolved.defaults) == (65, {})
    assert "n" in found["g"].resolved.defaults


@pytest.mark.rule("D27", "D26", "D19")
def test_members_of_a_struct_a_folder_function_returns_then_options_change(tmp_path):
    """`set_defaults()` returns a malloc'ed `Input*` with `groups` 128 and `segments` 7;
    `read_options(argc, argv, I)` then sets `groups` from `-g N` under a bounds check: with
    `-g 32` groups is 32, without it 128. `make(21)` returns a struct by value whose `seg`
    is 42. One add or multiply per trip."""
    write(
        tmp_path,
        {
            "io.h": """\
            #include <cstdlib>
            #include <cstring>
            typedef struct { int groups; int segments; } Input;
            Input* set_defaults(void) {
              Input* I = (Input*) malloc(sizeof(Input));
              I->groups = 128;
              I->segments = 7;
              return I;
            }
            void read_options(int argc, char* argv[], Input* input) {
              for (int i = 1; i < argc; i++) {
                char* arg = argv[i];
                if (strcmp(arg, "-g") == 0) {
                  if (++i < argc) input->groups = atoi(argv[i]);
                }
              }
            }
            Input make(int n) { Input in; in.segments = n * 2; return in; }
            """,
            "main.cu": """\
            #include "io.h"
            __global__ void k(float* a, int n, int m, int w) {
              float s = 0.0f;
              for (int j = 0; j < n; j++) s += a[j];
              for (int j = 0; j < m; j++) s *= a[j];
              for (int j = 0; j < w; j++) s -= a[j];
              a[threadIdx.x] = s;
            }
            int main(int argc, char** argv) {
              Input* I = set_defaults();
              read_options(argc, argv, I);
              Input J = make(21);
              float* a = 0;
              k<<<1, 1>>>(a, I->groups, I->segments, J.segments);
            }
            """,
        },
    )

    def run(exe_args: str) -> KernelResult:
        context = LaunchContext(exe_args=exe_args)
        report = analyze_paths([tmp_path], load_gpu("a100"), {}, RooflinePredictor(), context)
        (k,) = report.kernels
        return k

    given = run("-g 32")
    assert (given.resolved.flops["sp"], given.resolved.defaults) == (32 + 7 + 42, {})
    built_in = run("")
    assert (built_in.resolved.flops["sp"], built_in.resolved.defaults) == (128 + 7 + 42, {})


def _host_arguments(source: str) -> list[object]:
    """The values HostScope gives the arguments of the last `use(...)` call of `main`."""
    tree = parse(textwrap.dedent(source), "cuda")
    query = tree_sitter.Query(language("cuda"), "(call_expression) @c")
    calls = [c for c in captures(query, tree.root_node)["c"] if node_text(c).startswith("use(")]
    main = next(f for f in tree.root_node.named_children if "main(" in node_text(f))
    args = calls[-1].child_by_field_name("arguments").named_children
    return [HostScope(main, "cuda").value(a, calls[-1].start_byte) for a in args]


@pytest.mark.rule("D31")
def test_a_name_a_call_may_write_or_a_loop_counts_up_is_unknown_after():
    """`n = 0;` then `fscanf(f, "%d", &n)` or `read(fd, &q, 4)`, or `m++` in a loop: at
    the use none is the 0 it started at but unknown. A call that only reads `&w`
    (`cudaMemcpyToSymbol`), a function of the folder (not followed), a `for`'s own counter
    (D8), `sscanf` of a command-line word (D22) and a `b++` in no loop (a rounding up)
    leave their values."""
    found = _host_arguments(
        """\
        void size(int* n) { *n = 7; }
        int show(const int* w) { return *w; }
        int main(int argc, char** argv) {
          FILE* f = fopen(argv[1], "r");
          int n, m, p, q, w = 3, s = 0, b = 10 / 4;
          n = m = q = 0;
          p = 0;
          while (fgetc(f) != EOF) p--;
          if (10 % 4 != 0) b++;
          fscanf(f, "%d", &n);
          while (fgetc(f) != EOF) m++;
          size(&w);
          read(f, &q, sizeof(int));
          cudaMemcpyToSymbol(c_w, &w, sizeof(int));
          show(&w);
          sscanf(argv[2], "%d", &s);
          for (int i = 4; i < 9; i++) use(n, m, p, q, w, i, s, b);
        }
        """
    )
    assert found == [None, None, None, None, 3, 4, argv_symbol(2), 2]


@pytest.mark.rule("D32")
def test_an_if_else_pair_of_definitions_is_piecewise():
    """`if (left > 4000) r = 4000; else r = left;` clamps `r`: at the use it is 4000 for a
    larger command-line value and that value otherwise, not the else arm's alone. A
    definition in an else arm whose `if` does not define the name first keeps its value."""
    found = _host_arguments(
        """\
        int main(int argc, char** argv) {
          int left = atoi(argv[1]) - 10;
          int r, q = 7;
          if (left > 4000)
            r = 4000;
          else
            r = left;
          if (argc > 3) argc = 2; else q = 9;
          use(r, q);
        }
        """
    )
    r, q = found
    n = argv_symbol(1)
    assert r.subs(n, 10010) == 4000 and r.subs(n, 110) == 100
    assert q == 9


@pytest.mark.rule("D35")
def test_the_length_of_a_string_literal_a_local_holds_is_a_host_value():
    """`strlen(key)` of `const char *key = "000102030405"` is 12, of `char n[] = "ab" "c\\n"`
    4 (adjacent literals join, an escape is one character, so `/ 2` is 2), of a literal
    itself its length. A local assigned a command-line word since, or the word itself, is
    that word's length (D37), not the literal's."""
    found = _host_arguments(
        r"""
        int main(int argc, char** argv) {
          const char *key = "000102030405";
          char nonce[] = "ab" "c\n";
          const char *other = "xyz";
          other = argv[1];
          int a = strlen(key);
          int b = strlen(nonce) / 2;
          use(a, b, strlen(other), strlen("h\x41llo"), strlen(argv[1]));
        }
        """
    )
    assert found == [12, 2, argv_length_symbol(1), 5, argv_length_symbol(1)]
