"""The intrinsic catalogue as data (features/data/intrinsics.toml) and a GPU file's
special-function cost overrides: the loader refuses malformed files, and an override in a
GPU file changes the FLOPs a special function weighs."""

from __future__ import annotations

import textwrap
from importlib import resources
from pathlib import Path

import pytest
from roofcast.features import mathfuncs
from roofcast.features.mathfuncs import CatalogueError, load_catalogue, special_costs
from roofcast.features.resolve import resolve_counts
from roofcast.gpu_specs import _load_file, list_gpus, load_gpu

from roofcast.pipeline import analyze_paths
from roofcast.predictors.roofline import RooflinePredictor

SHIPPED = resources.files("roofcast.features").joinpath("data", "intrinsics.toml")


def test_shipped_catalogue_is_versioned_and_every_table_cites_a_listed_source() -> None:
    text = SHIPPED.read_text("utf-8")
    catalogue = load_catalogue(text)
    assert catalogue.version >= 1
    assert {"cuda-math-api", "nvcc-sass"} <= set(catalogue.sources)
    assert all(s.get("title") for s in catalogue.sources.values())
    # a table citing a source the file does not list is refused
    broken = text.replace('source = ["cuda-math-api"]\n', 'source = ["nowhere"]\n', 1)
    assert broken != text
    with pytest.raises(CatalogueError, match="cites no listed source"):
        load_catalogue(broken)


def test_every_special_kind_has_a_cost_for_each_precision() -> None:
    text = SHIPPED.read_text("utf-8")
    kinds = {kind for kind, _ in mathfuncs.SPECIAL.values()}
    assert kinds <= set(mathfuncs.SPECIAL_COSTS)
    assert all(set(c) == {"hp", "sp", "dp"} for c in mathfuncs.SPECIAL_COSTS.values())
    with pytest.raises(CatalogueError, match="has no cost"):
        load_catalogue(text.replace("[special.pow]", "[special.power]"))
    with pytest.raises(CatalogueError, match="precision 'fp32'"):
        load_catalogue(
            text.replace('precision = "sp", lanes = 1 }', 'precision = "fp32", lanes = 1 }', 1)
        )


def test_precision_of_a_name_comes_from_the_file() -> None:
    # `arg` names follow their argument, the others are fixed by the file
    assert mathfuncs.SPECIAL["sinf"] == ("trig", "sp")
    assert mathfuncs.SPECIAL["sin"] == ("trig", None)
    assert mathfuncs.SPECIAL["__dsqrt_rn"] == ("sqrt", "dp")
    assert mathfuncs.prefix_result("__float2half_rn") == ("__float2half", "hp")
    assert mathfuncs.prefix_result("__float2int_rn") == ("__float2", "unknown")
    assert mathfuncs.prefix_result("make_float4") == ("make_", "named")
    assert mathfuncs.prefix_result("sinf") is None


GPU_FILE = """\
name = "Test GPU"
sms = 10
base_clock_ghz = 1.0
bandwidth_gbs = 100
[lanes_per_sm]
fp32 = 64
[special_flops]
trig = { sp = 30 }
"""

KERNEL = """\
__global__ void waves(const float* x, float* y) {
  int i = threadIdx.x;
  y[i] = sinf(x[i]) + cosf(x[i]) + sqrtf(x[i]);
}
"""


def test_an_override_in_a_gpu_file_changes_the_count(tmp_path: Path) -> None:
    gpu = _load_file("test", GPU_FILE)
    assert gpu.special_flops == {"trig": {"sp": 30}}
    path = tmp_path / "waves.cu"
    path.write_text(textwrap.dedent(KERNEL))
    report = analyze_paths([path], load_gpu("a100"), {}, RooflinePredictor())
    (kernel,) = report.kernels
    default = resolve_counts(kernel.features).flops["sp"]
    assert default == kernel.resolved.flops["sp"]
    overridden = resolve_counts(kernel.features, special_weights=special_costs(gpu.special_flops))
    # two trig calls (sinf, cosf) at 30 FLOPs instead of the catalogue's cost; sqrtf unchanged
    trig = mathfuncs.SPECIAL_COSTS["trig"]["sp"]
    assert overridden.flops["sp"] - default == 2 * (30 - trig)
    assert overridden.flops["dp"] == resolve_counts(kernel.features).flops["dp"]


def test_bad_overrides_are_refused() -> None:
    with pytest.raises(CatalogueError, match="unknown kind 'trigo'"):
        special_costs({"trigo": {"sp": 3}})
    with pytest.raises(ValueError, match=r"\[special_flops\] trig must map hp/sp/dp"):
        _load_file("test", GPU_FILE.replace("trig = { sp = 30 }", "trig = { fp32 = 30 }"))


def test_bundled_gpu_overrides_name_known_kinds() -> None:
    for gpu in list_gpus():
        costs = special_costs(gpu.special_flops)
        assert set(costs) == set(mathfuncs.SPECIAL_COSTS), gpu.key
        if gpu.special_flops:  # a difference must be cited in the file's [source] table
            assert "special_flops" in gpu.source, gpu.key
