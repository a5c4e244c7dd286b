"""The line-preserving preprocessor: macros expand, conditionals resolve, comments go, and every
line stays where the file has it (reported lines are the file's lines)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from roofcast.analyzer import discover
from roofcast.analyzer.preprocess import (
    collect_macros,
    includes,
    preprocess,
    resolve_conditionals,
    strip_comments,
)
from roofcast.features import count_features

FIXTURES = Path(__file__).resolve().parent / "data" / "analyzer" / "preprocess"


def expand(source: str, defined: dict[str, str] | None = None) -> list[str]:
    source = textwrap.dedent(source)
    out = preprocess(source, collect_macros(source), defined=defined or {})
    lines = out.split("\n")
    assert len(lines) == len(source.split("\n"))
    return lines


def squash(text: str) -> str:
    return "".join(text.split())


# --------------------------------------------------------------------------- macros


def test_object_and_function_like_macros_expand_in_place():
    lines = expand("""\
        #define N 16
        #define SQ(x) ((x) * (x))
        int a = SQ(N);
        int b = SQ(a + 1);
        """)
    assert lines[0] == "#define N 16"  # directives stay as written
    assert squash(lines[2]) == "inta=((16)*(16));"
    assert squash(lines[3]) == "intb=((a+1)*(a+1));"


def test_nested_macros_expand_fully():
    lines = expand("""\
        #define W 8
        #define IDX(i, j) ((i) * W + (j))
        #define AT(a, i, j) a[IDX(i, j)]
        float v = AT(buf, r, IDX(1, 2));
        """)
    assert squash(lines[3]) == "floatv=buf[((r)*8+(((1)*8+(2))))];"


def test_multi_line_invocation_keeps_the_line_count():
    lines = expand("""\
        #define ADD3(a, b, c) ((a) + (b) + (c))
        int s = ADD3(1,
                     2,
                     3);
        int after = 4;
        """)
    assert squash(lines[1]) == "ints=((1)+(2)+(3))"
    assert lines[2].strip() == "" and lines[3].strip() == ";"
    assert lines[4] == "int after = 4;"


def test_multi_line_define_with_continuations():
    source = textwrap.dedent("""\
        #define BODY(x) \\
            ((x) * 2 + \\
             1)
        int y = BODY(3);
        """)
    assert collect_macros(source)["BODY"].params == ("x",)
    lines = expand(source)
    assert squash(lines[3]) == "inty=((3)*2+1);"


def test_strings_and_char_literals_are_untouched():
    lines = expand("""\
        #define N 16
        #define F(x) x + 1
        const char* s = "N F(2) // not a comment";
        char c = 'N';
        int n = N;
        printf("N \\" N", N, 'N', "N"); char q = '\\''; int m = F(N);
        """)
    assert lines[2] == 'const char* s = "N F(2) // not a comment";'
    assert lines[3] == "char c = 'N';"
    assert lines[4] == "int n = 16;"
    # uses between and after literals (one with an escaped quote) expand; none inside them
    assert lines[5] == """printf("N \\" N", 16, 'N', "N"); char q = '\\''; int m = 16 + 1;"""


def test_directives_are_lines_where_only_blanks_precede_the_hash():
    source = textwrap.dedent("""\
        int a = 1; #define NOT_A 2
           #define N 4
        \t#include "b.h"
        const char* s = "#include \\"c.h\\""; int b = N;
        #define LONG(x) \\
          ((x) + N)
        int c = LONG(1);
        int u; #include "x
        #include "d.h"
        """)
    assert set(collect_macros(source)) == {"N", "LONG"}
    # the `#include "x ...` after code is none, and what it would span stays searched
    assert includes(source) == ["b.h", "d.h"]
    lines = expand(source)
    assert lines[0] == "int a = 1; #define NOT_A 2"  # code, as the grammar will see it
    assert squash(lines[3]) == 'constchar*s="#include\\"c.h\\"";intb=4;'
    assert (lines[4], lines[5]) == ("#define LONG(x) \\", "  ((x) + N)")  # kept as written
    assert squash(lines[6]) == "intc=((1)+4);"


def test_stringify_and_token_paste():
    lines = expand("""\
        #define STR(x) #x
        #define CAT(a, b) a##b
        #define DECL(t, n) t CAT(var_, n) = n
        const char* s = STR(hello);
        DECL(int, 3);
        """)
    assert squash(lines[3]) == 'constchar*s="hello";'
    assert squash(lines[4]) == "intvar_3=3;"


def test_variadic_and_self_referencing_macros():
    lines = expand("""\
        #define LOG(fmt, ...) printf(fmt, __VA_ARGS__)
        #define foo foo + 1
        #define A B
        #define B A
        LOG("%d %d", x, y);
        int z = foo;
        int w = A;
        """)
    assert squash(lines[4]) == 'printf("%d%d",x,y);'
    assert squash(lines[5]) == "intz=foo+1;"  # no infinite expansion
    assert squash(lines[6]) == "intw=A;"


def test_function_like_macro_name_without_arguments_is_left_alone():
    lines = expand("""\
        #define F(x) ((x) + 1)
        int (*p)(int) = F;
        int q = F (2);
        """)
    assert squash(lines[1]) == "int(*p)(int)=F;"
    assert squash(lines[2]) == "intq=((2)+1);"


def test_a_call_cpp_would_reject_keeps_its_name():
    # cpp expands a function-like macro only with its number of arguments: a class's
    # `min()` is not the two-argument `min(a,b)` macro a header defines.
    lines = expand("""\
        #define min(a, b) (((a) < (b)) ? (a) : (b))
        #define F() 7
        #define G(x) [x]
        #define V(f, ...) f(__VA_ARGS__)
        static T min() { return min(p, q); }
        int a = F() + F( ) + G() + G(1) + min(1);
        int b = V(g) + V(g, 1, 2);
        """)
    assert squash(lines[4]) == "staticTmin(){return(((p)<(q))?(p):(q));}"
    assert squash(lines[5]) == "inta=7+7+[]+[1]+min(1);"
    assert squash(lines[6]) == "intb=g()+g(1,2);"


def test_macro_arguments_split_only_at_top_level_commas():
    lines = expand("""\
        #define FIRST(a, b) (a)
        #define SECOND(a, b) (b)
        int p = FIRST(f(x, y), g[1]);
        const char* q = SECOND("a, b)", "c");
        int r = SECOND({1, 2}, k);
        """)
    assert squash(lines[2]) == "intp=(f(x,y));"
    assert squash(lines[3]) == 'constchar*q=("c");'
    assert squash(lines[4]) == "intr=(k);"


def test_directive_lines_stay_as_written_and_code_around_them_expands():
    source = textwrap.dedent("""\
        #define N 4
        int a = N;
        #pragma omp target teams distribute \\
            parallel for num_teams(N)

        #if N > 2
        int b = N; \\
        int c = N;
        #endif""")  # no newline at the end: the last line is a directive
    out = preprocess(source, collect_macros(source))
    lines = out.split("\n")
    assert len(lines) == len(source.split("\n"))
    assert lines[0] == "#define N 4" and lines[5] == ""  # #if lines become empty lines
    assert squash(lines[1]) == "inta=4;"
    assert squash(lines[3]) == "parallelfornum_teams(4)"  # a pragma's macros expand
    assert lines[4] == ""
    # a backslash ending a code line does not make the next line a directive's continuation
    assert squash(lines[6]) == "intb=4;\\" and squash(lines[7]) == "intc=4;"
    assert lines[8] == ""


# --------------------------------------------------------------------------- comments


def test_comments_are_stripped_and_lines_kept():
    source = 'a = "//x" + 1; // gone\nb = \'/\'; /* one\ntwo */ c;\nd; /* x */ /* y */ e;'
    out = strip_comments(source)
    # comments become spaces of the same length: columns and lines do not move
    assert [len(line) for line in out.split("\n")] == [len(line) for line in source.split("\n")]
    assert [line.split() for line in out.split("\n")] == [
        ["a", "=", '"//x"', "+", "1;"], ["b", "=", "'/';"], ["c;"], ["d;", "e;"]]
    assert "gone" not in out and "one" not in out


# --------------------------------------------------------------------------- conditionals

CONDITIONALS = """\
#if 0
int dead = 1;
#else
int alive = 1;
#endif
#ifdef SOME_UNKNOWN_FLAG
int first_arm = 1;
#else
int second_arm = 1;
#endif
#if defined(MODE) && MODE == 2
int mode_two = 1;
#elif defined(MODE)
int mode_other = 1;
#else
int no_mode = 1;
#endif
#ifdef __CUDACC__
int cuda = 1;
#endif
#ifndef __HIPCC__
int not_hip = 1;
#endif
#if 1
#if 0
int nested_dead = 1;
#endif
int nested_alive = 1;
#endif
"""


def kept(defined: dict[str, str]) -> set[str]:
    out = resolve_conditionals(CONDITIONALS, defined)
    assert len(out.split("\n")) == len(CONDITIONALS.split("\n"))
    assert "#" not in out  # the directives become empty lines
    return {line.split()[1] for line in out.split("\n") if line.strip()}


def test_if_zero_and_compiler_builtins_decide():
    names = kept({})
    assert "alive" in names and "dead" not in names
    assert {"cuda", "not_hip", "nested_alive"} <= names and "nested_dead" not in names


def test_a_macro_nothing_defines_is_undefined_as_with_cpp():
    names = kept({})
    assert "second_arm" in names and "first_arm" not in names
    assert "no_mode" in names and not {"mode_two", "mode_other"} & names


def test_undecidable_condition_keeps_the_first_arm():
    # a name the implementation reserves may be a compiler builtin; a builtin's value is unknown
    for condition in ("#ifdef __GNUC__", "#if __CUDA_ARCH__ >= 700", "#if F(2)"):
        text = f"#define F(x) x\n{condition}\nint first;\n#else\nint second;\n#endif"
        out = resolve_conditionals(text, {})
        assert "first" in out and "second" not in out, condition


@pytest.mark.parametrize(("defined", "arm"), [
    ({"MODE": "2"}, "mode_two"),
    ({"MODE": "3"}, "mode_other"),
    ({"SOME_UNKNOWN_FLAG": "1"}, "first_arm"),
])
def test_user_define_decides_the_arm(defined, arm):
    names = kept(defined)
    assert arm in names
    assert len(names & {"mode_two", "mode_other", "no_mode"}) == 1


def test_define_selects_the_typedef_a_kernel_counts_with(tmp_path):
    source = textwrap.dedent("""\
        #ifdef USE_FLOAT
        typedef float scalar_t;
        #else
        typedef double scalar_t;
        #endif
        __global__ void square(const scalar_t* x, scalar_t* y) {
          int i = threadIdx.x;
          y[i] = x[i] * x[i];
        }
        """)
    path = tmp_path / "k.cu"
    path.write_text(source)
    as_float = count_features(discover([path], {"USE_FLOAT": "1"}).kernels[0], {"USE_FLOAT": "1"})
    assert (as_float.flops_sp, as_float.flops_dp, as_float.load_bytes) == (1, 0, 4)


def test_the_files_own_define_decides_the_arm(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent("""\
        #define USE_DOUBLE 0
        #if USE_DOUBLE
        typedef double scalar_t;
        #else
        typedef float scalar_t;
        #endif
        __global__ void square(const scalar_t* x, scalar_t* y) {
          int i = threadIdx.x;
          y[i] = x[i] * x[i];
        }
        """))
    fv = count_features(discover([path]).kernels[0])
    assert (fv.flops_sp, fv.flops_dp, fv.load_bytes) == (1, 0, 4)


def test_a_files_own_macro_applies_only_below_its_define(tmp_path):
    # As with cpp: `sigma_id` is a variable in the first kernel and a macro after the
    # #define; a #define in an arm the conditionals drop (HIP only) never applies.
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent("""\
        #ifdef __HIPCC__
        #define __syncwarp()
        #endif
        __global__ void before(float* x, int n) {
          int sigma_id = threadIdx.x * n;
          x[sigma_id] = 1.0f;
          __syncwarp();
        }
        #define sigma_id (threadIdx.x % 8 + 16 * n)
        __global__ void after(float* x, int n) {
          x[sigma_id] = 1.0f;
        }
        """))
    before, after = (count_features(k) for k in discover([path]).kernels)
    assert before.int_ops == 1 and before.barriers == 1
    assert after.int_ops == 3 and after.barriers == 0


def test_a_redefined_macro_expands_with_each_body_below_its_define():
    # hexciton's pattern: each kernel #undefs and #defines its own accessor
    lines = expand("""\
        #define AT(i) a[(i) * 2]
        float p = AT(1);
        #undef AT
        float q = AT(1);
        #define AT(i) b[(i) + 1]
        float r = AT(1);
        #define AT(i) b[(i) + 1]
        float s = AT(1);
        """)
    assert [squash(lines[i]) for i in (1, 3, 5, 7)] == [
        "floatp=a[(1)*2];",
        "floatq=AT(1);",  # undefined here: left as written
        "floatr=b[(1)+1];",
        "floats=b[(1)+1];",  # the same definition again changes nothing
    ]


def test_a_command_line_define_outlasts_the_files_redefinition(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent("""\
        #define N 4
        __global__ void first(float* x) { for (int i = 0; i < N; i++) x[i] += 1.0f; }
        #undef N
        #define N 8
        __global__ void second(float* x) { for (int i = 0; i < N; i++) x[i] += 1.0f; }
        """))
    own = [count_features(k).flops_sp for k in discover([path]).kernels]
    assert own == [4, 8]
    bound = [count_features(k).flops_sp for k in discover([path], {"N": "2"}).kernels]
    assert bound == [2, 2]


def test_a_headers_macros_apply_in_the_includer(tmp_path):
    # only the file's own #defines wait for their line: the header's are not in this text
    (tmp_path / "access.h").write_text("#define AT(a, i) a[(i) * 2]\n")
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent("""\
        #include "access.h"
        __global__ void k(float* x) {
          AT(x, threadIdx.x) += 1.0f;
        }
        """))
    fv = count_features(discover([path]).kernels[0])
    assert (fv.load_bytes, fv.store_bytes, fv.flops_sp) == (4, 4, 1)


