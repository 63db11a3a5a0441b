#!/usr/bin/env python3
"""The one-command GPU check (`make gpu-check`): on a machine with a GPU, run every GPU benchmark
with its data checked, the GPU test tier, and PyTorch's own figures on the same GPU, then print one
table and write docs/validation/gpu_check-<gpu>.txt, whose last line is
`gpu check: N/M within target`. Exits 1 on any miss or any failed start (no binary, no GPU, no
torch): a check that did not run is a failed check.

It needs a driver, python3 and torch. gpubench comes from, in this order: $GPUBENCH_BUNDLE or
.carry/gpubench-bundle (`make gpu-bundle` packs one on a machine with the Debian packages, for a
GPU machine without them), or build/ (`make build`). cuBLASLt and NCCL are loaded at run time:
where the system has none, the copies in torch's nvidia-* wheels are used.

Targets (issue 17): GEMM (fp16, bf16, tf32, fp32 at 8192^3), HBM copy and pinned PCIe copies
>= 0.97x PyTorch on the same GPU in the same run, like for like: gemm in the NN layout (what
torch.matmul(a, b) runs) timed sustained as torch_reference.py times it. PyTorch is measured before
and after gpubench and the mean of the two is the reference: a GPU whose speed drifts during the
run is held at its speed halfway, and the better of two noisy draws would sit above a typical one.
"""
import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TARGET = 0.97
# Skips that say what the machine or its cuBLASLt lacks, not what the code got wrong.
MACHINE_SKIPS = ("needs 2 or more GPUs", "no peer access", "needs compute capability",
                 "cuBLASLt multiplies FP8 in TN only",
                 "NCCL has no in-place alltoall", "message smaller than one float per rank")


class Report:
    def __init__(self):
        self.rows = []  # (figure, gpubench, reference, ratio, target, verdict, note)
        self.notes = []

    def check(self, figure, passed, note=""):
        self.rows.append((figure, "", "", "", "", "PASS" if passed else "FAIL", note))
        return passed

    def compare(self, figure, ours, theirs, target=TARGET):
        ratio = ours / theirs if ours and theirs else None
        verdict = "FAIL" if ratio is None or ratio < target else "PASS"
        self.rows.append((figure, fmt(ours), fmt(theirs), fmt(ratio, 3), f">= {target:.2f}",
                          verdict, "" if ratio is not None else "a figure is missing"))

    def info(self, figure, ours, note=""):
        self.rows.append((figure, fmt(ours), "", "", "", "", note))

    def tally(self):
        counted = [r for r in self.rows if r[5]]
        return sum(r[5] == "PASS" for r in counted), len(counted)

    def text(self, header):
        widths = [max(len(str(r[i])) for r in self.rows + [COLUMNS]) for i in range(6)]
        lines = list(header)
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(COLUMNS, widths)).rstrip())
        for r in self.rows:
            cells = "  ".join(str(c).ljust(w) for c, w in zip(r[:6], widths))
            lines.append((cells + ("  " + r[6] if r[6] else "")).rstrip())
        lines.extend(self.notes)
        passed, counted = self.tally()
        lines.append(f"gpu check: {passed}/{counted} within target")
        return "\n".join(lines) + "\n"


COLUMNS = ("figure", "gpubench", "reference", "ratio", "target", "verdict")


def fmt(value, digits=4):
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    return f"{value:.{digits}g}"


def run(argv, env=None, timeout=None):
    """Runs a command; returns (exit code, stdout, stderr); exit code None when it could not."""
    try:
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                           check=False)
        return p.returncode, p.stdout, p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "", str(e)


def find_binaries():
    bundle = os.environ.get("GPUBENCH_BUNDLE") or os.path.join(REPO, ".carry", "gpubench-bundle")
    if os.path.isfile(os.path.join(bundle, "bin", "gpubench")):
        return {"from": "bundle " + bundle, "gpubench": os.path.join(bundle, "bin", "gpubench"),
                "tests": os.path.join(bundle, "bin", "gpubench_gpu_tests"),
                "libs": [os.path.join(bundle, "lib")]}
    build = os.path.join(REPO, "build")
    if os.path.isfile(os.path.join(build, "gpubench")):
        return {"from": "build " + build, "gpubench": os.path.join(build, "gpubench"),
                "tests": os.path.join(build, "tests", "gpubench_gpu_tests"), "libs": []}
    return None


