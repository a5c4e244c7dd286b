"""Every predictor keeps the one contract (`predictor_contract.check_predictor`): roofline,
the default learned baseline and the LLM (against the real local server)."""

from __future__ import annotations

from pathlib import Path

import pytest
from predictor_contract import check_predictor, contract_items, contract_kernels
from roofcast.gpu_specs import GPU, load_gpu

from roofcast.predictors.learned import LearnedPredictor
from roofcast.predictors.roofline import RooflinePredictor
from roofcast.registry import default_predictor, get_predictor
from roofcast.results import KernelResult


@pytest.fixture(scope="module")
def gpu() -> GPU:
    return load_gpu("a100")


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory, gpu: GPU) -> list[KernelResult]:
    return contract_kernels(tmp_path_factory.mktemp("contract"), gpu)


def test_roofline_keeps_the_contract(kernels: list[KernelResult], gpu: GPU) -> None:
    items = contract_items(kernels)
    verdicts = check_predictor(RooflinePredictor(), items, gpu)
    by_name = {k.ir.name: v.bound for (k, _), v in zip(items, verdicts, strict=True)}
    assert by_name == {
        "scale": "bandwidth",
        "poly": "compute",
        "copy": "bandwidth",
        "nothing": "unknown",
    }


def test_the_default_baseline_keeps_the_contract(kernels: list[KernelResult], gpu: GPU) -> None:
    predictor = default_predictor()
    assert isinstance(predictor, LearnedPredictor)  # the shipped model loads
    verdicts = check_predictor(predictor, contract_items(kernels), gpu)
    assert {v.bound for v in verdicts} == {"compute", "bandwidth", "unknown"}
    assert all(v.confidence is not None for v in verdicts if v.bound != "unknown")


def test_a_predictor_breaking_the_contract_is_caught(kernels: list[KernelResult], gpu: GPU) -> None:
    """The checker itself can fail: a predictor that answers in its own order, one that
    forgets its name on unknown verdicts, one that raises its own error type."""

    class Sorted(RooflinePredictor):
        def predict(self, items, gpu):
            return sorted(super().predict(items, gpu), key=lambda v: v.bound)

    class Nameless(RooflinePredictor):
        def predict(self, items, gpu):
            out = super().predict(items, gpu)
            for v in out:
                if v.bound == "unknown":
                    v.predictor = "?"
            return out

    class OwnError(RooflinePredictor):
        def predict(self, items, gpu):
            if not isinstance(gpu, GPU):
                raise ValueError("no GPU")
            return super().predict(items, gpu)

    for bad, words in ((Sorted(), "order"), (Nameless(), "names"), (OwnError(), "not TypeError")):
        with pytest.raises(AssertionError, match=words):
            check_predictor(bad, contract_items(kernels), gpu)


@pytest.mark.llm
def test_the_llm_keeps_the_contract(
    local_server, kernels: list[KernelResult], gpu: GPU, tmp_path: Path
) -> None:
    # string options, as `evaluate --predictor llm -o KEY=VALUE` passes them; two requests in
    # flight, so the order is the predictor's doing, not the server's
    predictor = get_predictor(
        "llm",
        model="local",
        base_url=local_server.base_url,
        scenario="hybrid",
        budget="96",
        max_tokens="60",
        concurrency="2",
        store=str(tmp_path / "contract.sqlite"),
    )
    verdicts = check_predictor(predictor, contract_items(kernels), gpu)
    assert all(v.details["scenario"] == "hybrid" for v in verdicts)
