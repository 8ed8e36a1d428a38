#!/usr/bin/env python3
"""Times, on one NVIDIA GPU, the kernels of a Megatron-Core GPT layer at the per-GPU shapes of
the validation suite validation/megatron-h100 (docs/validation.md, "Megatron-Core on H100"), so
that gpuscale's analytic compute model (sim/compute/kernel_time.*, layer_kernels.*) can be
checked against them kernel by kernel (docs/calibration.md, "Transformer kernels").

For each point of the suite (heads a, hidden h, tensor-parallel degree t; sequence s = 4096,
micro-batch b = 1, bf16), with n = s b tokens:

  qkv       GEMM n x 3h/t x h       forward y = x W^T, backward dgrad dx = dy W, wgrad dW = dy^T x
  attn_out  GEMM n x h x h/t        the same three
  mlp_up    GEMM n x 4h/t x h       the same three
  mlp_down  GEMM n x h x 4h/t       the same three
  sdpa      torch.nn.functional.scaled_dot_product_attention, causal, a/t heads of h/a, the
            flash backend (and the cuDNN backend where the installed torch has one): forward,
            backward
  layernorm forward, backward, on n/t x h rows when t > 1 (sequence parallelism, as the suite
            assumes), else n x h
  gelu      forward, backward (tanh approximation, Megatron's bias-GeLU), on n x 4h/t

Each timing: CUDA events around one call, after warm-up calls, the median of --repeats. Writes
YAML (or CSV when --out ends in .csv) with torch, CUDA, cuDNN, driver and GPU in its header.

  python3 calibration/scripts/transformer_kernels.py --out h100-transformer-kernels.yaml
  python3 calibration/scripts/transformer_kernels.py --dry-run        # the shapes; no torch

Needs PyTorch with CUDA and a GPU (exit status 2 and one line on stderr otherwise); reads the
suite's rows from --suite (a regular expression over its `row:` mappings: no YAML library).
Finishes in well under 3 minutes on an H100 with the defaults (a time guard stops earlier with
what it has, and says so in the output).
"""

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import time

SEQUENCE = 4096  # NVIDIA/Megatron-LM README.md @core_r0.8.0 line 64: "sequence length 4096"
DEFAULT_SUITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                             "validation", "megatron-h100", "readme-weak-scaling.yaml")
TIME_GUARD_S = 150  # stop timing new points after this, to stay under 3 minutes in all