# --------------------------------------------------------------------------- through discovery


def test_openmp_pragma_inside_ifdef_attaches_to_the_following_loop():
    # as with cpp, the guarded target pragmas exist only where their macros are defined
    assert discover([FIXTURES / "guarded_pragma.cpp"]).kernels == []
    found = discover([FIXTURES / "guarded_pragma.cpp"], {"USE_GPU": "1", "OFFLOAD": "1"})
    assert [(k.name, k.line) for k in found.kernels] == [("guarded", 6), ("guarded_else", 17)]
    for kernel in found.kernels:
        fv = count_features(kernel)
        assert (fv.flops_sp, fv.load_bytes, fv.store_bytes) == (1, 4, 4)


def test_reported_lines_are_the_files_lines_after_macro_expansion():
    path = FIXTURES / "macro_lines.cu"
    lines = path.read_text().split("\n")
    found = discover([path])
    assert [k.name for k in found.kernels] == ["after_macros", "declared_by_macro"]
    for kernel in found.kernels:
        # the line the tool reports is where the kernel's name stands in the file
        assert kernel.name in lines[kernel.line - 1], (kernel.name, kernel.line)
    after = found.kernels[0]
    fv = count_features(after)
    while_line = next(i + 1 for i, line in enumerate(lines) if "while (" in line)
    assert {s.name for s in fv.flops_sp.free_symbols} == {f"trip_L{while_line}"}
    # IDX(threadIdx.x, 0) expands to ((threadIdx.x) * 16 + (0)): 2 integer ops
    assert fv.int_ops == 2
    assert (fv.load_bytes, fv.store_bytes) == (4, 4)
    # the kernel's display source is the file as written: macros unexpanded
    assert "IDX(threadIdx.x," in after.source


