"""roofcast.llm against a real local OpenAI-compatible server (llama.cpp via xllamacpp).

The server is `roofcast llm serve` in a child process (the code users run), with the
SmolLM2-135M test model from PyPI. Tests skip, with the reason, only when xllamacpp or the
model package is not installed. Prompts are kept small (tiny token budget): each request
costs a few seconds of CPU.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
import uuid
from pathlib import Path

import pytest
from roofcast.gpu_specs import load_gpu
from roofcast.llm.answers import LABELS, UNPARSED
from roofcast.llm.ask import Asker
from roofcast.llm.client import LLMClient
from roofcast.llm.config import LOCAL_URL_ENV, LLMConfig
from roofcast.llm.prompts import KernelInput, Prompt, build_prompt
from roofcast.llm.serve import LocalServer, free_port
from roofcast.llm.store import Store

from roofcast.predictors.base import LaunchContext

GPU = load_gpu("rtx3080")
BUDGET = 96  # tokens of code context: keeps every prompt small

TOY_CU = """\
#include <cuda_runtime.h>

// streaming: one load, one store per element
__global__ void scale(float* __restrict__ y, const float* __restrict__ x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

__global__ void poly(float* __restrict__ y, const float* __restrict__ x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
    for (int k = 0; k < 256; ++k) acc = acc * v + 1.0f;
    y[i] = acc;
}

__global__ void copy(float* __restrict__ y, const float* __restrict__ x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}

int main(int argc, char** argv)
{
    int n = atoi(argv[1]);
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    scale<<<(n + 255) / 256, 256>>>(y, x, 2.0f, n);
    poly<<<(n + 255) / 256, 256>>>(y, x, n);
    copy<<<(n + 255) / 256, 256>>>(y, x, n);
    return 0;
}
"""
ROWS = [
    ("scale", "scale(float*, float const*, float, int)", "Bandwidth"),
    ("poly", "poly(float*, float const*, int)", "Compute"),
    ("copy", "copy(float*, float const*, int)", "Bandwidth"),
]
COLUMNS = ["target", "family", "language", "kernel", "kernel_signature", "omp_function",
           "omp_line", "block", "grid", "exe_args", "xtime_ns", "dram_bytes", "sp_flops",
           "dp_flops", "int_ops", "sp_ai", "dp_ai", "int_ai", "label"]


@pytest.fixture
def toy(tmp_path: Path) -> tuple[Path, Path]:
    """A manifest of three kernels of our own and their sources folder."""
    sources = tmp_path / "src"
    (sources / "toy-cuda").mkdir(parents=True)
    (sources / "toy-cuda" / "main.cu").write_text(TOY_CU)
    manifest = tmp_path / "toy.csv"
    with manifest.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for name, signature, label in ROWS:
            writer.writerow(["toy-cuda", "toy", "CUDA", name, signature, "", "",
                             "(256, 1, 1)", "(4096, 1, 1)", "1048576", "1000", "8388608",
                             "1048576", "0", "3145728", "0.125", "0", "0.375", label])
    return manifest, sources


def _kernel() -> KernelInput:
    from roofcast.analyzer.model import KernelIR

    ir = KernelIR(name="scale", file="main.cu", line=3, language="cuda",
                  signature="void scale(float* y, const float* x, float a, int n)", params=[],
                  source=TOY_CU.split("__global__ void poly")[0].split("\n", 2)[2])
    return KernelInput(key="toy:scale", ir=ir,
                       launch=LaunchContext(block=(256, 1, 1), grid=(4096, 1, 1)))


def _roofcast() -> list[str]:
    script = Path(sys.executable).with_name("roofcast")
    return [str(script)] if script.exists() else [shutil.which("roofcast") or "roofcast"]


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    """`roofcast ARGS` run in this process: the same code as the console script without a new
    interpreter and its imports per call (the killed campaign and analyze start real ones).
    An unexpected exception shows as a traceback on stderr, as it would from the script."""
    from typer.testing import CliRunner

    from roofcast.cli.main import app

    result = CliRunner().invoke(app, list(args))
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback (in process):\n" + "".join(
            traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, stderr)


def _campaign_args(manifest: Path, sources: Path, store: Path, base_url: str) -> list[str]:
    return ["llm", "run", "-m", str(manifest), "-s", str(sources), "--scenario", "zero-shot",
            "--model", "local", "--base-url", base_url, "--budget", str(BUDGET),
            "--store", str(store), "--concurrency", "1", "--retries", "0", "-q"]


def _dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


# ---------------------------------------------------------------- with the server

@pytest.mark.llm
def test_real_answer_parsed_then_served_from_store_without_request(
    local_server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"sk-roofcast-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    store_path = tmp_path / "llm.sqlite"
    config = LLMConfig(model="local", base_url=local_server.base_url)
    prompt = build_prompt("zero-shot", _kernel(), GPU, config.structured_mode, BUDGET)
    with Store(store_path) as store:
        client = LLMClient(config)
        first = Asker(config, store, client).ask(prompt, "toy:scale")
        assert first.label in LABELS and first.sent == 1 and first.hits == 0
        assert first.confidence is not None and 0.0 <= first.confidence <= 1.0
        row = first.samples[0]
        assert row.raw_text and row.prompt_tokens and row.latency_s and row.cost_usd == 0.0
        # same request, endpoint gone: the store answers, nothing is sent
        dead = LLMConfig(model="local", base_url=_dead_url(), retries=0)
        again = Asker(dead, store, LLMClient(dead), model_id=client.model_id()).ask(
            prompt, "toy:scale")
        assert (again.label, again.hits, again.sent) == (first.label, 1, 0)
        assert store.count() == 1
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("llm.sqlite*"))
    assert secret.encode() not in blob


@pytest.mark.llm
def test_reply_that_is_not_an_answer_is_stored_unparsed(
    local_server: LocalServer, tmp_path: Path
) -> None:
    config = LLMConfig(model="local", base_url=local_server.base_url, structured="none",
                       max_tokens=3)
    prompt = Prompt("zero-shot", ({"role": "user", "content": "Greet a friend warmly."},), "word")
    with Store(tmp_path / "s.sqlite") as store:
        answer = Asker(config, store, LLMClient(config)).ask(prompt, "greeting")
        assert answer.label == UNPARSED
        row = store.get(answer.samples[0].request_hash)
        assert row is not None and row.answer == UNPARSED and row.raw_text and row.error is None


@pytest.mark.llm
def test_campaign_killed_midway_resumes_without_loss_or_duplicates(
    local_server: LocalServer, toy: tuple[Path, Path], tmp_path: Path
) -> None:
    manifest, sources = toy
    store = tmp_path / "campaign.sqlite"
    args = _campaign_args(manifest, sources, store, local_server.base_url)
    process = subprocess.Popen([*_roofcast(), *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    answered = 0
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
                answered = conn.execute(
                    "SELECT COUNT(*) FROM requests WHERE answer IS NOT NULL").fetchone()[0]
        except sqlite3.OperationalError:  # not created yet, or being created
            answered = 0
        if answered >= 1:
            break
        time.sleep(0.2)
    assert process.poll() is None, "the campaign finished before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait()
    with sqlite3.connect(store) as conn:
        before = dict(conn.execute("SELECT request_hash, created_at FROM requests"))
    assert 1 <= len(before) < len(ROWS)

    resumed = _run_cli(*args, "--json")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["store"]["hits"] == len(before)
    assert summary["store"]["sent"] == len(ROWS) - len(before)
    with sqlite3.connect(store) as conn:
        after = dict(conn.execute("SELECT request_hash, created_at FROM requests"))
        assert conn.execute("SELECT COUNT(DISTINCT kernel_id) FROM requests").fetchone()[0] \
            == len(ROWS)
    assert len(after) == len(ROWS)
    assert all(after[h] == t for h, t in before.items())  # earlier answers untouched

    # the whole campaign re-scored from the store, with no endpoint at all
    replay_args = _campaign_args(manifest, sources, store, _dead_url())
    replay = _run_cli(*replay_args, "--replay", "--json")
    assert replay.returncode == 0, replay.stderr
    replayed = json.loads(replay.stdout)
    assert replayed["store"] == {"hits": len(ROWS), "sent": 0, "hit_rate": 1.0}
    assert replayed["metrics"]["accuracy"] == summary["metrics"]["accuracy"]


@pytest.mark.llm
def test_predictor_protocol_on_an_analyzed_kernel(local_server: LocalServer, tmp_path: Path
                                                  ) -> None:
    from roofcast.llm.predictor import LLMPredictor

    from roofcast.pipeline import analyze_paths
    from roofcast.registry import get_predictor

    source = tmp_path / "toy.cu"
    source.write_text(TOY_CU.split("__global__ void poly")[0])
    report = analyze_paths([source], GPU)
    result = report.kernels[0]
    # string options, as `evaluate --predictor llm -O KEY=VALUE` passes them
    predictor = get_predictor("llm", model="local", base_url=local_server.base_url,
                              scenario="hybrid", budget=str(BUDGET), max_tokens="60",
                              store=str(tmp_path / "p.sqlite"))
    assert isinstance(predictor, LLMPredictor)
    (verdict,) = predictor.predict([(result, LaunchContext(block=(256, 1, 1), grid=(64, 1, 1)))],
                                   GPU)
    assert verdict.predictor == "llm" and verdict.reason
    assert verdict.bound in ("compute", "bandwidth", "unknown")
    assert verdict.details["scenario"] == "hybrid"
    if verdict.bound != "unknown":
        assert verdict.confidence is not None


# ---------------------------------------------------------------- without a server

def test_dead_endpoint_is_one_clear_line(toy: tuple[Path, Path], tmp_path: Path) -> None:
    manifest, sources = toy
    done = _run_cli(*_campaign_args(manifest, sources, tmp_path / "s.sqlite", _dead_url()))
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("roofcast: error: endpoint")
    assert "unreachable" in lines[0] or "connection" in lines[0].lower()
    assert "Traceback" not in done.stderr


def test_remote_endpoint_without_key_is_one_clear_line(toy: tuple[Path, Path], tmp_path: Path
                                                       ) -> None:
    manifest, sources = toy
    done = _run_cli("llm", "run", "-m", str(manifest), "-s", str(sources), "--model",
                    "gpt-4o-mini", "--api-key-env", "ROOFCAST_TEST_NO_SUCH_KEY", "--store",
                    str(tmp_path / "s.sqlite"), "-q")
    assert done.returncode == 2
    assert done.stderr.strip() == ("roofcast: error: no API key: set ROOFCAST_TEST_NO_SUCH_KEY "
                                   "(or name another variable with --api-key-env)")


def test_replay_of_an_empty_store_reports_missing_answers(toy: tuple[Path, Path], tmp_path: Path
                                                          ) -> None:
    manifest, sources = toy
    done = _run_cli("llm", "run", "-m", str(manifest), "-s", str(sources), "--model",
                    "local:SmolLM2-135M-Instruct.Q4_1.gguf", "--replay", "--json",
                    "--store", str(tmp_path / "empty.sqlite"), "-q")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["missing"] == len(ROWS) and summary["answered"] == 0


def test_export_finetune_writes_chat_jsonl(toy: tuple[Path, Path], tmp_path: Path) -> None:
    manifest, sources = toy
    out = tmp_path / "train.jsonl"
    done = _run_cli("llm", "export-finetune", "-m", str(manifest), "-s", str(sources),
                    "-o", str(out), "--budget", "200")
    assert done.returncode == 0, done.stderr
    assert "wrote 3 examples" in done.stdout
    assert "at least 10" in done.stderr  # OpenAI's minimum, said as a warning
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["messages"][-1]["content"] for r in records] == [label for *_, label in ROWS]
    for record in records:
        system, user, _ = record["messages"]
        assert system["role"] == "system" and "streaming" not in user["content"]  # no comments
        assert "Kernel `" in user["content"] and str(tmp_path) not in user["content"]


# ------------------------------------------------ the CLI verbs that take --predictor llm

@pytest.mark.llm
def test_evaluate_scores_the_llm_predictor_on_the_same_rows(
    local_server: LocalServer, toy: tuple[Path, Path], tmp_path: Path
) -> None:
    manifest, sources = toy
    proc = _run_cli("evaluate", "--manifest", str(manifest), "--sources", str(sources),
                    "--gpu", "rtx3080", "--predictor", "llm", "--model", "local",
                    "--base-url", local_server.base_url, "--scenario", "zero-shot",
                    "--store", str(tmp_path / "eval.sqlite"), "-O", f"budget={BUDGET}",
                    "--format", "json", "-q")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["n"] == len(ROWS) and summary["coverage"] == 1.0
    confusion = summary["confusion"]
    answered = sum(confusion[t][p] for t in confusion for p in confusion[t])
    # every row is a real answer of the model or an honest `unknown`, never a guess
    assert answered + summary["unknown"] == len(ROWS)


@pytest.mark.llm
def test_analyze_puts_the_llm_verdict_beside_the_static_one(
    local_server: LocalServer, toy: tuple[Path, Path], tmp_path: Path
) -> None:
    _, sources = toy
    env = {**os.environ, LOCAL_URL_ENV: local_server.base_url, "HOME": str(tmp_path)}
    proc = subprocess.run([*_roofcast(), "analyze", str(sources), "--gpu", "a100",
                           "--predictor", "roofline", "--llm", "local", "--scenario", "zero-shot",
                           "--format", "json"], capture_output=True, text=True, timeout=600,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    kernels = json.loads(proc.stdout)["kernels"]
    assert kernels and all(k["predictor"] == "roofline" for k in kernels)
    for kernel in kernels:
        llm = kernel["verdicts"]["llm"]
        assert llm["predictor"] == "llm" and llm["bound"] in ("compute", "bandwidth", "unknown")


def test_evaluate_with_a_dead_endpoint_is_one_line(toy: tuple[Path, Path]) -> None:
    manifest, sources = toy
    proc = _run_cli("evaluate", "--manifest", str(manifest), "--sources", str(sources),
                    "--gpu", "rtx3080", "--predictor", "llm", "--model", "m",
                    "--base-url", _dead_url(), "-q")
    assert proc.returncode == 3
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("roofcast: error: endpoint")
    assert "Traceback" not in proc.stderr
