#!/usr/bin/env python3
"""Two real PyTorch training jobs for checking `gpubench watch` on a machine with a GPU
(docs/validation/watch_on_gpu.sh): `gpu` trains an MLP in bf16 on device-resident data, so the
GPU should be the limit; `loader` trains a small CNN on JPEGs that a torchvision DataLoader
decodes and augments on the CPU with WORKERS worker processes, so the CPU (those workers) should
be; `cpu-loader` needs no GPU: its loop only takes batches, which WORKERS worker processes compute
(matrix products on one thread each), so the loop waits on them (docs/validation/
watch_loader_shared.sh). Usage: watch_jobs.py gpu SECONDS | watch_jobs.py loader SECONDS WORKERS |
watch_jobs.py cpu-loader SECONDS WORKERS"""
import io
import sys
import time

import torch


def gpu_job(seconds):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(8192, 8192),
                                                      torch.nn.GELU()) for _ in range(4)])
    model = model.cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    end = time.time() + seconds
    steps = 0
    while time.time() < end:
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        steps += 1
        if steps % 10 == 0:
            torch.cuda.synchronize()
    print(f"gpu job: {steps} steps, loss {loss.item():.4g}")


class Jpegs(torch.utils.data.Dataset):
    """Random-content JPEGs in memory, decoded and augmented per sample like ImageNet training."""

    def __init__(self, count):
        from PIL import Image
        import torchvision.transforms as T
        gen = torch.Generator().manual_seed(0)
        self.blobs = []
        for _ in range(16):
            pixels = (torch.rand(3, 375, 500, generator=gen) * 255).to(torch.uint8)
            buf = io.BytesIO()
            Image.fromarray(pixels.permute(1, 2, 0).numpy()).save(buf, format="JPEG", quality=90)
            self.blobs.append(buf.getvalue())
        self.count = count
        self.transform = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                    T.ToTensor(),
                                    T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        from PIL import Image
        image = Image.open(io.BytesIO(self.blobs[i % len(self.blobs)])).convert("RGB")
        return self.transform(image), i % 1000


def loader_job(seconds, workers):
    import torchvision
    model = torchvision.models.resnet18(num_classes=1000).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = torch.utils.data.DataLoader(Jpegs(10 ** 7), batch_size=128, num_workers=workers,
                                         pin_memory=True, persistent_workers=True)
    end = time.time() + seconds
    steps = 0
    for images, labels in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(images.cuda(non_blocking=True)),
                                                     labels.cuda(non_blocking=True))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        steps += 1
        if time.time() > end:
            break
    print(f"loader job: {steps} steps of 128 images")


class Products(torch.utils.data.Dataset):
    """Samples that take a worker's CPU to make: a few products of 192 x 192 matrices each."""

    def __len__(self):
        return 10 ** 7

    def __getitem__(self, i):
        x = torch.randn(192, 192)
        for _ in range(6):
            x = torch.tanh(x @ x)
        return x.mean(dim=0)


def cpu_loader_job(seconds, workers):
    torch.set_num_threads(1)
    loader = torch.utils.data.DataLoader(Products(), batch_size=16, num_workers=workers)
    end = time.time() + seconds
    steps = 0
    for batch in loader:
        batch.sum().item()
        steps += 1
        if time.time() > end:
            break
    print(f"cpu-loader job: {steps} batches of 16")


if __name__ == "__main__":
    if sys.argv[1] == "gpu":
        gpu_job(float(sys.argv[2]))
    elif sys.argv[1] == "cpu-loader":
        cpu_loader_job(float(sys.argv[2]), int(sys.argv[3]))
    else:
        loader_job(float(sys.argv[2]), int(sys.argv[3]))
