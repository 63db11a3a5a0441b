#!/usr/bin/env python3
"""size --serve against published serving figures: issue 42's targets on the real binary.

Runs `gpubench calibrate --serve --fit --json` (every row of configs/calibration/serving.json
sized as published, each source group by the serving constant fitted without its rows) and fails
when the held-out median error of the offline output tokens/s,
the TTFT or the TPOT is above 20%, or any of them is not better than the naive roofline's (the
datasheet peak for prefill, the datasheet bandwidth streaming the weights for decode). It also checks that every row was sized and that each median is the median of the rows'
own errors, so the summary cannot drift from the rows it summarises.

usage: check_serving_rows.py GPUBENCH
"""
import json
import statistics
import subprocess
import sys

TARGET = 0.20
TARGETED = ("output_tokens_per_s", "ttft_ms", "tpot_ms")


def main():
    done = subprocess.run([sys.argv[1], "calibrate", "--serve", "--fit", "--json"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"calibrate --serve --fit: exit {done.returncode}: {done.stderr.strip()}")
    check = json.loads(done.stdout)["held_out"]
    rows = check["rows"]
    if len(rows) < 50:
        raise SystemExit(f"only {len(rows)} rows sized")
    errors = {}
    for row in rows:
        for name, pair in row["figures"].items():
            predicted = pair["predicted"]
            errors.setdefault(name, []).append(
                1.0 if predicted is None else abs(predicted / pair["published"] - 1))
    problems = []
    for name, values in errors.items():
        median = statistics.median(values)
        reported = check["figures"][name]["median_abs_error"]
        print(f"{name}: median {median:.1%} over {len(values)} rows")
        if abs(median - reported) > 1e-9:
            problems.append(f"{name}: the summary says {reported:.4%}, the rows {median:.4%}")
        if name in TARGETED and median > TARGET:
            problems.append(f"{name}: median {median:.1%} is above {TARGET:.0%}")
    for name in TARGETED:
        naive = check["naive"][name]["median_abs_error"]
        ours = check["figures"][name]["median_abs_error"]
        print(f"naive roofline, {name}: median {naive:.1%}")
        if ours >= naive:
            problems.append(f"{name} {ours:.1%} is no better than the naive roofline's {naive:.1%}")
    if problems:
        raise SystemExit("; ".join(problems))


if __name__ == "__main__":
    main()
