"""Compare the last record of ``benchmarks/bo_step_history.jsonl`` (``python
benchmarks/bo_step.py --history``) with the previous one of the same CPU and thread count: one
line per (implementation, n, d) both measured, the ratio last / previous, and every step of our
GP more than 20 % slower named as a regression (exit 1). The peers' ratios show how much of a
change is the machine's (a busier machine slows them too).

    python benchmarks/bo_step_check.py [--threshold 0.2]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HISTORY = Path(__file__).resolve().with_name("bo_step_history.jsonl")


def comparable(records: list[dict]) -> tuple[dict, dict] | None:
    """The last record and the previous one measured on its CPU with its thread count."""
    last = records[-1]
    for earlier in reversed(records[:-1]):
        if (earlier["cpu"], earlier["threads"]) == (last["cpu"], last["threads"]):
            return earlier, last
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=0.2)
    parser.add_argument("--history", type=Path, default=HISTORY)
    args = parser.parse_args(argv)
    lines = args.history.read_text().splitlines() if args.history.exists() else []
    records = [json.loads(line) for line in lines if line.strip()]
    pair = comparable(records) if records else None
    if pair is None:
        print(f"no two records of one CPU and thread count in {args.history}")
        return 0
    before, after = pair
    print(f"{before['commit']} -> {after['commit']} ({after['cpu']}, {after['threads']} threads)")
    old = {(m["impl"], m["n"], m["d"]): m["median_s"] for m in before["medians"]}
    regressions = []
    for m in after["medians"]:
        key = (m["impl"], m["n"], m["d"])
        if key not in old:
            continue
        ratio = m["median_s"] / old[key]
        slower = key[0] == "ours-gp" and ratio > 1 + args.threshold
        mark = "  REGRESSION" if slower else ""
        print(f"{key[0]:>12} n={key[1]:<4} d={key[2]:<3} {old[key]:.3f}s -> {m['median_s']:.3f}s"
              f" ({ratio:.2f}x){mark}")  # fmt: skip
        if slower:
            regressions.append(key)
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
