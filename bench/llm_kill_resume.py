"""Kill a campaign midway (server first, then roofcast) and resume it: nothing lost, nothing twice.

    python bench/llm_kill_resume.py --manifest DEV.csv --sources HECBENCH/src \\
        --per-class 3 --store /tmp/llm-kill.sqlite

1. starts `roofcast llm serve` (a child process) and `roofcast llm run` against it;
2. once half the kernels are answered, SIGKILLs the server, waits, then SIGKILLs roofcast;
3. counts the store's rows (total, distinct request hashes, answered);
4. starts a fresh server and runs the same command again;
5. checks that every row from before is still there unchanged, that the store holds exactly
   one row per kernel, and that the resumed run was served those rows from the store.
"""
from __future__ import annotations

import argparse
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from llm_campaign import roofcast  # noqa: E402
from roofcast.llm.serve import LocalServer  # noqa: E402


def rows(store: Path) -> dict[str, tuple]:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
            return {r[0]: r[1:] for r in conn.execute(
                "SELECT request_hash, kernel_id, answer, created_at FROM requests")}
    except sqlite3.OperationalError:
        return {}


def counts(store: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        total, distinct, answered, kernels = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT request_hash), "
            "SUM(answer IS NOT NULL), COUNT(DISTINCT kernel_id) FROM requests").fetchone()
    return {"rows": total, "distinct_hashes": distinct, "answered": answered or 0,
            "kernels": kernels}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, required=True)
    parser.add_argument("--sources", type=Path, required=True)
    parser.add_argument("--per-class", type=int, default=3)
    parser.add_argument("--scenario", default="zero-shot")
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--model", default="smollm2", help="model `roofcast llm serve` loads")
    parser.add_argument("--store", type=Path, required=True)
    args = parser.parse_args()
    if args.store.exists():
        sys.exit(f"{args.store} exists; give a fresh store path")

    def command(base_url: str) -> list[str]:
        return [roofcast(), "llm", "run", "-m", str(args.manifest), "-s", str(args.sources),
                "--scenario", args.scenario, "--per-class", str(args.per_class), "--model",
                "local", "--base-url", base_url, "--budget", str(args.budget), "--store",
                str(args.store), "--json", "-q"]

    server = LocalServer(model=args.model).start()
    campaign = subprocess.Popen(command(server.base_url), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    kernels = 4 * args.per_class
    while len([r for r in rows(args.store).values() if r[1] is not None]) < kernels // 2:
        if campaign.poll() is not None:
            sys.exit("the campaign ended before it could be killed: " + campaign.stderr.read())
        time.sleep(0.5)
    server.process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
    server.process.wait()  # type: ignore[union-attr]
    time.sleep(3)  # roofcast is now retrying a dead endpoint
    campaign.send_signal(signal.SIGKILL)
    campaign.wait()
    before = rows(args.store)
    before_counts = counts(args.store)
    print(f"killed server, then roofcast (exit {campaign.returncode}); store: {before_counts}")

    with LocalServer(model=args.model) as fresh:
        start = time.perf_counter()
        done = subprocess.run(command(fresh.base_url), capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"resume failed: {done.stderr.strip()}")
    summary = json.loads(done.stdout)
    after = rows(args.store)
    after_counts = counts(args.store)
    unchanged = all(after.get(h) == v for h, v in before.items())
    print(f"resumed in {wall:.0f} s; store: {after_counts}")
    print(f"resumed run: store hits {summary['store']['hits']}, sent {summary['store']['sent']}, "
          f"kernels {summary['kernels']}, answered {summary['answered']}")
    checks = {
        "every earlier row unchanged": unchanged,
        "one row per request (rows == distinct hashes)":
            after_counts["rows"] == after_counts["distinct_hashes"],
        "one row per kernel": after_counts["rows"] == summary["kernels"] == kernels,
        "earlier answers served from the store": summary["store"]["hits"]
            == before_counts["answered"],
        "only the missing ones were sent": summary["store"]["sent"]
            == kernels - before_counts["answered"],
    }
    for name, ok in checks.items():
        print(f"  {'ok  ' if ok else 'FAIL'} {name}")
    sys.exit(0 if all(checks.values()) else 1)


if __name__ == "__main__":
    main()