def test_accessor_macros_expose_memory_traffic():
    found = discover([FIXTURES / "macro_lines.cu"])
    fv = count_features(found.kernels[1])
    # A(r, c) is a[(r) * 16 + (c)]: 4 reads of distinct elements and one write, floats
    assert (fv.load_bytes, fv.store_bytes) == (16, 4)
    assert fv.flops_sp == 3


def test_many_accessor_uses_expand_in_every_kernel_of_a_file(tmp_path):
    """Accessor macros two levels deep (`ROP(q)` -> `RK(q) - RR (q)` -> `p[(q)*N + t]`) grow
    each use about 20-fold; a file of such kernels is expanded whole (the growth cap stops
    exponential macros, not linear use): the second kernel's loads are counted too."""
    header = textwrap.dedent(
        """\
        #define N_GP (blockDim.x * gridDim.x)
        #define thread_num (threadIdx.x + (blockIdx.x * blockDim.x))
        #define idx2(p,z) (p[(((z)-1)*(N_GP)) + thread_num])
        #define RK(q) idx2(RK, q)
        #define RR(q) idx2(RR, q)
        #define OUT(q) idx2(OUT, q)
        #define ROP(a) (RK(a) - RR (a))
        """
    )
    terms = " + ".join(f"ROP({q})" for q in range(1, 41))
    kernels = "".join(
        f"__global__ void k{j}(const float* RK, const float* RR, float* OUT) {{\n"
        f"  OUT({j}) = {terms};\n}}\n"
        for j in range(1, 4)
    )
    path = tmp_path / "many.cu"
    path.write_text(header + kernels)
    found = discover([path])
    assert [k.name for k in found.kernels] == ["k1", "k2", "k3"]
    for ir in found.kernels:
        fv = count_features(ir)
        # 40 distinct RK and 40 distinct RR elements read, one OUT element written
        assert (fv.load_bytes, fv.store_bytes) == (80 * 4, 4), ir.name


