"""cpu.dataloader's Python side: a real torch.utils.data.DataLoader over a torchvision ImageFolder,
with a ResNet-50 training script's transforms, driven by gpubench over stdin/stdout.

gpubench writes the JPEG corpus, starts this script with the case's settings and times each
"run N" round trip itself; the script only pulls batches and checks them. Nothing is downloaded.

Protocol (one JSON object per line on stdout):
  start:           {"ready": true, "versions": {...}, "stages_ms": {...}, "fixed_sample": {...}}
  stdin "run N":   {"images": ..., "seconds": ..., "bad_batches": ..., "problem": "..."}
  stdin "quit":    the workers are shut down and the script exits 0
An error is {"error": "..."} and exit status 1.
"""
import argparse
import json
import math
import os
import statistics
import sys
import threading
import time
import warnings
import zlib

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def versions(torch, torchvision, PIL):
    from PIL import features

    turbo = bool(features.check_feature("libjpeg_turbo"))
    # Pillow-SIMD keeps Pillow's version and adds ".postN".
    simd = ".post" in PIL.__version__
    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "pillow": PIL.__version__,
        "pillow_simd": simd,
        "libjpeg": features.version("jpg"),
        "libjpeg_turbo": turbo,
        "decode_backend": ("Pillow-SIMD" if simd else "Pillow") + " with " +
                          ("libjpeg-turbo " if turbo else "libjpeg ") + str(features.version("jpg")),
    }


def stage_times(files, size, transforms, F, Image, torch):
    """Milliseconds per image of each step of the training transforms, one process, one thread:
    the split the sizing model's loader options need (docs/model.md, 'The input pipeline')."""
    crop = transforms.RandomResizedCrop(size)
    flip = transforms.RandomHorizontalFlip()
    to_tensor = transforms.ToTensor()
    normalize = transforms.Normalize(MEAN, STD)
    spent = {"decode": [], "crop_resize": [], "flip": [], "to_tensor": [], "normalize": []}

    def timed(name, fn, arg):
        start = time.perf_counter()
        out = fn(arg)
        spent[name].append(time.perf_counter() - start)
        return out

    order = files * 3
    for i, path in enumerate(order):
        start = time.perf_counter()
        with open(path, "rb") as f:
            image = Image.open(f).convert("RGB")
        decode = time.perf_counter() - start
        image = timed("crop_resize", crop, image)
        image = timed("flip", flip, image)
        tensor = timed("to_tensor", to_tensor, image)
        timed("normalize", normalize, tensor)
        spent["decode"].append(decode)
        if i < len(files):  # the first pass warms caches and is not kept
            for values in spent.values():
                values.clear()
    out = {name: statistics.fmean(values) * 1e3 for name, values in spent.items()}
    # The same work with torchvision.io's decoder and the tensor transforms, where present.
    try:
        from torchvision.io import decode_jpeg, read_file

        tensor_times = []
        for i, path in enumerate(order):
            start = time.perf_counter()
            image = decode_jpeg(read_file(path))
            top, left, h, w = transforms.RandomResizedCrop.get_params(image, crop.scale, crop.ratio)
            image = F.resized_crop(image, top, left, h, w, [size, size], antialias=True)
            if torch.rand(1) < 0.5:
                image = F.hflip(image)
            image = F.normalize(image.float().div_(255), MEAN, STD)
            if i >= len(files):
                tensor_times.append(time.perf_counter() - start)
        out["torchvision_io_total"] = statistics.fmean(tensor_times) * 1e3
    except Exception as e:  # an older torchvision: the option is not measured here
        out["torchvision_io_error"] = str(e)
    return out