def fail(message):
    print(f"transformer_kernels.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_points(path):
    """The suite's points: id, heads, hidden, tp and micro-batch, in file order."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        fail(f"{path}: {e.strerror} (give the suite's table with --suite)")
    points = []
    for m in re.finditer(r'- \{id: "([^"]+)",(.*?)\n\s*row: \{heads: (\d+), hidden: (\d+), '
                         r'layers: (\d+), tp: (\d+)', text, re.S):
        batch = re.search(r"micro_batch: (\d+)", m.group(2))
        points.append({"id": m.group(1), "heads": int(m.group(3)), "hidden": int(m.group(4)),
                       "layers": int(m.group(5)), "tp": int(m.group(6)),
                       "micro_batch": int(batch.group(1)) if batch else 1})
    if not points:
        fail(f"{path}: no point with a `row: {{heads: ..., hidden: ..., layers: ..., tp: ...}}`")
    return points


def kernels_of(point, sequence):
    """The kernels of one point: (name, pass, kind, shape dict, FLOPs, bytes moved at least)."""
    a, h, t, b = point["heads"], point["hidden"], point["tp"], point["micro_batch"]
    if a % t or h % a or (4 * h) % t or sequence % t:
        fail(f"point {point['id']}: t = {t} does not divide heads {a}, 4h or the sequence")
    n = sequence * b
    e = 2  # bf16
    out = []
    gemms = [("qkv", 3 * h // t, h), ("attn_out", h, h // t), ("mlp_up", 4 * h // t, h),
             ("mlp_down", h, 4 * h // t)]
    for name, outputs, inputs in gemms:
        # forward y[n, out] = x[n, in] W[out, in]^T; dgrad dx[n, in] = dy[n, out] W[out, in];
        # wgrad dW[out, in] = dy[n, out]^T x[n, in]: the same 2 n out in FLOPs each.
        flops = 2 * n * outputs * inputs
        moved = e * (n * inputs + outputs * inputs + n * outputs)
        for pass_ in ("forward", "dgrad", "wgrad"):
            out.append((name, pass_, "gemm", {"tokens": n, "out": outputs, "in": inputs}, flops,
                        moved))
    heads, head_dim = a // t, h // a
    # Causal attention: every score counted (gpuscale's convention, the model FLOPs'); the
    # kernels skip the masked half, so their achieved rate reads about half of a dense one.
    sdpa_flops = 4 * b * heads * sequence * sequence * head_dim
    qkvo = e * 4 * b * heads * sequence * head_dim
    shape = {"batch": b, "heads": heads, "seq": sequence, "head_dim": head_dim, "causal": True}
    out.append(("sdpa", "forward", "attention", shape, sdpa_flops, qkvo))
    out.append(("sdpa", "backward", "attention", shape, 2.5 * sdpa_flops, 2 * qkvo))
    rows = n // t if t > 1 else n
    # Elements moved: forward reads x and writes y (2), backward reads x and dy, writes dx (3).
    for name, shape in (("layernorm", {"rows": rows, "cols": h}),
                        ("gelu", {"rows": n, "cols": 4 * h // t})):
        for pass_, factor in (("forward", 2), ("backward", 3)):
            out.append((name, pass_, "elementwise", shape, 0,
                        factor * e * shape["rows"] * shape["cols"]))
    return out


def dry_run(points, sequence):
    print(f"# sequence {sequence}, bf16; per GPU; FLOPs as gpuscale counts them")
    print(f"{'point':8} {'t':>2} {'kernel':10} {'pass':9} {'shape':58} {'GFLOP':>9}")
    for p in points:
        for name, pass_, _, shape, flops, _ in kernels_of(p, sequence):
            text = ", ".join(f"{k} {v}" for k, v in shape.items())
            print(f"{p['id']:8} {p['tp']:>2} {name:10} {pass_:9} {text:58} {flops / 1e9:9.1f}")


def device_header(torch):
    props = torch.cuda.get_device_properties(0)
    driver = ""
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "gpu": props.name,
        "sm_count": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "compute_capability": f"{props.major}.{props.minor}",
        "driver": driver.splitlines()[0] if driver else "unknown",
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "cudnn": cudnn,
    }


class Timer:
    """Median of CUDA-event times of one call, after warm-up calls."""

    def __init__(self, torch, warmup, repeats):
        self.torch, self.warmup, self.repeats = torch, warmup, repeats

    def __call__(self, fn):
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(self.repeats):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1e3)  # ms -> us
        return statistics.median(times)


def sdpa_backends(torch):
    """(label, context manager factory) for the flash backend and, where torch has it, cuDNN's."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:  # torch < 2.3
        return [("flash", lambda: torch.backends.cuda.sdp_kernel(
            enable_flash=True, enable_math=False, enable_mem_efficient=False))]
    backends = [("flash", lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION))]
    if hasattr(SDPBackend, "CUDNN_ATTENTION"):
        backends.append(("cudnn", lambda: sdpa_kernel(SDPBackend.CUDNN_ATTENTION)))
    return backends


def time_point(torch, point, sequence, timer):
    F = torch.nn.functional
    dev, dt = "cuda", torch.bfloat16
    rows = []

    def add(name, pass_, kind, shape, flops, moved, us, backend=""):
        rows.append({"point": point["id"], "tp": point["tp"], "kernel": name, "pass": pass_,
                     "kind": kind, "backend": backend,
                     "shape": " ".join(f"{k}={v}" for k, v in shape.items()),
                     "time_us": round(us, 3), "flops": int(flops), "bytes": int(moved),
                     "tflops": round(flops / us / 1e6, 1) if flops and us else "",
                     "gbps": round(moved / us / 1e3, 1) if us else ""})

    kernels = kernels_of(point, sequence)
    for name, pass_, kind, shape, flops, moved in kernels:
        if kind != "gemm" or pass_ != "forward":
            continue
        n, outputs, inputs = shape["tokens"], shape["out"], shape["in"]
        x = torch.randn(n, inputs, device=dev, dtype=dt)
        w = torch.randn(outputs, inputs, device=dev, dtype=dt)
        dy = torch.randn(n, outputs, device=dev, dtype=dt)
        add(name, "forward", kind, shape, flops, moved, timer(lambda: torch.matmul(x, w.t())))
        add(name, "dgrad", kind, shape, flops, moved, timer(lambda: torch.matmul(dy, w)))
        add(name, "wgrad", kind, shape, flops, moved, timer(lambda: torch.matmul(dy.t(), x)))
        del x, w, dy

    (_, _, _, shape, f_flops, f_moved), (_, _, _, _, b_flops, b_moved) = \
        [k for k in kernels if k[0] == "sdpa"]
    q, k, v = (torch.randn(shape["batch"], shape["heads"], sequence, shape["head_dim"],
                           device=dev, dtype=dt, requires_grad=True) for _ in range(3))
    for label, backend in sdpa_backends(torch):
        try:
            with backend():
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                dout = torch.randn_like(out)
                fwd = timer(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                bwd = timer(lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True))
        except RuntimeError as e:  # the backend refuses this shape or this GPU
            if label == "flash":
                raise
            print(f"  sdpa {label}: skipped ({str(e).splitlines()[0]})", file=sys.stderr)
            continue
        add("sdpa", "forward", "attention", shape, f_flops, f_moved, fwd, label)
        add("sdpa", "backward", "attention", shape, b_flops, b_moved, bwd, label)
        del out, dout
    del q, k, v

    for name in ("layernorm", "gelu"):
        entries = [kk for kk in kernels if kk[0] == name]
        shape = entries[0][3]
        x = torch.randn(shape["rows"], shape["cols"], device=dev, dtype=dt, requires_grad=True)
        if name == "layernorm":
            weight = torch.ones(shape["cols"], device=dev, dtype=dt, requires_grad=True)
            bias = torch.zeros(shape["cols"], device=dev, dtype=dt, requires_grad=True)
            op = lambda: F.layer_norm(x, (shape["cols"],), weight, bias)
            inputs = (x, weight, bias)
        else:
            op = lambda: F.gelu(x, approximate="tanh")
            inputs = (x,)
        y = op()
        dy = torch.randn_like(y)
        for _, pass_, kind, shape_, flops, moved in entries:
            if pass_ == "forward":
                us = timer(op)
            else:
                us = timer(lambda: torch.autograd.grad(y, inputs, dy, retain_graph=True))
            add(name, pass_, kind, shape_, flops, moved, us)
        del x, y, dy
    torch.cuda.empty_cache()
    return rows


