"""What CUDA / C math and intrinsic calls cost, in the categories of docs/counting.md."""

from __future__ import annotations

import re

#: name -> (special kind, forced precision or None = argument's precision)
SPECIAL: dict[str, tuple[str, str | None]] = {}


def _register(kind: str, names: str) -> None:
    for name in names.split():
        forced: str | None = None
        if (
            name.startswith("h")
            and name[1:]
            in (
                "sqrt",
                "rsqrt",
                "exp",
                "log",
                "sin",
                "cos",
                "exp2",
                "log2",
                "exp10",
                "log10",
                "rcp",
                "div",
            )
            or name.startswith(("h2", "__h"))
        ):
            forced = "hp"
        elif name.startswith("__d"):
            forced = "dp"
        elif (
            name.endswith("f")
            and name not in ("erf", "normcdf")
            or name.startswith("__f")
            or (name.startswith("__") and name.endswith("f"))
            or re.match(r"__f\w+_r[nzud]$", name)
        ):
            forced = "sp"
        SPECIAL[name] = (kind, forced)


_register(
    "sqrt",
    "sqrt sqrtf __fsqrt_rn __fsqrt_rz __fsqrt_ru __fsqrt_rd __dsqrt_rn __dsqrt_rz "
    "__dsqrt_ru __dsqrt_rd hsqrt h2sqrt norm3d norm3df norm4d norm4df",
)
_register("rsqrt", "rsqrt rsqrtf __frsqrt_rn hrsqrt h2rsqrt rnorm3d rnorm3df rhypot rhypotf")
_register(
    "exp",
    "exp expf __expf exp2 exp2f exp10 exp10f __exp10f expm1 expm1f hexp h2exp "
    "hexp2 h2exp2 hexp10 ldexp ldexpf scalbn scalbnf",
)
_register(
    "log",
    "log logf __logf log2 log2f __log2f log10 log10f __log10f log1p log1pf hlog "
    "h2log hlog2 hlog10 logb logbf",
)
_register("pow", "pow powf __powf powi powif")
_register(
    "trig",
    "sin cos tan sinf cosf tanf __sinf __cosf __tanf sincos sincosf __sincosf "
    "asin acos atan atan2 asinf acosf atanf atan2f sinpi cospi sinpif cospif sincospi "
    "sincospif hsin hcos h2sin h2cos",
)
_register("tanh", "tanh tanhf sinh cosh sinhf coshf asinh acosh atanh asinhf acoshf atanhf")
_register(
    "erf",
    "erf erff erfc erfcf erfinv erfinvf erfcinv erfcinvf normcdf normcdff "
    "normcdfinv normcdfinvf erfcx erfcxf",
)
_register(
    "other",
    "cbrt cbrtf hypot hypotf lgamma lgammaf tgamma tgammaf j0 j0f j1 j1f y0 y0f "
    "y1 y1f fmod fmodf remainder remainderf rcbrt rcbrtf cyl_bessel_i0f cyl_bessel_i0",
)
_register(
    "div",
    "__fdividef fdividef __fdiv_rn __fdiv_rz __fdiv_ru __fdiv_rd __ddiv_rn "
    "__ddiv_rz __ddiv_ru __ddiv_rd __frcp_rn __frcp_rz __drcp_rn hdiv __hdiv h2rcp hrcp "
    "__h2div",
)

#: fused multiply-add: 2 FLOPs per lane
FMA: dict[str, tuple[str | None, int]] = {
    "fma": (None, 1),
    "fmaf": ("sp", 1),
    "__fmaf_rn": ("sp", 1),
    "__fmaf_rz": ("sp", 1),
    "__fmaf_ru": ("sp", 1),
    "__fmaf_rd": ("sp", 1),
    "__fma_rn": ("dp", 1),
    "__fma_rz": ("dp", 1),
    "__fma_ru": ("dp", 1),
    "__fma_rd": ("dp", 1),
    "__hfma": ("hp", 1),
    "__hfma2": ("hp", 2),
    "__fmaf_ieee_rn": ("sp", 1),
    "fmaxmin": ("sp", 0),
}
#: one-FLOP intrinsics: name -> (precision, lanes)
BASIC: dict[str, tuple[str, int]] = {
    "__fadd_rn": ("sp", 1),
    "__fadd_rz": ("sp", 1),
    "__fsub_rn": ("sp", 1),
    "__fmul_rn": ("sp", 1),
    "__fmul_rz": ("sp", 1),
    "__dadd_rn": ("dp", 1),
    "__dsub_rn": ("dp", 1),
    "__dmul_rn": ("dp", 1),
    "__hadd": ("hp", 1),
    "__hsub": ("hp", 1),
    "__hmul": ("hp", 1),
    "__hadd2": ("hp", 2),
    "__hsub2": ("hp", 2),
    "__hmul2": ("hp", 2),
    "__hadd_sat": ("hp", 1),
    "__hmul_sat": ("hp", 1),
}
ATOMICS = re.compile(
    r"^(atomic(Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(_system|_block)?|"
    r"__hip_atomic\w*|atomicAggInc|unsafeAtomicAdd|safeAtomicAdd)$"
)
BARRIERS = frozenset(
    {
        "__syncthreads",
        "__syncthreads_count",
        "__syncthreads_and",
        "__syncthreads_or",
        "__syncwarp",
        "sync",
        "barrier_sync",
        "__barrier_sync",
    }
)
LOADS = frozenset({"__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"})
STORES = frozenset({"__stcg", "__stcs", "__stwb", "__stwt"})
#: integer intrinsics worth one integer instruction
INT_INTRINSICS = frozenset(
    {
        "__popc",
        "__popcll",
        "__clz",
        "__clzll",
        "__ffs",
        "__ffsll",
        "__brev",
        "__brevll",
        "__mul24",
        "__umul24",
        "__mulhi",
        "__umulhi",
        "__mul64hi",
        "__umul64hi",
        "__byte_perm",
        "__funnelshift_l",
        "__funnelshift_r",
        "__funnelshift_lc",
        "__funnelshift_rc",
        "__sad",
        "__usad",
        "__vabsdiffu4",
        "__dp4a",
        "__dp2a_lo",
        "__dp2a_hi",
    }
)
#: no FLOP (and no integer op unless the operands are integers)
FREE = frozenset(
    {
        "fabs",
        "fabsf",
        "fmin",
        "fmax",
        "fminf",
        "fmaxf",
        "floor",
        "floorf",
        "ceil",
        "ceilf",
        "round",
        "roundf",
        "trunc",
        "truncf",
        "rint",
        "rintf",
        "lrint",
        "lround",
        "copysign",
        "copysignf",
        "__saturatef",
        "isnan",
        "isinf",
        "isfinite",
        "signbit",
        "__habs",
        "__hneg",
        "fdim",
        "fdimf",
        "nearbyint",
        "modf",
        "frexp",
    }
)
MINMAX = frozenset(
    {
        "min",
        "max",
        "abs",
        "umin",
        "umax",
        "llmin",
        "llmax",
        "labs",
        "llabs",
        "std::min",
        "std::max",
        "std::abs",
    }
)
