#!/usr/bin/env python3
"""Does a GEMM figure depend on how long the GPU runs without a pause? On a power-capped GPU it
should: a short burst runs at boost clock, a sustained run settles at the power limit. This times
gpubench's gemm and torch.matmul at 8192^3 both ways, interleaved, in one process tree:
'burst' is about 10 multiplies per timed repetition (what torch_reference.py does), 'sustained'
about 0.2 s per repetition back to back (what gpubench's suites do). If gpubench matches torch
within each mode, a gap between the two tools' default figures is the duty cycle, not cuBLASLt's
use. Prints a table; writes it to $OUT/gemm_duty_cycle.txt when OUT is set.
Usage: gemm_duty_cycle.py [GPU]"""
import json
import os
import subprocess
import sys
import tempfile

import torch

from gpu_check import find_binaries, gpubench_env
from torch_reference import timed

DTYPES = {"fp16": (torch.float16, False), "bf16": (torch.bfloat16, False),
          "tf32": (torch.float32, True), "fp32": (torch.float32, False)}
N = 8192


def torch_tflops(name, sustained):
    dtype, tf32 = DTYPES[name]
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = (torch.rand(N, N, device="cuda") * 2 - 1).to(dtype)  # as gemm draws (gemm_input_bits.py)
    b = (torch.rand(N, N, device="cuda") * 2 - 1).to(dtype)
    seconds = timed(lambda: torch.matmul(a, b), iterations=10,
                    min_time_s=0.2 if sustained else None)
    return 2 * N**3 / seconds / 1e12


def gpubench_tflops(gpubench, env, name, sustained, gpu, layout):
    settings = {"repetitions": 10, "warmup_iterations": 2}
    if sustained:
        settings["min_time_s"] = 0.2
    else:
        settings["iterations"] = 5 if name in ("fp16", "bf16") else 10  # about 10 multiplies
    suite = {"schema": "gpubench.suite/1", "name": "gemm-duty-cycle", "description": "",
             "defaults": settings,
             "benchmarks": [{"id": "gemm", "axes": {"dtype": [name], "shape": [f"{N}x{N}x{N}"],
                                                    "gpu": [gpu], "layout": [layout]}}]}
    work = tempfile.mkdtemp()
    with open(os.path.join(work, "suite.json"), "w") as f:
        json.dump(suite, f)
    p = subprocess.run([gpubench, "run", "--suite", os.path.join(work, "suite.json"), "--out",
                        os.path.join(work, "run")], env=env,
                       capture_output=True, text=True, check=False)
    path = os.path.join(work, "run", "results.json")
    if not os.path.exists(path):
        return None, (p.stderr or p.stdout).strip()[-200:]
    r = [x for x in json.load(open(path))["results"] if x["id"] == "gemm"][0]
    if r["status"] != "ok":
        return None, r.get("error") or r.get("reason")
    info = r["info"]
    mult = info["multiplies_per_iteration"] * info["iterations_per_repetition"][0]
    return r["metrics"]["TFLOPs"]["median"], (f"{mult} multiplies per repetition, heuristic's "
                                              f"#{info['algorithm_heuristic_rank']} of "
                                              f"{info['algorithms_tried']}")


def main():
    gpu = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    torch.cuda.set_device(gpu)
    binaries = find_binaries()
    if binaries is None:
        sys.exit("no gpubench: make gpu-bundle or make build")
    gpubench, env = binaries["gpubench"], gpubench_env(binaries)
    lines = [f"# gemm {N}^3 TFLOP/s by duty cycle on {torch.cuda.get_device_name(gpu)}",
             "dtype  mode       torch(NN)  layout  gpubench  ratio  gpubench note"]
    for name in DTYPES:
        for sustained in (False, True):
            mode = "sustained" if sustained else "burst"
            theirs = torch_tflops(name, sustained)
            for layout in ("TN", "NN"):
                ours, note = gpubench_tflops(gpubench, env, name, sustained, gpu, layout)
                ratio = f"{ours / theirs:.3f}" if ours else ""
                lines.append(f"{name:5}  {mode:9}  {theirs:9.1f}  {layout:6}  {ours or 0:8.1f}  "
                             f"{ratio:5}  {note}")
                print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "gemm_duty_cycle.txt"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
