"""One rank of a job started by torchrun with what `sparkc env --for torchrun` exported: joins the
process group torchrun's rendezvous made, all_reduces its rank + 1 and prints one JSON line with
what it saw, so the test can check the world, the ranks and the sum.

JOB_BACKEND picks the backend: gloo (CPU, default) or nccl (one GPU: cuda:0 of what
CUDA_VISIBLE_DEVICES leaves).
"""
import json
import os
import socket
import sys

import torch
import torch.distributed as dist

backend = os.environ.get("JOB_BACKEND", "gloo")
dist.init_process_group(backend)
rank, world = dist.get_rank(), dist.get_world_size()
device = torch.device("cuda", 0) if backend == "nccl" else torch.device("cpu")
# Large enough that NCCL or Gloo move it in several pieces, small enough for a loaded CI machine.
tensor = torch.full((1 << 20,), float(rank + 1), device=device)
dist.all_reduce(tensor)
expected = world * (world + 1) / 2
ok = bool(torch.all(tensor == expected).item())
print(
    json.dumps(
        {
            "host": socket.gethostname(),
            "rank": rank,
            "world": world,
            "sum": tensor[0].item(),
            "expected": expected,
            "correct": ok,
            "master": "%s:%s" % (os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")),
        }
    ),
    flush=True,
)
dist.destroy_process_group()
sys.exit(0 if ok else 1)
