"""PyTorch's figures for docs/validation/gpu_check.py, measured the way gpubench measures (CUDA
events, warm-up excluded, median of repetitions) on one GPU. Prints one JSON object: matmul
TFLOP/s per dtype at 8192^3 on random data, sustained (each repetition at least 0.2 s of back-to-
back products, as gpubench's suites time: a power-capped GPU runs short bursts faster), copy_ GB/s of 1 GiB (bytes read + written, as
hbm.copy counts), pinned host<->GPU GB/s at 256 MiB (each byte once, as pcie.* counts).
Usage: python3 torch_reference.py [GPU]"""
import json
import statistics
import sys

import torch


def timed(fn, iterations, repetitions=10, warmup=3, min_time_s=None):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    if min_time_s:  # as many calls per repetition as fill min_time_s, from one timed call
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        iterations = max(iterations, round(min_time_s / (start.elapsed_time(stop) / 1e3)))
    times = []
    for _ in range(repetitions):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / iterations)
    return statistics.median(times)


def matmul_tflops(dtype, n=8192, tf32=False):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    # Drawn in float32, then rounded, as gpubench's gemm draws: rand in a 16-bit dtype leaves few
    # mantissa bits set, which draws less power and runs faster on a power-capped GPU
    # (gemm_input_bits.py).
    a = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype)
    b = (torch.rand(n, n, device="cuda") * 2 - 1).to(dtype)
    t = timed(lambda: torch.matmul(a, b), iterations=10, min_time_s=0.2)
    return 2 * n**3 / t / 1e12


def copy_gbps(nbytes=1 << 30):
    src = torch.rand(nbytes // 8, device="cuda", dtype=torch.float64)
    dst = torch.empty_like(src)
    t = timed(lambda: dst.copy_(src), iterations=10)
    return 2 * nbytes / t / 1e9


def pcie_gbps(direction, nbytes=256 << 20):
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    if direction == "h2d":
        fn = lambda: dev.copy_(host, non_blocking=True)
    else:
        fn = lambda: host.copy_(dev, non_blocking=True)
    t = timed(fn, iterations=8)
    return nbytes / t / 1e9


def main():
    gpu = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    torch.cuda.set_device(gpu)
    results = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu": torch.cuda.get_device_name(gpu),
        "matmul_8192_TFLOPs": {
            "fp16": matmul_tflops(torch.float16),
            "bf16": matmul_tflops(torch.bfloat16),
            "tf32": matmul_tflops(torch.float32, tf32=True),
            "fp32": matmul_tflops(torch.float32, tf32=False),
        },
        "copy_1GiB_GBps_read_plus_write": copy_gbps(),
        "pcie_256MiB_GBps": {"h2d": pcie_gbps("h2d"), "d2h": pcie_gbps("d2h")},
    }
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
