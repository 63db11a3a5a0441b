#!/usr/bin/env python3
"""size --serve against a real decoder on the GPU, without an engine or a download.

Builds a Llama-shaped decoder in PyTorch with random bf16 weights (the preset's shapes: RMSNorm,
grouped-query attention through scaled_dot_product_attention, SwiGLU, untied embeddings), times
the prefill of one prompt and decode steps at several batches against a KV cache of the prompt's
length, and prints them beside `gpubench size --serve --stack pytorch` for the same shapes on the
same GPU's measured results (or a catalog entry). Eager PyTorch issues one kernel per operation,
as the `pytorch` engine row models.

  serving_vs_torch.py --gpubench build/gpubench --hardware results.json [--model llama3.1-8b]
  serving_vs_torch.py --shapes --gpubench build/gpubench [--model llama3.1-8b]
  serving_vs_torch.py --device cpu --model tiny --input-tokens 16 --gpubench build/gpubench

--shapes needs no GPU and no torch: it checks the shape arithmetic the GPU run relies on (the
parameters, the weight bytes a decode step streams, the KV bytes per token) against the model's
own figures, exit 1 when they differ by more than 0.5%. The test tier runs it.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# The shapes of each preset, as model/src/presets.cpp gives them (the model cards' config.json).
PRESETS = {
    "llama3.1-8b": dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256),
    "llama2-7b": dict(layers=32, hidden=4096, heads=32, kv_heads=32, ffn=11008, vocab=32000),
    # A smoke test of this script on a CPU (--device cpu): the same code, toy shapes.
    "tiny": dict(layers=2, hidden=256, heads=4, kv_heads=2, ffn=512, vocab=1000),
}
TOLERANCE = 0.005
BATCHES = (1, 8, 64, 256)
SMOKE_BATCHES = (1, 2)


def arithmetic(shape):
    """Parameters, bf16 weight bytes and KV bytes per token of the decoder the GPU run builds."""
    h, L, a, g, f, v = (shape[k] for k in ("hidden", "layers", "heads", "kv_heads", "ffn", "vocab"))
    d = h // a
    linear = L * (h * a * d + 2 * h * g * d + a * d * h + 3 * h * f)
    norms = L * 2 * h + h
    embeddings = 2 * v * h  # input embedding and the output projection, untied
    return {
        "params": linear + norms + embeddings,
        "weight_bytes": 2 * (linear + norms + embeddings),
        # A decode step streams every linear weight and the output projection (the embedding is
        # a lookup of a few rows).
        "decode_weight_bytes": 2 * (linear + v * h),
        "kv_bytes_per_token": 2 * L * g * d * 2,
        "linear_flops_per_token": 2 * (linear + v * h),
    }


def workload_file(name, shape, folder):
    """The shapes as a workload file, so that size --serve sizes exactly what this script runs."""
    path = os.path.join(folder, name + ".json")
    with open(path, "w") as f:
        json.dump({"schema": "gpubench.workload/1", "name": name,
                   "model": {"preset": "gpt", "layers": shape["layers"],
                             "hidden": shape["hidden"], "heads": shape["heads"],
                             "kv_heads": shape["kv_heads"], "ffn": shape["ffn"],
                             "vocab": shape["vocab"], "seq_len": 4096, "gated_ffn": True,
                             "tied_embeddings": False, "learned_positions": False,
                             "dropout": False}}, f)
    return path


def size_serve(gpubench, workload, hardware, input_tokens, output_tokens, batch=None):
    cmd = [gpubench, "size", "--serve", "--workload", workload, "--hardware", hardware,
           "--gpus", "1", "--stack", "pytorch", "--input-tokens", str(input_tokens),
           "--output-tokens", str(output_tokens), "--json"]
    if batch:
        cmd += ["--batch", str(batch)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def check_shapes(args):
    ours = arithmetic(PRESETS[args.model])
    # The preset by its name: the model's own table of shapes against this script's.
    serving = size_serve(args.gpubench, args.model, "catalog:h100-sxm5-80gb", 128, 128)["serving"]
    pairs = [
        ("weight bytes per GPU", ours["weight_bytes"], serving["weights_GB_per_gpu"] * 1e9),
        ("KV bytes per token", ours["kv_bytes_per_token"], serving["kv_bytes_per_token"]),
        ("weight bytes a decode step streams", ours["decode_weight_bytes"],
         serving["decode"]["weight_bytes"]),
    ]
    failed = 0
    for name, script, model in pairs:
        off = abs(model / script - 1)
        print(f"{name}: this script {script:.6g}, size --serve {model:.6g} ({off:.3%})")
        failed += off > TOLERANCE
    return 1 if failed else 0


def build_decoder(shape, torch, device):
    """The decoder's weights as plain tensors (no nn.Module: the loop below is the model)."""
    h, L, a, g, f, v = (shape[k] for k in ("hidden", "layers", "heads", "kv_heads", "ffn", "vocab"))
    d = h // a
    gen = torch.Generator(device=device).manual_seed(0)

    def w(*dims):
        return (torch.randn(*dims, device=device, generator=gen, dtype=torch.bfloat16) *
                dims[-1] ** -0.5)

    layers = [dict(q=w(a * d, h), k=w(g * d, h), v=w(g * d, h), o=w(h, a * d), gate=w(f, h),
                   up=w(f, h), down=w(h, f),
                   n1=torch.ones(h, device=device, dtype=torch.bfloat16),
                   n2=torch.ones(h, device=device, dtype=torch.bfloat16)) for _ in range(L)]
    return dict(layers=layers, embed=w(v, h), head=w(v, h),
                norm=torch.ones(h, device=device, dtype=torch.bfloat16), a=a, g=g, d=d)


