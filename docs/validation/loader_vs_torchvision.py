"""A real torchvision DataLoader against cpu.augment, on the same JPEG files, and the model's
python-loader CPU ceiling for this machine against the DataLoader it stands for.

The loader is what a ResNet-50 training script runs: an ImageFolder-style dataset opening each
JPEG with PIL, RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize, batches of 256
collated by a DataLoader with W worker processes (1, and one per core). Its images/s divided by
cpu.augment's one-core rate is `loader_efficiency`: what one Python loader core does of what
gpubench's C++ pipeline does per core. The model's ceiling comes from `gpubench size` on this
machine's own results (1 GPU: by the model's rule, one loader core on a 2-core machine), and is
compared with the DataLoader of that many workers. Target: within +-25%.

Needs python3-torch and python3-torchvision (Debian). Usage:
  /usr/bin/python3 docs/validation/loader_vs_torchvision.py build/gpubench build/tools/gpubench_jpeg_corpus
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import PIL
import torch
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

gpubench, corpus_tool = sys.argv[1], sys.argv[2]
BATCH = 256
SECONDS = 8.0


class JpegFiles(Dataset):
    """torchvision.datasets.ImageFolder's per-sample work: PIL open, convert, transform."""

    def __init__(self, files, length):
        self.files, self.length = files, length
        self.transform = transforms.Compose([
            transforms.RandomResizedCrop(224),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        with open(self.files[index % len(self.files)], "rb") as f:
            image = Image.open(f).convert("RGB")
        return self.transform(image), 0


def loader_rate(files, workers):
    """Images/s of a DataLoader with `workers` processes, after one batch per worker of warm-up."""
    loader = DataLoader(JpegFiles(files, 10**7), batch_size=BATCH, shuffle=True,
                        num_workers=workers, persistent_workers=True, prefetch_factor=2)
    batches = iter(loader)
    for _ in range(workers):
        next(batches)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        images, _ = next(batches)
        n += images.shape[0]
    rate = n / (time.perf_counter() - start)
    del batches, loader
    return rate


def run_gpubench(args):
    return subprocess.run([gpubench] + args, check=True, capture_output=True, text=True).stdout


def main():
    cores = os.cpu_count()
    torch.set_num_threads(1)  # the main process only collates; workers are single-threaded
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([corpus_tool, work, "64"], check=True, capture_output=True)
        files = sorted(glob.glob(os.path.join(work, "img_*.jpg")))
        sizes = [os.path.getsize(f) for f in files]
        print("# A torchvision DataLoader vs cpu.augment, and the model's python-loader ceiling")
        print(f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}; torch {torch.__version__};"
              f" torchvision {torchvision.__version__}; Pillow {PIL.__version__}; {cores} cores")
        print(f"corpus: {len(files)} JPEGs 500x375 q90, mean {sum(sizes) / len(sizes) / 1000:.1f} kB;"
              f" batch {BATCH}; {SECONDS:.0f} s per measurement")

        # cpu.augment on one core and on every core, and the results the model sizes from.
        out = os.path.join(work, "run")
        run_gpubench(["run", "--suite", "quick", "--only", "cpu.augment,host.membw", "--axis",
                      f"cpu.augment:threads=1,{cores}", "--out", out])
        results = json.load(open(os.path.join(out, "results.json")))["results"]
        augment = {r["axes"]["threads"]: r["metrics"]["samples_per_s"]["median"]
                   for r in results if r["id"] == "cpu.augment" and r["status"] == "ok"}
        print(f"cpu.augment: {augment[1]:.1f} samples/s on 1 core, {augment[cores]:.1f} on {cores}")

        rates = {}
        for workers in sorted({1, cores}):
            per_round = [loader_rate(files, workers) for _ in range(3)]
            rates[workers] = sorted(per_round)[1]
            print(f"DataLoader, {workers} worker(s): " + ", ".join(f"{r:.1f}" for r in per_round) +
                  f" images/s; median {rates[workers]:.1f}")
        efficiency = rates[1] / augment[1]
        print(f"loader_efficiency = DataLoader with 1 worker / cpu.augment on 1 core = "
              f"{rates[1]:.1f} / {augment[1]:.1f} = {efficiency:.3f}")
        if cores > 1:
            print(f"scaling: {cores} workers give {rates[cores] / rates[1]:.2f}x one worker "
                  f"(cpu.augment: {augment[cores] / augment[1]:.2f}x)")

        # The model's CPU ceiling for a python-loader ResNet-50 on 1 GPU of this machine (the GPU
        # is a catalog one where this machine has none: it does not enter the CPU ceiling).
        sizing = json.loads(run_gpubench(["size", "--workload", "resnet50", "--hardware",
                                          os.path.join(out, "results.json"), "--set",
                                          "gpu.model=h100-sxm5-80gb", "--gpus", "1", "--json"]))
        cpu = sizing["components"]["cpu"]
        detail = cpu.get("detail", "")
        loader_cores = int(float(detail.split(" loader cores")[0])) if " loader cores" in detail else 1
        reference = rates.get(loader_cores) or rates[1] * loader_cores
        error = cpu["samples_per_s"] / reference - 1
        verdict = "PASS" if abs(error) <= 0.25 else "FAIL"
        print(f"model: cpu ceiling {cpu['samples_per_s']:.1f} images/s ({detail})")
        print(f"against the DataLoader with {loader_cores} worker(s), {reference:.1f} images/s: "
              f"{error * 100:+.1f}% -> {verdict} (target: within +-25%)")
        return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
