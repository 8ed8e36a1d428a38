#!/usr/bin/env python3
"""Issue 44's device checks, prepared for a session that is lent one GPU (docs/calibration.md,
"Issue 44's device checks"). Three measurements the model needs and no source sizes:

  share     How a compute-bound kernel and a memory-bound one slow each other when they share the
            GPU. The replay shares a GPU equally between concurrent kernels (a SimGrid host), which
            makes a faster NVLink slow LeNet down (docs/replay.md, "One iteration").
  exchange  What a collective's kernel, resident beside backward, costs it: EDSR's residual body
            (256 channels, 48x48 patches, batch 16) timed alone and beside a kernel that holds
            NCCL-like blocks (512 threads per channel) through it, copying through HBM at a
            link's rate or, at rate 0, spinning as NCCL's ring kernel does for a late peer
            (docs/scale-mechanisms.md §6).
            The lent machine has one GPU, so the collective is emulated; a 2-GPU run would
            measure the real one.
  profiler  What PipeDream's profiler adds to each module's time (msr-fiddle/pipedream@7db6a1c,
            profiler/torchmodules/torchprofiler/profiling.py L129-168): each leaf module of
            torchvision's ResNet-50 at batch 128, FP32, cudnn.benchmark, timed as PipeDream does
            (time.time() around the forward then torch.cuda.synchronize(); backward between a
            pre-hook and a hook that synchronizes) and by CUDA events around the same calls.
            validation/pipedream-v100's forward rows carry 0.25-0.45 ms more than their kernels.

Usage: python3 calibration/scripts/issue44_device_checks.py --out DIR [--only share,exchange,profiler]
Writes DIR/issue44-device-checks.json and prints a summary; about two minutes on an H200.
"""
import argparse
import json
import os
import statistics
import sys
import time

try:
    import torch
    import torch.nn as nn
except ImportError:
    print("issue44_device_checks: needs PyTorch (the lent GPU machine's python3 has it)",
          file=sys.stderr)
    sys.exit(2)