def rms_norm(x, weight, torch):
    if hasattr(torch.nn.functional, "rms_norm"):  # torch >= 2.4: one fused kernel
        return torch.nn.functional.rms_norm(x, (x.shape[-1],), weight)
    scale = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
    return (x.float() * scale).to(x.dtype) * weight


def attention(q, keys, values, causal, torch):
    """Grouped-query attention: SDPA's own GQA where torch has it (>= 2.5), else the key/value
    heads repeated (older torch, a CPU smoke run)."""
    fn = torch.nn.functional
    sdpa = getattr(fn, "scaled_dot_product_attention", None)
    if sdpa is not None:
        try:
            return sdpa(q, keys, values, is_causal=causal, enable_gqa=True)
        except TypeError:
            pass
    groups = q.shape[1] // keys.shape[1]
    keys = keys.repeat_interleave(groups, dim=1)
    values = values.repeat_interleave(groups, dim=1)
    if sdpa is not None:
        return sdpa(q, keys, values, is_causal=causal)
    scores = (q.float() @ keys.float().transpose(-1, -2)) * q.shape[-1] ** -0.5
    if causal:
        s, k = scores.shape[-2], scores.shape[-1]
        mask = torch.ones(s, k, dtype=torch.bool, device=q.device).tril(k - s)
        scores = scores.masked_fill(~mask, float("-inf"))
    return (scores.softmax(-1) @ values.float()).to(q.dtype)


def forward(model, tokens, cache, start, torch):
    """tokens [b, s] at positions start.. ; cache: per layer (K, V) [b, g, max, d], filled."""
    fn = torch.nn.functional
    x = model["embed"][tokens]
    b, s, _ = x.shape
    a, g, d = model["a"], model["g"], model["d"]
    for i, layer in enumerate(model["layers"]):
        y = rms_norm(x, layer["n1"], torch)
        q = (y @ layer["q"].T).view(b, s, a, d).transpose(1, 2)
        k = (y @ layer["k"].T).view(b, s, g, d).transpose(1, 2)
        v = (y @ layer["v"].T).view(b, s, g, d).transpose(1, 2)
        cache[i][0][:, :, start:start + s] = k
        cache[i][1][:, :, start:start + s] = v
        keys = cache[i][0][:, :, :start + s]
        values = cache[i][1][:, :, :start + s]
        out = attention(q, keys, values, s > 1, torch)
        x = x + out.transpose(1, 2).reshape(b, s, a * d) @ layer["o"].T
        y = rms_norm(x, layer["n2"], torch)
        x = x + (fn.silu(y @ layer["gate"].T) * (y @ layer["up"].T)) @ layer["down"].T
    x = rms_norm(x[:, -1:], model["norm"], torch)
    return (x @ model["head"].T).argmax(-1)


