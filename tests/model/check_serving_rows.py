#!/usr/bin/env python3
"""size --serve against published serving figures (configs/calibration/serving.json).

Runs the real binary for every row as a user would (the row's preset, catalog GPU, GPUs, tensor
and pipeline split, precisions, lengths, load and engine) and compares each published figure:
output tokens/s, mean TTFT, mean TPOT (inter-token latency), mean end-to-end latency. Prints one
line per row and the median absolute error per figure, beside a naive roofline for the offline
rows (decode: the weights once per step at the datasheet bandwidth for the batch the KV cache
holds; prefill: the FLOPs at the datasheet peak). Fails when the median error of the offline
throughput, the TTFT or the TPOT is above 20% (issue 42's targets), or the offline throughput's is
not better than the naive roofline's.

usage: check_serving_rows.py GPUBENCH [SOURCE_DIR]
"""
import json
import pathlib
import statistics
import subprocess
import sys

TARGET = 0.20
# Bytes per weight of each --weights (docs/serving.md), to count parameters for the naive roofline.
BYTES_PER_WEIGHT = {"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5 + 2 / 128,
                    "fp4": 0.5 + 1 / 16}


def run(gpubench, row):
    cmd = [gpubench, "size", "--serve", "--workload", row["preset"], "--hardware",
           "catalog:" + row["catalog"], "--gpus", str(row["gpus"]), "--tensor", str(row["tensor"]),
           "--pipeline", str(row["pipeline"]), "--weights", row["weights"], "--kv-cache",
           row["kv_cache"], "--input-tokens", str(row["input_tokens"]), "--output-tokens",
           str(row["output_tokens"]), "--stack", row["stack"], "--json"]
    load = row["load"]
    if load["kind"] != "max_throughput":
        cmd += ["--" + load["kind"], str(load["value"])]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"row {row['id']}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main():
    gpubench = sys.argv[1]
    source = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else
                          pathlib.Path(__file__).resolve().parents[2])
    rows = json.loads((source / "configs/calibration/serving.json").read_text())["rows"]
    errors = {}
    naive_errors = []
    for row in rows:
        out = run(gpubench, row)
        s = out["serving"]
        parts = []
        for key, published in row["published"].items():
            predicted = s.get(key)
            if predicted is None:
                parts.append(f"{key} {published:g} vs none")
                errors.setdefault(key, []).append(1.0)
                continue
            err = predicted / published - 1
            errors.setdefault(key, []).append(abs(err))
            parts.append(f"{key} {published:g} -> {predicted:.4g} ({err:+.0%})")
        if row["load"]["kind"] == "max_throughput" and "output_tokens_per_s" in row["published"]:
            # Naive: decode steps at the datasheet bandwidth streaming the weights once for the
            # batch the KV cache holds, prefill at the datasheet peak (2 FLOP per weight).
            weights = s["weights_GB_per_gpu"] * 1e9 * row["tensor"] * row["pipeline"]
            gpu = json.loads((source / "configs/hardware/gpus" /
                              (row["catalog"] + ".json")).read_text())
            figures = gpu["figures"]
            peak_key = "gpu.peak_tflops." + ("nvfp4" if row["weights"] == "fp4" else
                                             "fp8" if row["weights"] == "fp8" else
                                             "fp16" if row["weights"] == "fp16" else "bf16")
            peak = figures[peak_key]["value"] * 1e12 * row["tensor"] * row["pipeline"]
            bandwidth = figures["gpu.hbm_peak_GBps"]["value"] * 1e9 * row["tensor"] * \
                row["pipeline"]
            replicas = row["gpus"] / (row["tensor"] * row["pipeline"])
            batch = max(1.0, s["max_concurrency"] / replicas)
            params = weights / BYTES_PER_WEIGHT[row["weights"]]
            prefill = 2 * params * row["input_tokens"] / peak
            decode = row["output_tokens"] * weights / bandwidth / batch
            naive = replicas * row["output_tokens"] / (prefill + decode)
            naive_errors.append(abs(naive / row["published"]["output_tokens_per_s"] - 1))
        print(f"{row['id']:3} {row['preset']:14} {row['catalog']:15} {row['gpus']}x tp{row['tensor']} "
              f"{row['weights']:5} {row['input_tokens']}/{row['output_tokens']} "
              f"{row['load']['kind']} {row['load']['value'] or ''} {row['stack']}: " +
              "; ".join(parts))
    print()
    for key, values in errors.items():
        print(f"{key}: median |predicted/published - 1| {statistics.median(values):.1%} "
              f"over {len(values)} rows")
    for key in ("ttft_ms", "tpot_ms"):
        if statistics.median(errors[key]) > TARGET:
            raise SystemExit(f"{key} median error {statistics.median(errors[key]):.1%} is above "
                             f"{TARGET:.0%}")
    offline = statistics.median(errors["output_tokens_per_s"])
    naive = statistics.median(naive_errors)
    print(f"naive roofline, offline rows: median {naive:.1%} over {len(naive_errors)} rows")
    if offline > TARGET:
        raise SystemExit(f"output tokens/s median error {offline:.1%} is above {TARGET:.0%}")
    if offline >= naive:
        raise SystemExit(f"output tokens/s median error {offline:.1%} is no better than the "
                         f"naive roofline's {naive:.1%}")


if __name__ == "__main__":
    main()
