"""Every LLM scenario end to end on a balanced manifest sample, run twice (store hit rate).

    python bench/llm_campaign.py --manifest DEV.csv --sources HECBENCH/src \\
        --per-class 10 --budget 300 --store /tmp/llm-bench.sqlite --out /tmp/llm-bench.json

Each run is the user's command, `roofcast llm run ... --json`, in a child process; the second
run of a scenario must be served from the store (hit rate 100%, no request). Start a server
first (`roofcast llm serve`) for `--model local`, or point --base-url/--model at any
OpenAI-compatible endpoint. Prints a Markdown table; --out keeps every summary as JSON.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

SCENARIOS = ("profile", "zero-shot", "few-shot", "fine-tuned", "hybrid")


def roofcast() -> str:
    script = Path(sys.executable).with_name("roofcast")
    return str(script) if script.exists() else (shutil.which("roofcast") or "roofcast")


def run_once(args: argparse.Namespace, scenario: str) -> tuple[dict, float]:
    command = [
        roofcast(), "llm", "run", "-m", str(args.manifest), "-s", str(args.sources),
        "--scenario", scenario, "--model", args.model, "--budget", str(args.budget),
        "--k", str(args.k), "--store", str(args.store), "--concurrency", str(args.concurrency),
        "--json", "-q",
    ]
    if args.per_class:
        command += ["--per-class", str(args.per_class)]
    if args.base_url:
        command += ["--base-url", args.base_url]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{scenario}: {done.stderr.strip()}")
    return json.loads(done.stdout), wall


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, required=True)
    parser.add_argument("--sources", type=Path, required=True)
    parser.add_argument("--model", default="local")
    parser.add_argument("--base-url")
    parser.add_argument("--per-class", type=int, default=10)
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    results = []
    for scenario in args.scenarios.split(","):
        for run in range(1, args.runs + 1):
            summary, wall = run_once(args, scenario)
            summary["run"] = run
            summary["wall_s"] = round(wall, 1)
            results.append(summary)
            print(f"{scenario} run {run}: {wall:.0f} s, accuracy "
                  f"{pct(summary['metrics']['accuracy'])}, hit rate "
                  f"{pct(summary['store']['hit_rate'])}", file=sys.stderr, flush=True)
            if args.out:
                args.out.write_text(json.dumps(results, indent=1) + "\n")

    print("| scenario | kernels | answered | unparsed | accuracy | balanced acc. | MCC | "
          "mean prompt tok | completion tok | median latency s | run 1 wall s | "
          "run 2 hit rate | run 2 wall s |")
    print("|" + "---|" * 13)
    for first in (r for r in results if r["run"] == 1):
        second = next((r for r in results if r["run"] == 2
                       and r["scenario"] == first["scenario"]), None)
        m = first["metrics"]
        print(
            f"| {first['scenario']} | {first['kernels']} | {first['answered']} | "
            f"{first['unparsed']} | {pct(m['accuracy'])} | {pct(m['balanced_accuracy'])} | "
            f"{m['mcc']:.3f} | {first['mean_prompt_tokens']} | {first['completion_tokens']} | "
            f"{first['latency_s']['median']} | {first['wall_s']} | "
            f"{pct(second['store']['hit_rate']) if second else '-'} | "
            f"{second['wall_s'] if second else '-'} |"
        )


if __name__ == "__main__":
    main()