def timed(fn, sync, repeats):
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    sync()
    return (time.perf_counter() - start) / repeats


def run_device(args):
    import torch  # only here: --shapes runs where torch is not installed

    device = args.device
    on_gpu = device == "cuda"
    if on_gpu and not torch.cuda.is_available():
        raise SystemExit("no CUDA device for torch (--device cpu runs the smoke test)")
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    shape = PRESETS[args.model]
    model = build_decoder(shape, torch, device)
    prompt = args.input_tokens
    folder = tempfile.mkdtemp(prefix="serving-check-")
    workload = workload_file(args.model, shape, folder)
    d = shape["hidden"] // shape["heads"]
    rows = []
    with torch.inference_mode():
        for batch in BATCHES if on_gpu else SMOKE_BATCHES:
            def zeros():
                return torch.zeros(batch, shape["kv_heads"], prompt + 2, d, device=device,
                                   dtype=torch.bfloat16)
            cache = [(zeros(), zeros()) for _ in range(shape["layers"])]
            tokens = torch.randint(0, shape["vocab"], (batch, prompt), device=device)
            try:
                prefill = timed(lambda: forward(model, tokens, cache, 0, torch), sync, 3)
                step = tokens[:, -1:]
                decode = timed(lambda: forward(model, step, cache, prompt, torch), sync, 20)
            except RuntimeError as e:  # torch.cuda.OutOfMemoryError is one
                if "out of memory" not in str(e):
                    raise
                rows.append((batch, None, None, None))
                if on_gpu:
                    torch.cuda.empty_cache()
                continue
            predicted = size_serve(args.gpubench, workload, args.hardware, prompt, 2,
                                   batch)["serving"]
            rows.append((batch, prefill * 1e3, decode * 1e3, predicted))
            del cache
            if on_gpu:
                torch.cuda.empty_cache()
    where = torch.cuda.get_device_name() if on_gpu else "the CPU (a smoke test: no timing to compare)"
    lines = [f"# size --serve --stack pytorch against eager PyTorch, {args.model} shapes, random "
             f"bf16 weights, {prompt}-token prompts, on {where} (torch {torch.__version__}); "
             f"hardware figures: {args.hardware}",
             "",
             "| batch | prefill ms (torch) | TTFT ms (model) | decode step ms (torch) | "
             "TPOT ms (model) | decode error |",
             "|---|---|---|---|---|---|"]
    for batch, prefill, decode, predicted in rows:
        if prefill is None:
            lines.append(f"| {batch} | out of memory | | | | |")
            continue
        error = predicted["tpot_ms"] / decode - 1
        lines.append(f"| {batch} | {prefill:.1f} | {predicted['ttft_ms']:.1f} | {decode:.2f} | "
                     f"{predicted['tpot_ms']:.2f} | {error:+.0%} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return 0 if all(row[1] is not None for row in rows[:1]) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpubench", required=True)
    parser.add_argument("--model", default="llama3.1-8b", choices=sorted(PRESETS))
    parser.add_argument("--hardware", default="catalog:h100-sxm5-80gb",
                        help="the GPU's results.json, or a catalog entry")
    parser.add_argument("--input-tokens", type=int, default=2048)
    parser.add_argument("--shapes", action="store_true",
                        help="check the shape arithmetic against the model, no GPU")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: run the same code on the CPU as a smoke test")
    parser.add_argument("--out", help="write the table here too")
    args = parser.parse_args()
    return check_shapes(args) if args.shapes else run_device(args)


if __name__ == "__main__":
    sys.exit(main())