# --------------------------------------------------------------------------- #if evaluation


def arm(condition: str, defined: dict[str, str | None] | None = None) -> str | None:
    """'yes' or 'no' as resolve_conditionals keeps `#if condition`; None: undecidable."""
    from roofcast.analyzer.preprocess import _decide

    return {True: "yes", False: "no", None: None}[_decide("if", condition, defined or {}).value]


@pytest.mark.rule("D4")
@pytest.mark.parametrize(("condition", "expected"), [
    ("1 + 2 * 3 == 7", "yes"),
    ("(1 + 2) * 3 == 7", "no"),
    ("-1 < 0", "yes"),
    ("-1 < 0u", "no"),  # the usual arithmetic conversions: -1 becomes UINTMAX_MAX
    ("18446744073709551615 == -1", "yes"),  # too big for intmax_t: unsigned
    ("9223372036854775807 + 1 < 0", "yes"),  # intmax_t wraps
    ("0x10 == 16 && 010 == 8 && 1ULL << 63 > 0", "yes"),
    ("-7 / 2 == -3 && -7 % 2 == -1", "yes"),  # division truncates toward zero
    ("'a' == 97 && '\\n' == 10 && '\\x41' == 65", "yes"),
    ("0 && 1 / 0", "no"),  # short-circuit: the division is never done
    ("1 || 1 / 0", "yes"),
    ("1 ? 2 : 1 / 0", "yes"),
    ("defined(A) && A > 2", "yes"),
    ("defined A && !defined C", "yes"),
    ("UNDEFINED_NAME == 0", "yes"),  # cpp: a name left after expansion is 0
    ("~0 == -1 && (5 & 3) == 1 && (5 | 3) == 7 && (5 ^ 3) == 6", "yes"),
    ("1 / 0", None),
    ("1 << 64", None),
    ("9**9**9**9", None),  # not C (Python's eval hung on it)
    ("2.5 > 1", None),  # no floating constants in #if
    ("F(1)", None),  # a function-like macro call
    ("__GNUC__ >= 4", None),  # a reserved name: perhaps a compiler's builtin
    ("__CUDA_ARCH__ >= 700", None),  # a builtin whose value is unknown
    ("1 +", None),
    ("(" * 3000 + "1" + ")" * 3000, None),
])
def test_if_conditions_have_c_preprocessor_meaning(condition, expected):
    assert arm(condition, {"A": "B", "B": "3", "F": None}) == expected


