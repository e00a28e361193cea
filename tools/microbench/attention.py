#!/usr/bin/env python3
"""attention: fused (flash) attention forward and backward through PyTorch's
scaled_dot_product_attention, on the kernel a training stack runs on the GPU: cuDNN's fused
attention (Transformer Engine's default on Hopper and later) where PyTorch offers it, else
FlashAttention. bf16, head dimension 128 (Llama's and GPT-3's), causal and not, sequences of
1K to 32K tokens; batch x heads is set so that each call holds 256K query tokens.

Records (JSON lines, as the CUDA microbenchmarks write them; clustersim calibrate reads them):
  {"record":"device","bench":"attention",...}
  {"record":"attention","backend":"cudnn","dtype":"bf16","batch_heads":..,"q_len":..,
   "kv_len":..,"head_dim":128,"causal":true,"pass":"forward"|"backward","time_s":..,
   "tflops":..}
time_s is one call's share of back-to-back calls timed with CUDA events, each shape after half
a second of its own calls (as gemm: a GPU at its power limit lowers its clocks within a second
of heavy load); the backward pass is the forward-and-backward call less the forward. FLOPs as
the compute model counts them (models/compute/profile.cpp): 4 bh q kv h forward, halved when
causal, 2.5 times that backward.

Without PyTorch, CUDA or a GPU it says so and exits 2, measuring nothing.
Usage: attention.py [--quick]
"""
import json
import sys

WARMUP_S = 0.5
BUDGET_S = 0.25


def fail(message):
    print(f"attention: {message}: the microbenchmark measures a GPU through PyTorch; run it where PyTorch with CUDA "
          f"and a GPU are installed (tools/microbench/device-check.sh OUT_DIR)", file=sys.stderr)
    sys.exit(2)


def main():
    quick = len(sys.argv) > 1 and sys.argv[1] == "--quick"
    if len(sys.argv) > 1 and not quick:
        print(f"attention: unknown option '{sys.argv[1]}' (--quick)", file=sys.stderr)
        return 2
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        fail(f"no PyTorch here ({e})")
    if not torch.cuda.is_available():
        fail("PyTorch sees no CUDA GPU")
    dev = torch.cuda.current_device()
    p = torch.cuda.get_device_properties(dev)
    driver = 0
    try:
        driver = int(torch._C._cuda_getDriverVersion())
    except Exception:  # a PyTorch without it: the driver version is left out
        pass
    cuda = torch.version.cuda or "0"
    major, minor = (cuda.split(".") + ["0"])[:2]
    device = {"record": "device", "bench": "attention", "name": p.name, "sm_count": p.multi_processor_count,
              "compute_capability": f"{p.major}.{p.minor}", "memory_bytes": p.total_memory,
              "cuda_version": int(major) * 1000 + int(minor) * 10, "device_count": torch.cuda.device_count()}
    if driver > 0:  # left out where PyTorch does not say it
        device["driver_version"] = driver
    print(json.dumps(device), flush=True)

    def timed(fn):
        """Seconds per call of fn(): warm-up by time, then up to 25 batches of ~200 us or more."""
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        warm, batch = 0.0, 1
        while warm < WARMUP_S:
            start.record()
            for _ in range(batch):
                fn()
            stop.record()
            stop.synchronize()
            ms = start.elapsed_time(stop)
            warm += ms * 1e-3
            batch = max(1, min(1000, int(batch * 0.05 / max(1e-6, ms * 1e-3))))
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        calls = max(1, min(1000, int(200e-6 / max(1e-9, start.elapsed_time(stop) * 1e-3)) + 1))
        times, total = [], 0.0
        while len(times) < 25 and (len(times) < 3 or total < BUDGET_S):
            start.record()
            for _ in range(calls):
                fn()
            stop.record()
            stop.synchronize()
            s = start.elapsed_time(stop) * 1e-3
            times.append(s / calls)
            total += s
        times.sort()
        n = len(times)
        median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
        return median, times[0], times[-1], n, calls

    # The kernel training runs: cuDNN's where PyTorch has it and it takes the shape.
    backends = []
    if hasattr(SDPBackend, "CUDNN_ATTENTION"):
        backends.append(("cudnn", SDPBackend.CUDNN_ATTENTION))
    backends.append(("flash", SDPBackend.FLASH_ATTENTION))

    head_dim = 128
    tokens = 16384 if quick else 262144
    seqs = [2048, 8192] if quick else [1024, 2048, 4096, 8192, 16384, 32768]
    dtype = torch.bfloat16

    def skipped(reason):
        print(json.dumps({"record": "skipped", "bench": "attention", "reason": reason}), flush=True)

    for seq in seqs:
        bh = max(1, tokens // seq)
        heads = min(bh, 32)
        batch = bh // heads
        q, k, v = ((torch.rand(batch, heads, seq, head_dim, device="cuda", dtype=dtype) * 2 - 1).requires_grad_(True)
                   for _ in range(3))
        grad = torch.rand(batch, heads, seq, head_dim, device="cuda", dtype=dtype) * 2 - 1
        for causal in (True, False):
            def forward(backend):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

            def forward_backward(backend):
                torch.autograd.grad(forward(backend), (q, k, v), grad)

            # The first backend that runs both passes on this shape (cuDNN's, else FlashAttention).
            name = backend = None
            for bname, candidate in backends:
                try:
                    forward_backward(candidate)
                    torch.cuda.synchronize()
                    name, backend = bname, candidate
                    break
                except RuntimeError:
                    continue
            what = f"bh {bh} seq {seq} head_dim {head_dim}{' causal' if causal else ''}"
            if backend is None:
                skipped(f"no fused attention kernel runs {what}")
                continue
            try:
                fwd = timed(lambda: forward(backend))
                both = timed(lambda: forward_backward(backend))
            except RuntimeError as e:
                skipped(f"{name} failed on {what}: {e}")
                continue
            flops = 4.0 * bh * seq * seq * head_dim * (0.5 if causal else 1.0)
            # The backward pass: the forward-and-backward call less the forward (its spread is
            # the combined call's, shifted by the forward's median).
            bwd = (both[0] - fwd[0], both[1] - fwd[0], both[2] - fwd[0], both[3], both[4])
            for pass_, (t, lo, hi, n, calls), f in (("forward", fwd, flops), ("backward", bwd, 2.5 * flops)):
                if t <= 0 or lo <= 0:
                    skipped(f"{name} {what}: the {pass_} pass timed at {t:g} s (noise): not written")
                    continue
                print(json.dumps({"record": "attention", "backend": name, "dtype": "bf16", "batch_heads": bh,
                                  "q_len": seq, "kv_len": seq, "head_dim": head_dim, "causal": causal, "pass": pass_,
                                  "time_s": t, "min_s": lo, "max_s": hi, "repeats": n, "calls": calls,
                                  "tflops": round(f / t / 1e12, 3)}), flush=True)
        del q, k, v, grad
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