def wheel_library_dirs():
    """Folders of the CUDA libraries torch's nvidia-* wheels install (cuBLASLt, NCCL)."""
    code = ("import importlib.util, os\n"
            "s = importlib.util.find_spec('nvidia')\n"
            "print('\\n'.join(s.submodule_search_locations) if s else '')")
    rc, out, _ = run([sys.executable, "-c", code])
    dirs = []
    for root in (out.split() if rc == 0 else []):
        for lib in glob.glob(os.path.join(root, "**", "lib*.so*"), recursive=True):
            name = os.path.basename(lib)
            if name.startswith(("libcublasLt.so", "libnccl.so")):
                dirs.append(os.path.dirname(lib))
    return sorted(set(dirs))


def gpubench_env(binaries):
    """The environment gpubench runs in: the bundle's libraries, then the system's, then torch's
    cuBLASLt and NCCL (last: a system copy comes first), and the repository's configs."""
    env = dict(os.environ)
    libs = binaries["libs"] + [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
    libs += wheel_library_dirs()
    env["LD_LIBRARY_PATH"] = ":".join(libs)
    env["GPUBENCH_CONFIG_DIR"] = os.path.join(REPO, "configs")
    env["GPUBENCH_TEST_EXE"] = binaries["gpubench"]
    return env


def median(results, id_, metric=None, **axes):
    for r in results:
        if r["id"] != id_ or r["status"] != "ok":
            continue
        if all(r["axes"].get(k) == v for k, v in axes.items()):
            metrics = r["metrics"]
            return metrics[metric or next(iter(metrics))]["median"]
    return None


def torch_figures(gpu, env):
    rc, out, err = run([sys.executable, os.path.join(HERE, "torch_reference.py"), str(gpu)],
                       env=env, timeout=600)
    if rc != 0:
        return None, (err or out).strip().splitlines()[-1:] or ["no output"]
    return json.loads(out), []


def mean_of(first, second):
    """Per figure, the mean of two torch runs (nested dicts of numbers)."""
    if isinstance(first, dict):
        return {k: mean_of(first[k], second[k]) for k in first}
    if isinstance(first, (int, float)) and isinstance(second, (int, float)):
        return (first + second) / 2
    return first


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", default=HERE, help="where gpu_check-<gpu>.txt goes")
    parser.add_argument("--gpu", type=int, default=0, help="the GPU compared with PyTorch")
    args = parser.parse_args()

    report = Report()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    header = [f"# gpubench GPU check, {started}"]
    gpu_name = "no-gpu"
    work = tempfile.mkdtemp(prefix="gpu-check-")

    binaries = find_binaries()
    env = gpubench_env(binaries) if binaries else dict(os.environ)
    ok = report.check("start: a gpubench to run", binaries is not None,
                      binaries["from"] if binaries else
                      "no bundle (make gpu-bundle) and no build/ (make build)")
    info = None
    if ok:
        rc, out, err = run([binaries["gpubench"], "info", "--json"], env=env, timeout=120)
        info = json.loads(out) if rc == 0 else None
        status = (info or {}).get("gpu_status", {})
        gpus = (info or {}).get("gpus", [])
        ok = report.check("start: a GPU CUDA can use", bool(gpus) and status.get("cuda") == "ok",
                          status.get("cuda", err.strip()) if not gpus or status.get("cuda") != "ok"
                          else f"{len(gpus)} GPU(s)")
        if gpus:
            gpu_name = gpus[min(args.gpu, len(gpus) - 1)].get("name", "gpu")
            header.append(f"gpu: {gpu_name} x{len(gpus)}; driver {status.get('driver_version')}; "
                          f"CUDA driver {status.get('cuda_driver_version')}, runtime "
                          f"{status.get('cuda_runtime_version')}")
            header.append(f"cuBLASLt: {status.get('cublaslt')}; NCCL: {status.get('nccl')}")
        _, version, _ = run([binaries["gpubench"], "--version"], env=env)
        header.append(f"gpubench {version.strip()} from {binaries['from']}")

    if ok:
        rc, out, err = run([binaries["tests"], "--warn", "NoTests"], env=env, timeout=1200)
        tail = (out + err).strip().splitlines()
        report.check("gpu test tier (tests/gpu, label gpu)", rc == 0, tail[-1] if tail else "")
        if rc != 0:
            report.notes.append("## gpu test tier output (end)")
            report.notes.extend("  " + line for line in tail[-60:])

        before, problem = torch_figures(args.gpu, env)
        rc, out, err = run([binaries["gpubench"], "run", "--suite",
                            os.path.join(HERE, "gpu_check_suite.json"), "--out",
                            os.path.join(work, "run")], env=env, timeout=3000)
        report.check("gpubench run exits 0", rc == 0, f"exit {rc}" + (
            ": " + err.strip().splitlines()[-1] if rc != 0 and err.strip() else ""))
        after, problem_after = torch_figures(args.gpu, env)
        torch_ok = report.check("start: PyTorch reference", before is not None and after is not None,
                                "; ".join(problem + problem_after))
        results_path = os.path.join(work, "run", "results.json")
        results = json.load(open(results_path))["results"] if os.path.exists(results_path) else []
        analyse(report, results, mean_of(before, after) if torch_ok else None, args.gpu)
        if torch_ok:
            header.append(f"torch {before['torch']} (CUDA {before['cuda']}) on {before['gpu']}")
        if torch_ok and os.path.exists(results_path):
            serving(report, binaries, env, results_path, args.out_dir, gpu_name)

    text = report.text(header)
    print(text, end="")
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, f"gpu_check-{slug(gpu_name)}.txt")
    with open(path, "w") as f:
        f.write(text)
    if os.environ.get("OUT"):  # the device tool brings back what is under $OUT
        with open(os.path.join(os.environ["OUT"], os.path.basename(path)), "w") as f:
            f.write(text)
    passed, counted = report.tally()
    return 0 if passed == counted else 1


