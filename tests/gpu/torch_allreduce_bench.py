"""One rank of an all_reduce benchmark started by torchrun with what `sparkc env --for torchrun`
exported, measured as sparkd-probe-nccl and nccl-tests measure: float sum, for each size in
BENCH_SIZES (bytes, comma-separated) BENCH_WARMUP warm-up all_reduces, one untimed all_reduce every
rank reaches, then BENCH_ITERS timed between two CUDA events; algbw = bytes / time per all_reduce,
busbw = algbw * 2(n-1)/n. Rank 0 prints one JSON line. Without a CUDA device every rank prints
{"error": "no CUDA device: ..."} and exits 3 before joining the job.
"""
import json
import os
import socket
import sys

import torch
import torch.distributed as dist

sizes = [int(s) for s in os.environ.get("BENCH_SIZES", str(64 << 20)).split(",")]
iters = int(os.environ.get("BENCH_ITERS", "20"))
warmup = int(os.environ.get("BENCH_WARMUP", "1"))
if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
    print(json.dumps({"host": socket.gethostname(), "error": "no CUDA device: torch sees none"}), flush=True)
    sys.exit(3)
torch.cuda.set_device(0)
dist.init_process_group("nccl")
rank, world = dist.get_rank(), dist.get_world_size()
rows = []
for size in sizes:
    send = torch.ones(size // 4, dtype=torch.float32, device="cuda")
    for _ in range(warmup):
        dist.all_reduce(send)
    dist.all_reduce(send)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        dist.all_reduce(send)
    stop.record()
    torch.cuda.synchronize()
    sec = start.elapsed_time(stop) / 1000 / iters
    algbw = size / sec / 1e9
    rows.append({"bytes": size, "time_us": sec * 1e6, "algbw": algbw, "busbw": algbw * 2 * (world - 1) / world})
if rank == 0:
    nccl = torch.cuda.nccl.version()
    nccl = ".".join(str(v) for v in nccl) if isinstance(nccl, tuple) else str(nccl)
    print(json.dumps({"host": socket.gethostname(), "world": world, "nccl": nccl, "sizes": rows}), flush=True)
dist.destroy_process_group()
