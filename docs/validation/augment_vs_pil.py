"""cpu.augment's one-core rate against the same pipeline in Python with PIL + numpy (what a
torchvision loader runs per sample: Image.open -> RandomResizedCrop(224) -> RandomHorizontalFlip
-> ToTensor -> Normalize), on the same JPEG files, side by side. Also compares pixels: PIL's
resize of a fixed crop of image 0 against gpubench's. Target: rates within +-20%.
Needs python3-pil and python3-numpy (Debian). Usage:
  /usr/bin/python3 docs/validation/augment_vs_pil.py build/gpubench build/tools/gpubench_jpeg_corpus"""
import glob
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
import PIL
from PIL import Image

gpubench, corpus_tool = sys.argv[1], sys.argv[2]
# Per channel, shaped to broadcast over CHW planes as torchvision's Normalize does.
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)[:, None, None]
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)[:, None, None]


def rrc_params(width, height, rng):
    """torchvision.transforms.RandomResizedCrop.get_params, with Python's random."""
    area = width * height
    log_ratio = (math.log(3 / 4), math.log(4 / 3))
    for _ in range(10):
        target_area = area * rng.uniform(0.08, 1.0)
        aspect = math.exp(rng.uniform(*log_ratio))
        w = int(round(math.sqrt(target_area * aspect)))
        h = int(round(math.sqrt(target_area / aspect)))
        if 0 < w <= width and 0 < h <= height:
            return rng.randint(0, height - h), rng.randint(0, width - w), h, w
    return (height - height) // 2, (width - width) // 2, height, width


def sample(path, rng):
    img = Image.open(path).convert("RGB")
    i, j, h, w = rrc_params(img.width, img.height, rng)
    img = img.crop((j, i, j + w, i + h)).resize((224, 224), Image.BILINEAR)
    if rng.random() < 0.5:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    # ToTensor: HWC uint8 -> CHW float32 (permute, contiguous, float), then / 255; Normalize: in
    # place, - mean then / std per channel plane. (Normalizing in HWC first, with the channel as
    # the innermost axis of length 3, is several times slower than what torchvision does.)
    x = np.array(img, dtype=np.uint8).transpose(2, 0, 1).astype(np.float32)
    x /= 255.0
    x -= MEAN
    x /= STD
    return x


with tempfile.TemporaryDirectory() as work:
    box = subprocess.run([corpus_tool, work, "64"], check=True, capture_output=True, text=True).stdout.split()
    top, left, height, width = map(int, box)
    files = sorted(glob.glob(os.path.join(work, "img_*.jpg")))
    sizes = [os.path.getsize(f) for f in files]
    print("# cpu.augment vs PIL + numpy, one core")
    print(f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}; Pillow {PIL.__version__}; numpy {np.__version__}")
    print(f"corpus: {len(files)} JPEGs 500x375 q90, mean {sum(sizes) / len(sizes) / 1000:.1f} kB")

    ours = np.frombuffer(open(os.path.join(work, "img_000_crop_224.ppm"), "rb").read()[-224 * 224 * 3:], dtype=np.uint8)
    theirs = np.asarray(Image.open(files[0]).convert("RGB").crop((left, top, left + width, top + height)).resize((224, 224), Image.BILINEAR), dtype=np.uint8).reshape(-1)
    diff = np.abs(ours.astype(int) - theirs.astype(int))
    print(f"pixels: gpubench resize vs PIL resize of the same crop: max difference {diff.max()} level(s), {np.count_nonzero(diff)} of {diff.size} values differ")

    ratios = []
    for round_ in range(1, 4):
        rng = random.Random(round_)
        for f in files[:8]:
            sample(f, rng)  # warm-up
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < 3.0:
            sample(files[n % len(files)], rng)
            n += 1
        pil_rate = n / (time.perf_counter() - start)
        out = os.path.join(work, f"run{round_}")
        subprocess.run([gpubench, "run", "--only", "cpu.augment", "--axis", "cpu.augment:threads=1", "--out", out],
                       check=True, capture_output=True)
        result = json.load(open(os.path.join(out, "results.json")))["results"][0]
        ours_rate = result["metrics"]["samples_per_s"]["median"]
        ratios.append(ours_rate / pil_rate)
        print(f"round {round_}: gpubench {ours_rate:.1f} samples/s (verified={result['verified']}), PIL+numpy {pil_rate:.1f} samples/s, ratio {ratios[-1]:.3f}")
    median = sorted(ratios)[1]
    verdict = "PASS" if 0.8 <= median <= 1.2 else "FAIL"
    print(f"median ratio gpubench / PIL: {median:.3f} -> {verdict} (target: within +-20%)")
    sys.exit(0 if verdict == "PASS" else 1)
