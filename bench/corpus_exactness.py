"""How exactly does the analyzer reproduce the hand counts of the kernel corpus?

Runs discovery, counting and the roofline verdict over kernels/ and prints
"N of M expected values match", then every mismatch, every sidecar kernel the analyzer did
not find and every kernel it found that no sidecar lists.

    python bench/corpus_exactness.py            # summary + mismatches
    python bench/corpus_exactness.py --no-bounds  # counts only (no verdicts)
"""
from __future__ import annotations

import argparse
import sys

from roofcast.kernels.corpus import load_corpus, run_corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-bounds", action="store_true", help="skip the verdict checks")
    parser.add_argument("--strict", action="store_true", help="exit 1 on any mismatch")
    args = parser.parse_args(argv)

    entries = load_corpus()
    run = run_corpus(entries, with_bounds=not args.no_bounds)
    kernels = len({e.key for e in entries})
    print(f"{run.matched} of {run.total} expected values match "
          f"({kernels} kernels, {len(entries)} sidecar entries)")
    for check in run.mismatches:
        if check.field != "(kernel)":
            print(f"  MISMATCH {check.describe()}")
    for entry in run.missing:
        print(f"  NOT FOUND {entry.id} ({entry.value_count()} values)")
    for file, name, line, language in run.unlisted:
        print(f"  UNLISTED {language} {name} at {file}:{line}")
    for note in run.skipped:
        print(f"  skipped {note}")
    for problem in run.problems:
        print(f"  problem {problem}")
    bad = run.total - run.matched + len(run.unlisted)
    return 1 if (args.strict and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
