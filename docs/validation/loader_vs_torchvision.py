"""A real torchvision DataLoader against cpu.augment and cpu.dataloader, on the same JPEG files,
and the model's python-loader CPU ceiling for this machine against the DataLoader it stands for.

The loader is what a ResNet-50 training script runs: an ImageFolder-style dataset opening each
JPEG with PIL, RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize, batches of 256
collated by a DataLoader with W worker processes (1, 2 and one per core). Its images/s with one
worker divided by cpu.augment's one-core rate is this machine's `loader_efficiency`. The model's
ceilings come from `gpubench size` on this machine's own results for 1 GPU with 1 and 2 loader
cores: from cpu.dataloader (basis measured; target: the median over rounds of each round's
ceiling over this script's own DataLoader measured right after it within +-25%), and, for
comparison, from the same results without cpu.dataloader (cpu.augment x loader_efficiency,
basis derived).

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
from statistics import median

import PIL
import torch
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

gpubench, corpus_tool = sys.argv[1], sys.argv[2]
BATCH = 256
SECONDS = float(os.environ.get("LOADER_CHECK_SECONDS", "8"))
ROUNDS = int(os.environ.get("LOADER_CHECK_ROUNDS", "3"))  # at most; odd, for one median
TOLERANCE = 0.25


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


def settled(errors):
    """Whether the verdict on the median of ROUNDS errors is fixed by the errors so far: a
    majority inside the band puts the median inside it, a majority on one side outside it."""
    majority = ROUNDS // 2 + 1
    return (sum(abs(e) <= TOLERANCE for e in errors) >= majority
            or sum(e > TOLERANCE for e in errors) >= majority
            or sum(e < -TOLERANCE for e in errors) >= majority)


def run_gpubench(args):
    return subprocess.run([gpubench] + args, check=True, capture_output=True, text=True).stdout


def ceiling(results, cores, label):
    """The model's CPU ceiling for a python-loader ResNet-50 on 1 GPU of this machine with
    `cores` loader cores (the GPU is a catalog one where this machine has none: it does not
    enter the CPU ceiling). One core per GPU is reserved for the training process."""
    sizing = json.loads(run_gpubench(["size", "--workload", "resnet50", "--hardware", results,
                                      "--set", "gpu.model=h100-sxm5-80gb",
                                      "--set", f"cpu.cores={cores + 1}", "--gpus", "1", "--json"]))
    cpu = sizing["components"]["cpu"]
    return cpu["samples_per_s"], cpu["basis"], cpu.get("detail", "")  # basis: "set" (cpu.cores)


def main():
    cores = os.cpu_count()
    torch.set_num_threads(1)  # the main process only collates; workers are single-threaded
    worker_counts = sorted({1, 2, cores}) if cores > 1 else [1]
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([corpus_tool, work, "64"], check=True, capture_output=True)
        files = sorted(glob.glob(os.path.join(work, "img_*.jpg")))
        sizes = [os.path.getsize(f) for f in files]
        print("# A torchvision DataLoader vs cpu.augment and cpu.dataloader, and the model's "
              "python-loader ceiling")
        print(f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}; torch {torch.__version__};"
              f" torchvision {torchvision.__version__}; Pillow {PIL.__version__}; {cores} cores")
        print(f"corpus: {len(files)} JPEGs 500x375 q90, mean {sum(sizes) / len(sizes) / 1000:.1f} kB;"
              f" batch {BATCH}; up to {ROUNDS} rounds, {SECONDS:.0f} s per DataLoader measurement")

        # gpubench's own figures: cpu.augment once, then rounds of cpu.dataloader (PyTorch's
        # DataLoader over an ImageFolder, run by gpubench) at every worker count, each followed
        # at once by this script's own DataLoader at the same counts. Each round's ceiling is
        # checked against the DataLoader measured right after it, and the verdict is on the
        # median of the rounds' ratios: a shared VM whose speed drifts by 20-30% over minutes
        # moves both sides of a pair alike, where two measurements a minute apart did not.
        suite = os.path.join(work, "suite.json")
        json.dump({"schema": "gpubench.suite/1", "name": "loader-check",
                   "defaults": {"repetitions": 3, "warmup_iterations": 1, "min_time_s": 0.5},
                   "benchmarks": [{"id": "cpu.augment"}, {"id": "cpu.dataloader"}]},
                  open(suite, "w"))

        def gpubench_results(only, axis, name):
            out = os.path.join(work, name)
            run_gpubench(["run", "--suite", suite, "--only", only, "--python", sys.executable,
                          "--axis", axis, "--out", out])
            return json.load(open(os.path.join(out, "results.json")))

        doc = gpubench_results("cpu.augment", f"cpu.augment:threads=1,{cores}", "augment")
        augment = {r["axes"]["threads"]: r["metrics"]["samples_per_s"]["median"]
                   for r in doc["results"] if r["id"] == "cpu.augment" and r["status"] == "ok"}
        print(f"cpu.augment: {augment[1]:.1f} samples/s on 1 core, {augment[cores]:.1f} on {cores}")
        checked = [w for w in worker_counts if w <= 2]
        measured = {w: [] for w in worker_counts}
        rates = {w: [] for w in worker_counts}
        ceilings = {w: [] for w in checked}

        def round_errors(workers):
            """Each round's ceiling over the DataLoader measured right after it, minus one."""
            return [c[0] / r - 1 for c, r in zip(ceilings[workers], rates[workers])]

        workers_axis = "cpu.dataloader:workers=" + ",".join(str(w) for w in worker_counts)
        for round_index in range(ROUNDS):
            part = gpubench_results("cpu.dataloader", workers_axis, f"dataloader-{round_index}")
            ok = [r for r in part["results"] if r["id"] == "cpu.dataloader" and r["status"] == "ok"]
            for r in ok:
                measured[r["axes"]["workers"]].append(r["metrics"]["images_per_s"]["median"])
            # An independent DataLoader (this script's own Dataset, not the ImageFolder gpubench
            # runs): what the ceilings are checked against.
            for workers in worker_counts:
                rates[workers].append(loader_rate(files, workers))
            # The model's ceiling from this round's cpu.dataloader (with cpu.augment beside it).
            round_file = os.path.join(work, f"round-{round_index}.json")
            json.dump(dict(doc, results=doc["results"] + ok), open(round_file, "w"))
            for workers in checked:
                ceilings[workers].append(ceiling(round_file, workers, "measured"))
            print(f"round {round_index + 1}: " + "; ".join(
                f"{w} worker(s): cpu.dataloader {measured[w][-1]:.1f}, DataLoader here "
                f"{rates[w][-1]:.1f} images/s" for w in worker_counts))
            if all(settled(round_errors(w)) for w in checked):
                break  # the rounds left cannot change the median's verdict
        # The same results without cpu.dataloader: the ceiling the model derives from
        # cpu.augment x loader_efficiency where no DataLoader was measured.
        derived_doc = dict(doc, results=[r for r in doc["results"] if r["id"] != "cpu.dataloader"])
        derived = os.path.join(work, "derived.json")
        json.dump(derived_doc, open(derived, "w"))
        rate_median = {w: median(rates[w]) for w in worker_counts}
        for w in worker_counts:
            print(f"{w} worker(s): cpu.dataloader median {median(measured[w]):.1f} images/s, "
                  f"DataLoader here median {rate_median[w]:.1f}")

        print(f"DataLoader with 1 worker / cpu.augment on 1 core = {rate_median[1]:.1f} / "
              f"{augment[1]:.1f} = {rate_median[1] / augment[1]:.3f} (the loader_efficiency of "
              "this machine)")

        failed = False
        for workers in checked:
            errors = round_errors(workers)  # the target
            error = median(errors)
            verdict = "PASS" if abs(error) <= TOLERANCE else "FAIL"
            failed = failed or verdict == "FAIL"
            print(f"model from measured figures, {workers} loader core(s): rounds " +
                  ", ".join(f"{c[0]:.1f} vs {r:.1f} ({e * 100:+.1f}%)"
                            for c, r, e in zip(ceilings[workers], rates[workers], errors)) +
                  f"; median {error * 100:+.1f}% -> {verdict} ({ceilings[workers][-1][2]})")
            # The ceiling derived from cpu.augment x loader_efficiency, for comparison only: its
            # ratio comes from other machines.
            value, _, detail = ceiling(derived, workers, "derived")
            error = value / rate_median[workers] - 1
            verdict = "PASS" if abs(error) <= TOLERANCE else "FAIL"
            print(f"model from derived figures, {workers} loader core(s): {value:.1f} images/s vs "
                  f"{rate_median[workers]:.1f}: {error * 100:+.1f}% -> (not a target) {verdict} "
                  f"({detail})")
        print("target: the ceiling from cpu.dataloader within +-25% of the DataLoader at 1 and 2 "
              "workers (median over rounds of back-to-back pairs) -> " +
              ("FAIL" if failed else "PASS"))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