def serving(report, binaries, env, results_path, out_dir, gpu_name):
    """size --serve on this run's figures beside an eager PyTorch decoder of Llama 3.1 8B's shapes
    (docs/validation/serving_vs_torch.py): its table goes into the notes and a file of its own."""
    path = os.path.join(out_dir, f"serving_vs_torch-{slug(gpu_name)}.md")
    rc, out, err = run([sys.executable, os.path.join(HERE, "serving_vs_torch.py"), "--gpubench",
                        binaries["gpubench"], "--hardware", results_path, "--out", path],
                       env=env, timeout=900)
    report.check("serving: eager PyTorch decoder beside size --serve", rc == 0,
                 "" if rc == 0 else (err.strip().splitlines() or [f"exit {rc}"])[-1])
    report.notes.append("## serving (docs/validation/serving_vs_torch.py)")
    report.notes.extend("  " + line for line in out.strip().splitlines())
    if os.environ.get("OUT") and os.path.exists(path):
        with open(path) as f, open(os.path.join(os.environ["OUT"], os.path.basename(path)),
                                   "w") as copy:
            copy.write(f.read())


def analyse(report, results, torch, gpu):
    gpu_ids = ("gemm", "hbm.", "pcie.", "p2p.", "gpu.", "nccl.")
    mine = [r for r in results if r["id"].startswith(gpu_ids)]
    failed = [r for r in mine if r["status"] == "failed"]
    unexpected = [r for r in mine if r["status"] == "skipped"
                  and not any(s in r.get("reason", "") for s in MACHINE_SKIPS)]
    checked = [r for r in mine if r["status"] == "ok" and r.get("verified")]
    unchecked = [r for r in mine if r["status"] == "ok" and not r.get("verified")]
    skipped = len(mine) - len(checked) - len(unchecked) - len(failed)
    report.check("GPU cases ran, data checked", bool(checked) and not failed and not unexpected
                 and not unchecked,
                 f"{len(checked)} ok and verified, {len(failed)} failed, {skipped} skipped "
                 f"({len(unexpected)} not for want of hardware)")
    for r in failed + unexpected + unchecked:
        report.notes.append(f"- {r['id']} {json.dumps(r['axes'])}: {r['status']}: "
                            f"{r.get('error') or r.get('reason') or 'not verified'}")

    # PyTorch's DataLoader (issue 45) where the machine's python3 has torchvision: there it pins
    # its batches, as a training job does.
    loader = [r for r in results if r["id"] == "cpu.dataloader"]
    if loader:
        ran = [r for r in loader if r["status"] == "ok"]
        detail = "; ".join(
            f"{r['axes']['workers']} worker(s) {r['metrics']['images_per_s']['median']:.0f} images/s"
            f" (pin_memory {r['info'].get('pin_memory')})" for r in ran) or loader[0].get(
                "reason") or loader[0].get("error", "")
        report.check("cpu.dataloader ran and its batches checked",
                     all(r["status"] != "failed" and (r["status"] != "ok" or r.get("verified"))
                         for r in loader), detail)

    def ours(id_, **axes):
        return median(results, id_, gpu=gpu, **axes)

    for dtype in ("fp16", "bf16", "tf32", "fp32"):
        report.compare(f"gemm {dtype} NN 8192^3 TFLOP/s",
                       ours("gemm", dtype=dtype, shape="8192x8192x8192", layout="NN"),
                       torch and torch["matmul_8192_TFLOPs"][dtype])
    report.compare("hbm.copy GB/s (read + write)", ours("hbm.copy"),
                   torch and torch["copy_1GiB_GBps_read_plus_write"])
    for direction in ("h2d", "d2h"):
        report.compare(f"pcie.{direction} pinned 256 MiB GB/s",
                       ours(f"pcie.{direction}", bytes=256 << 20, memory="pinned"),
                       torch and torch["pcie_256MiB_GBps"][direction])
    # Figures without a reference to hold them to, for the record.
    for dtype in ("fp16", "bf16", "tf32", "fp32", "fp8"):
        for layout in ("TN", "NT"):
            report.info(f"gemm {dtype} {layout} 8192^3 TFLOP/s",
                        ours("gemm", dtype=dtype, shape="8192x8192x8192", layout=layout))
    for op in ("scale", "add", "triad", "read", "write"):
        report.info(f"hbm.{op} GB/s", ours(f"hbm.{op}"))
    report.info("pcie.bidir pinned GB/s", ours("pcie.bidir", bytes=256 << 20, memory="pinned"))
    for direction in ("h2d", "d2h", "bidir"):
        report.info(f"pcie.{direction} pageable GB/s",
                    ours(f"pcie.{direction}", bytes=256 << 20, memory="pageable"))
    for mode in ("stream", "sync", "graph"):
        report.info(f"gpu.launch_latency {mode} us", ours("gpu.launch_latency", mode=mode))
    burn = next((r for r in results if r["id"] == "gpu.burn" and r["status"] != "skipped"), None)
    if burn and burn["status"] == "ok":
        report.info("gpu.burn TFLOP/s", burn["metrics"]["TFLOPs"]["median"],
                    f"drop {burn['metrics']['drop_pct']['median']:.1f}%; " + "; ".join(
                        f"GPU {g['gpu']}: {g['products_compared']} products compared, "
                        f"{g['mismatched_elements']} elements differ, throttle "
                        f"{','.join(g['throttle_reasons_seen']) or 'none'}"
                        for g in burn["info"]["gpus"]))
    for r in results:
        if r["id"] == "p2p.copy" and r["status"] == "ok":
            a = r["axes"]
            report.info(f"p2p.copy {a['pair']} {a['engine']} {a['direction']} GB/s",
                        r["metrics"]["GBps"]["median"])
        if r["id"].startswith("nccl.") and r["status"] == "ok" and r["axes"]["bytes"] == 1 << 30:
            report.info(f"{r['id']} 1 GiB {r['axes']['placement']} busbw GB/s",
                        r["metrics"]["busbw_GBps"]["median"])


if __name__ == "__main__":
    sys.exit(main())