def test_a_macro_bomb_in_a_condition_is_bounded():
    import time

    bomb = {f"A{i}": f"(A{i + 1} + A{i + 1})" for i in range(64)} | {"A64": "1"}
    started = time.perf_counter()
    assert arm("A0 > 0", bomb) is None
    assert time.perf_counter() - started < 2


@pytest.mark.rule("D5")
def test_notes_name_the_undefined_macros_that_chose_an_arm():
    text = textwrap.dedent("""\
        #ifndef GUARD_H
        #define GUARD_H
        #ifndef BLOCK
        #define BLOCK 256
        #endif
        #ifdef USE_DOUBLE
        double x;
        #endif
        #if LEVEL > 2
        int y;
        #endif
        #endif
        """)
    notes: list[str] = []
    out = resolve_conditionals(text, {}, notes=notes)
    assert "double" not in out and "int y" not in out
    # a guard or a default value (`#ifndef X / #define X`) is no choice worth a note
    assert notes == ["USE_DOUBLE", "LEVEL"]


def test_undefine_overrides_a_define_and_a_builtin():
    text = "#ifdef __CUDACC__\nint cuda;\n#endif\n#ifdef X\nint x;\n#endif\n"
    out = resolve_conditionals(text, {"X": "1"}, undefined=frozenset({"__CUDACC__", "X"}))
    assert "cuda" not in out and "int x" not in out


