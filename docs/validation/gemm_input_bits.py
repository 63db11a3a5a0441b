#!/usr/bin/env python3
"""Does a half-precision matmul's sustained rate depend on how many mantissa bits its inputs use?
On a power-capped GPU it can: fewer toggling bits draw less power, so the clock stays higher.
torch.rand(dtype=float16/bfloat16) draws multiples of 2^-11 / 2^-8, so `rand * 2 - 1` leaves
numbers near zero with few significant bits; drawing in float32 and rounding to the dtype (what
gpubench's gemm does) fills every mantissa bit. Times torch.matmul at 8192^3 with each, sustained
(0.2 s per repetition, as torch_reference.py), twice in turn. Prints a table; writes it to
$OUT/gemm_input_bits.txt when OUT is set."""
import os

import torch

from torch_reference import timed

N = 8192


def tflops(dtype, draw_in_fp32):
    if draw_in_fp32:
        a = (torch.rand(N, N, device="cuda") * 2 - 1).to(dtype)
        b = (torch.rand(N, N, device="cuda") * 2 - 1).to(dtype)
    else:
        a = torch.rand(N, N, device="cuda", dtype=dtype) * 2 - 1
        b = torch.rand(N, N, device="cuda", dtype=dtype) * 2 - 1
    return 2 * N**3 / timed(lambda: torch.matmul(a, b), iterations=10, min_time_s=0.2) / 1e12


def main():
    lines = [f"# torch.matmul {N}^3 sustained TFLOP/s by input draw on {torch.cuda.get_device_name()}",
             "dtype     round  rand(dtype)*2-1  (rand(fp32)*2-1).to(dtype)  ratio"]
    for dtype in (torch.float16, torch.bfloat16):
        for round_ in (1, 2):
            coarse = tflops(dtype, False)
            full = tflops(dtype, True)
            lines.append(f"{str(dtype)[6:]:8}  {round_:5}  {coarse:15.1f}  {full:26.1f}  "
                         f"{full / coarse:.3f}")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "gemm_input_bits.txt"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