def fixed_sample(files, box, size, F, Image, transforms, out_path):
    """Image 0 cropped at a fixed box and resized as RandomResizedCrop does: gpubench compares the
    pixels with its own decode and resize of the same bytes, and keeps the checksums."""
    with open(files[0], "rb") as f:
        image = Image.open(f).convert("RGB")
    top, left, h, w = box
    resized = F.resized_crop(image, top, left, h, w, [size, size],
                             transforms.InterpolationMode.BILINEAR)
    raw = resized.tobytes()
    with open(out_path, "wb") as f:
        f.write(raw)
    tensor = F.normalize(F.to_tensor(resized), MEAN, STD)
    return {"crc32": zlib.crc32(raw), "tensor_sum": float(tensor.double().sum()),
            "width": resized.size[0], "height": resized.size[1]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--check-box", required=True)  # top,left,height,width
    parser.add_argument("--check-out", required=True)
    args = parser.parse_args()

    import PIL
    import torch
    import torchvision
    from PIL import Image
    from torch.utils.data import DataLoader, RandomSampler
    from torchvision import datasets, transforms
    from torchvision.transforms import functional as F

    # The main process only collates and checks; each worker is one single-threaded process, as
    # a training job's loader workers are.
    torch.set_num_threads(1)
    dataset = datasets.ImageFolder(args.root, transform=transforms.Compose([
        transforms.RandomResizedCrop(args.size),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ]))
    files = sorted(path for path, _ in dataset.samples)
    box = [int(v) for v in args.check_box.split(",")]
    ready = {
        "ready": True,
        "versions": versions(torch, torchvision, PIL),
        "images_in_folder": len(files),
        "stages_ms": stage_times(files, args.size, transforms, F, Image, torch),
        "fixed_sample": fixed_sample(files, box, args.size, F, Image, transforms, args.check_out),
    }
    # Pinned batches, as a training job asks for; without CUDA there is nothing to pin into.
    pin = torch.cuda.is_available()
    ready["pin_memory"] = pin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loader = DataLoader(dataset, batch_size=args.batch,
                            sampler=RandomSampler(dataset, replacement=True, num_samples=1 << 40),
                            num_workers=args.workers, pin_memory=pin, persistent_workers=True,
                            prefetch_factor=2, drop_last=True)
        batches = iter(loader)
        # Every worker has made one batch and is at work on the next: the loader is in its
        # steady state before gpubench's warm-up starts.
        for _ in range(args.workers):
            next(batches)
    reply(ready)

    low = min((0 - m) / s for m, s in zip(MEAN, STD)) - 1e-4
    high = max((1 - m) / s for m, s in zip(MEAN, STD)) + 1e-4
    want = (args.batch, 3, args.size, args.size)

    # One thread pulls batches without pause, as a training loop does, and stamps each one: a
    # round is timed from the batch before it was asked for to its last batch, so the workers
    # never get ahead while gpubench is between rounds (a paused consumer lets them fill the
    # prefetch queue, and the next round would look faster than the loader is).
    done = []  # (time, images, problem) per batch
    failed = []  # what stopped the consumer
    cond = threading.Condition()
    stop = threading.Event()

    def consume():
        try:
            pull()
        except Exception as e:  # the DataLoader's own error (a worker killed, /dev/shm full)
            with cond:
                failed.append(f"{type(e).__name__}: {e}")
                cond.notify_all()

    def pull():
        while not stop.is_set():
            x, y = next(batches)
            wrong = ""
            if tuple(x.shape) != want or x.dtype != torch.float32:
                wrong = f"batch of {tuple(x.shape)} {x.dtype}, expected {want} float32"
            elif tuple(y.shape) != (args.batch,):
                wrong = f"labels of shape {tuple(y.shape)}"
            else:
                # The first and last image of each batch: the whole batch would cost the main
                # process more than the workers' output at high worker counts.
                ends = x[::max(1, x.shape[0] - 1)]
                lo, hi = float(ends.min()), float(ends.max())
                if not (math.isfinite(lo) and math.isfinite(hi)) or lo < low or hi > high:
                    wrong = f"values from {lo} to {hi}, outside the normalized [{low:.3f}, {high:.3f}]"
            with cond:
                done.append((time.perf_counter(), x.shape[0], wrong))
                cond.notify_all()

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    while True:
        words = sys.stdin.readline().split()
        if not words or words[0] == "quit":
            break
        count = int(words[1])
        with cond:
            first = len(done)
            start_time = done[-1][0] if done else time.perf_counter()
            cond.wait_for(lambda: len(done) >= first + count or failed)
            if failed:
                reply({"error": failed[0]})
                os._exit(1)
            taken = done[first:first + count]
            end_time = taken[-1][0]
            del done[:first + count]
        problems = [w for _, _, w in taken if w]
        reply({"images": sum(n for _, n, _ in taken), "seconds": end_time - start_time,
               "bad_batches": len(problems), "problem": problems[0] if problems else ""})
    stop.set()
    os._exit(0)  # the consumer may be inside next(); the workers end with the process group
    del batches, loader
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(1)
    except Exception as e:  # one line gpubench can show; the traceback goes to stderr
        import traceback

        traceback.print_exc()
        reply({"error": f"{type(e).__name__}: {e}"})
        sys.exit(1)