def cuda_ms(fn, reps, stream=None):
    """Milliseconds of `reps` calls of fn on `stream` (the current one if None), by CUDA events."""
    stream = stream or torch.cuda.current_stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        start.record(stream)
        for _ in range(reps):
            fn()
        end.record(stream)
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def together_ms(a, reps_a, b, reps_b):
    """Each loop's milliseconds when both are launched at once on two streams."""
    sa, sb = torch.cuda.Stream(), torch.cuda.Stream()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    torch.cuda.synchronize()
    with torch.cuda.stream(sa):
        events[0].record(sa)
    with torch.cuda.stream(sb):
        events[2].record(sb)
    # Launch in slices so that neither stream's queue runs far ahead of the other's.
    slices = 10
    for k in range(slices):
        with torch.cuda.stream(sa):
            for _ in range(reps_a // slices + (1 if k < reps_a % slices else 0)):
                a()
        with torch.cuda.stream(sb):
            for _ in range(reps_b // slices + (1 if k < reps_b % slices else 0)):
                b()
    with torch.cuda.stream(sa):
        events[1].record(sa)
    with torch.cuda.stream(sb):
        events[3].record(sb)
    torch.cuda.synchronize()
    return events[0].elapsed_time(events[1]), events[2].elapsed_time(events[3])


def edsr_conv_step(batch=16, channels=256, size=48):
    """One EDSR body convolution's forward and backward (FP32)."""
    conv = nn.Conv2d(channels, channels, 3, padding=1).cuda()
    x = torch.randn(batch, channels, size, size, device="cuda", requires_grad=True)
    grad = torch.randn(batch, channels, size, size, device="cuda")

    def step():
        conv(x).backward(grad)
    return step


def sgd_update(parameters=43_000_000):
    """An SGD step over EDSR's 43 M FP32 parameters: memory-bound (3 x 172 MB of traffic)."""
    p = torch.randn(parameters, device="cuda")
    g = torch.randn(parameters, device="cuda")
    return lambda: p.add_(g, alpha=-1e-4)


def check_share():
    torch.backends.cudnn.benchmark = True
    conv, update = edsr_conv_step(), sgd_update()
    for _ in range(5):
        conv()
        update()
    torch.cuda.synchronize()
    conv_ms = cuda_ms(conv, 20) / 20
    update_ms = cuda_ms(update, 50) / 50
    # Loops of about 300 ms each, alone and together.
    reps_conv = max(1, round(300 / conv_ms))
    reps_update = max(1, round(300 / update_ms))
    alone_conv = cuda_ms(conv, reps_conv)
    alone_update = cuda_ms(update, reps_update)
    with_conv, with_update = together_ms(conv, reps_conv, update, reps_update)
    result = {
        "conv_fwd_bwd_ms": conv_ms, "update_ms": update_ms,
        "loops": {"conv": reps_conv, "update": reps_update},
        "alone_ms": {"conv": alone_conv, "update": alone_update},
        "together_ms": {"conv": with_conv, "update": with_update},
        # Equal sharing predicts both loops end at alone_conv + alone_update when they overlap
        # throughout; a GPU that runs them side by side at full speed, at max of the two.
        "together_vs_sum": max(with_conv, with_update) / (alone_conv + alone_update),
        "together_vs_max": max(with_conv, with_update) / max(alone_conv, alone_update),
    }
    print(f"share: conv {conv_ms:.3f} ms, update {update_ms:.3f} ms; together "
          f"{max(with_conv, with_update):.1f} ms against {alone_conv:.1f} + {alone_update:.1f} "
          f"alone (equal sharing: the sum)")
    return result


RING_EMULATION = r"""
extern "C" __global__ void ring_emulation(const float4* src, float4* dst, long long n4_per_block,
                                          double bytes_per_ns_per_block, long long hold_ns) {
  // One block per channel, as NCCL launches, resident for hold_ns: it copies its slice of the
  // buffer round and round no faster than the link's rate (a ring busy through backward), and
  // spins between chunks and at rate 0 (a ring waiting for a late peer).
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  const long long first = blockIdx.x * n4_per_block;
  const long long chunk = 4096;  // float4s: 64 KiB
  long long done = 0;            // float4s this block has copied
  while (true) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    const long long elapsed = (long long)(now - start);
    if (elapsed >= hold_ns) break;
    if (bytes_per_ns_per_block <= 0 ||
        (double)(done * 16) > (double)elapsed * bytes_per_ns_per_block) continue;
    const long long offset = done % n4_per_block;
    const long long end = min(offset + chunk, n4_per_block);
    for (long long i = offset + threadIdx.x; i < end; i += blockDim.x) dst[first + i] = src[first + i];
    done += end - offset;
  }
}
"""


def edsr_body(blocks=8, channels=256):
    """EDSR's residual blocks (conv, ReLU, conv, scaled sum), a quarter of its 32."""
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(True),
                                      nn.Conv2d(channels, channels, 3, padding=1))

        def forward(self, x):
            return x + 0.1 * self.body(x)
    return nn.Sequential(*[Block() for _ in range(blocks)]).cuda()


def check_exchange():
    import cupy
    torch.backends.cudnn.benchmark = False  # EDSR-PyTorch leaves it off (readings R10)
    body = edsr_body()
    x = torch.randn(16, 256, 48, 48, device="cuda", requires_grad=True)

    def backward_once():
        out = body(x)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out.sum().backward()
        end.record()
        return start, end

    for _ in range(3):
        s, e = backward_once()
    torch.cuda.synchronize()
    alone = []
    for _ in range(5):
        s, e = backward_once()
        torch.cuda.synchronize()
        alone.append(s.elapsed_time(e))
    alone_ms = statistics.median(alone)
    kernel = cupy.RawKernel(RING_EMULATION, "ring_emulation")
    buffer_bytes = 172 * 2**20  # EDSR's FP32 gradients
    src = cupy.ones(buffer_bytes // 4, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    side = torch.cuda.Stream()
    rows = []
    for channels in (2, 4, 8):
        for rate_GBps in (0.0, 75.0, 150.0):  # spin only; NVLink 2.0 x3 (Lassen's pair); twice
            n4 = buffer_bytes // 16 // channels
            hold_ns = int(alone_ms * 1.5e6)
            times = []
            for _ in range(3):
                out = body(x)
                torch.cuda.synchronize()
                with cupy.cuda.ExternalStream(side.cuda_stream):
                    kernel((channels,), (512,), (src, dst, cupy.int64(n4),
                                                 cupy.float64(rate_GBps / channels),
                                                 cupy.int64(hold_ns)))
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                out.sum().backward()
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end))
            beside_ms = statistics.median(times)
            rows.append({"channels": channels, "rate_GBps": rate_GBps, "backward_ms": beside_ms,
                         "slowdown": beside_ms / alone_ms})
            print(f"exchange: {channels} channels at {rate_GBps:.0f} GB/s beside backward: "
                  f"{beside_ms:.1f} ms against {alone_ms:.1f} alone ({beside_ms / alone_ms:.3f}x)")
    return {"backward_alone_ms": alone_ms, "alone_samples_ms": alone,
            "sms": torch.cuda.get_device_properties(0).multi_processor_count, "beside": rows}