def _expanded_anew(text: str) -> str:
    """`preprocess`, every function-like call expanded afresh (no call's expansion reused)."""
    from roofcast.analyzer import preprocess as pp

    macros = collect_macros(text)
    budget = max(len(text) * (pp.MAX_GROWTH - 1), pp.MIN_EXPANSION_BUDGET)
    expander = pp._Expander(macros, budget, reuse_calls=False)
    return pp._expand_text(text, expander)


@pytest.mark.parametrize(
    "text",
    [
        # an accessor met again and again, and again after its redefinition
        "#define A(i, j) a[(i) * N + (j)]\n#define N 64\n"
        + "x = A(1, 2) + A(1, 2) * A(i, j);\n" * 50
        + "#undef A\n#define A(i, j) b[(j) * N + (i)]\n"
        + "y = A(1, 2) + A(i, j);\n" * 50,
        # a call that doubles at each level, met until the budget refuses the copies
        "".join(f"#define D{i}(x) (D{i + 1}(x) + D{i + 1}(x))\n" for i in range(14))
        + "#define D14(x) (x)\n"
        + "s = D0(v) + D0(w);\n" * 200,
    ],
)
def test_a_repeated_macro_call_expands_as_it_would_anew(text):
    """A call met again reuses its first expansion: the text is the one each call expanded
    afresh gives, also where the growth cap refuses some copies."""
    assert preprocess(text, collect_macros(text)) == _expanded_anew(text)