def write(path, header, rows, note):
    columns = ["point", "tp", "kernel", "pass", "kind", "backend", "shape", "time_us", "flops",
               "bytes", "tflops", "gbps"]
    tmp = path + ".partial"
    with open(tmp, "w", encoding="utf-8") as f:
        if path.endswith(".csv"):
            for key, value in header.items():
                f.write(f"# {key}: {value}\n")
            if note:
                f.write(f"# note: {note}\n")
            f.write(",".join(columns) + "\n")
            for r in rows:
                f.write(",".join(str(r[c]) for c in columns) + "\n")
        else:
            f.write("# Kernel times of Megatron-Core GPT layers at the per-GPU shapes of\n"
                    "# validation/megatron-h100, by calibration/scripts/transformer_kernels.py\n"
                    "# (docs/calibration.md). time_us: the median of CUDA-event times; flops as\n"
                    "# gpuscale counts them (causal attention: every score); bytes: the least\n"
                    "# traffic (each operand once).\n")
            for key, value in header.items():
                f.write(f'{key}: "{value}"\n' if isinstance(value, str) else f"{key}: {value}\n")
            if note:
                f.write(f'note: "{note}"\n')
            f.write("kernels:\n")
            for r in rows:
                fields = ", ".join(f'{c}: "{r[c]}"' if isinstance(r[c], str) else f"{c}: {r[c]}"
                                   for c in columns if r[c] != "")
                f.write(f"  - {{{fields}}}\n")
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="output file: .csv for CSV, anything else YAML")
    parser.add_argument("--suite", default=DEFAULT_SUITE, help="the suite's table (default: %(default)s)")
    parser.add_argument("--points", help="comma-separated point ids (default: every one)")
    parser.add_argument("--sequence", type=int, default=SEQUENCE)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--dry-run", action="store_true", help="print the shapes and exit (no torch)")
    args = parser.parse_args()

    points = read_points(args.suite)
    if args.points:
        wanted = args.points.split(",")
        unknown = [p for p in wanted if p not in {q["id"] for q in points}]
        if unknown:
            fail(f"--points: unknown point {unknown[0]} (known: {', '.join(q['id'] for q in points)})")
        points = [p for p in points if p["id"] in wanted]
    if args.dry_run:
        dry_run(points, args.sequence)
        return
    if not args.out:
        fail("--out FILE is required (or --dry-run)")
    try:
        import torch
    except ImportError:
        fail("PyTorch is not installed (pip install torch; --dry-run needs none)")
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to PyTorch (torch.cuda.is_available() is False); "
             "--dry-run prints the shapes without one")
    header = device_header(torch)
    header["sequence"] = args.sequence
    header["warmup"] = args.warmup
    header["repeats"] = args.repeats
    timer = Timer(torch, args.warmup, args.repeats)
    rows, note, start = [], "", time.monotonic()
    for p in points:
        if time.monotonic() - start > TIME_GUARD_S:
            note = (f"stopped after {TIME_GUARD_S} s: points from {p['id']} on not timed "
                    "(rerun with --points)")
            print(f"transformer_kernels.py: {note}", file=sys.stderr)
            break
        print(f"  {p['id']} (t = {p['tp']})", file=sys.stderr)
        rows.extend(time_point(torch, p, args.sequence, timer))
    write(args.out, header, rows, note)
    print(f"wrote {len(rows)} timings to {args.out} in {time.monotonic() - start:.0f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