class RandomImages(torch.utils.data.Dataset):
    """ImageNet-sized random images through the transforms PipeDream's loader applied
    (profiler/image_classification/main.py L224-230): CPU work in the loader's workers."""

    def __init__(self, count):
        import torchvision.transforms as T
        self.count = count
        self.transform = T.Compose([
            T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
            T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])

    def __len__(self):
        return self.count

    def __getitem__(self, i):
        import numpy
        from PIL import Image
        pixels = numpy.random.default_rng(i).integers(0, 256, (375, 500, 3), dtype=numpy.uint8)
        return self.transform(Image.fromarray(pixels)), i % 1000


def check_profiler():
    """PipeDream's protocol three ways: the GPU's memory whole; capped at a 16 GB V100's (an
    allocator near its limit frees and re-allocates in forward); and fed by a loader like
    PipeDream's (4 workers, pinned memory: a thread of the timed process)."""
    variants = {}
    for name, options in (("plain", {}), ("v100_memory", {"memory_bytes": 16 * 10**9}),
                          ("loader", {"loader": True})):
        try:
            variants[name] = profile_resnet50(**options)
        except Exception as error:
            variants[name] = {"error": repr(error)}
            print(f"profiler {name}: failed: {error!r}")
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.empty_cache()
    return variants


def profile_resnet50(iterations=20, warmup=5, batch=128, memory_bytes=None, loader=False):
    import torchvision
    torch.backends.cudnn.benchmark = True
    torch.cuda.empty_cache()
    if memory_bytes:
        total = torch.cuda.get_device_properties(0).total_memory
        torch.cuda.set_per_process_memory_fraction(memory_bytes / total)
    model = torchvision.models.resnet50().cuda()
    # Full backward hooks refuse in-place ops on a hooked module's tensors; PyTorch 1.1's hooks,
    # which PipeDream patched, did not. Out-of-place ReLUs cost a little memory traffic.
    for m in model.modules():
        if isinstance(m, nn.ReLU):
            m.inplace = False
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    images = torch.randn(batch, 3, 224, 224, device="cuda")
    labels = torch.randint(0, 1000, (batch,), device="cuda")
    leaves = [(name, m) for name, m in model.named_modules() if len(list(m.children())) == 0]
    records = {name: {"type": type(m).__name__, "fwd_wall": [], "fwd_event": [], "bwd_wall": [],
                      "bwd_event": []} for name, m in leaves}
    pending = []  # (name, pass, start event, end event), read once the iteration has synchronized
    measuring = [False]
    labelled = [False]  # each forward inside record_function("fwd:NAME"), for the kernel pass

    for name, m in leaves:
        original = m.forward

        def timed(*args, _name=name, _original=original, **kwargs):
            # PipeDream: no synchronize before start; the previous module's wrapper synchronized.
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start = time.time()
            e0.record()
            if labelled[0]:
                with torch.profiler.record_function("fwd:" + _name):
                    out = _original(*args, **kwargs)
            else:
                out = _original(*args, **kwargs)
            e1.record()
            torch.cuda.synchronize()
            stop = time.time()
            if measuring[0]:
                records[_name]["fwd_wall"].append((stop - start) * 1e3)
                pending.append((_name, "fwd_event", e0, e1))
            return out
        m.forward = timed

        state = {}

        def pre_hook(module, grad_output, _name=name, _state=state):
            _state["start"] = time.time()
            _state["event"] = torch.cuda.Event(enable_timing=True)
            _state["event"].record()

        def hook(module, grad_input, grad_output, _name=name, _state=state):
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            torch.cuda.synchronize()
            stop = time.time()
            if measuring[0] and "start" in _state:
                records[_name]["bwd_wall"].append((stop - _state["start"]) * 1e3)
                pending.append((_name, "bwd_event", _state["event"], end))
        m.register_full_backward_pre_hook(pre_hook)
        m.register_full_backward_hook(hook)

    batches = None
    if loader:
        batches = iter(torch.utils.data.DataLoader(
            RandomImages(batch * (warmup + iterations + 4)), batch_size=batch, shuffle=True,
            num_workers=4, pin_memory=True))
    def iteration(images, labels):
        if batches is not None:
            host_images, host_labels = next(batches)
            images = host_images.cuda(non_blocking=True)
            labels = host_labels.cuda(non_blocking=True)
        torch.cuda.synchronize()
        t0 = time.time()
        loss = criterion(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
        return (time.time() - t0) * 1e3

    iteration_ms = []
    for i in range(warmup + iterations):
        measuring[0] = i >= warmup
        took_ms = iteration(images, labels)
        if measuring[0]:
            iteration_ms.append(took_ms)
        for name, key, e0, e1 in pending:
            records[name][key].append(e0.elapsed_time(e1))
        pending.clear()

    # The kernels' own time per forward module, from CUPTI: the events above also hold the
    # host's dispatch before a module's first kernel reaches the idle GPU.
    measuring[0], labelled[0] = False, True
    kernel_ms = {}
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                iteration(images, labels)
        for event in prof.key_averages():
            if event.key.startswith("fwd:"):
                total_us = getattr(event, "device_time_total", None)
                if total_us is None:
                    total_us = event.cuda_time_total
                kernel_ms[event.key[4:]] = total_us / event.count / 1e3
    except Exception as error:
        print(f"profiler: the kernel pass failed: {error!r}")
    labelled[0] = False

    modules = []
    for name, r in records.items():
        row = {"module": name, "type": r["type"]}
        for key in ("fwd_wall", "fwd_event", "bwd_wall", "bwd_event"):
            row[key + "_ms"] = statistics.mean(r[key]) if r[key] else None
        row["fwd_kernels_ms"] = kernel_ms.get(name)
        modules.append(row)

    def excess(minuend, subtrahend):
        values = [m[minuend] - m[subtrahend] for m in modules
                  if m[minuend] is not None and m[subtrahend] is not None]
        return {"median_ms": statistics.median(values), "mean_ms": statistics.mean(values),
                "modules": len(values)} if values else None
    summary = {"forward_wall_minus_events": excess("fwd_wall_ms", "fwd_event_ms"),
               "forward_wall_minus_kernels": excess("fwd_wall_ms", "fwd_kernels_ms"),
               "backward_wall_minus_events": excess("bwd_wall_ms", "bwd_event_ms"),
               "iteration_ms": statistics.median(iteration_ms)}
    print(f"profiler (memory {memory_bytes or 'whole'}, loader {loader}): ResNet-50 batch {batch}, "
          f"{len(modules)} leaf modules; per module, forward wall minus kernels "
          f"{summary['forward_wall_minus_kernels']}, minus events "
          f"{summary['forward_wall_minus_events']}; backward wall minus events "
          f"{summary['backward_wall_minus_events']}; iteration {summary['iteration_ms']:.1f} ms")
    return {"summary": summary, "modules": modules,
            "versions": {"torch": torch.__version__, "torchvision": torchvision.__version__}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for issue44-device-checks.json")
    parser.add_argument("--only", default="share,exchange,profiler")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("issue44_device_checks: no CUDA device: run it on the lent GPU machine",
              file=sys.stderr)
        sys.exit(2)
    os.makedirs(args.out, exist_ok=True)
    # The studies ran FP32 on V100s, which have no TF32: convolutions and products on CUDA cores.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    checks = {"share": check_share, "exchange": check_exchange, "profiler": check_profiler}
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "cudnn": torch.backends.cudnn.version()}
    for name in args.only.split(","):
        started = time.time()
        try:
            result[name] = checks[name]()
        except Exception as error:  # one failed check must not lose the others' numbers
            result[name] = {"error": repr(error)}
            print(f"{name}: failed: {error!r}")
        result[name + "_seconds"] = time.time() - started
        with open(f"{args.out}/issue44-device-checks.json", "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
