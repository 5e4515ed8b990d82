#!/usr/bin/env bash
# The README's job start on a machine with a GPU (root): four nodes, each in its own network and
# UTS namespace, as a ring of four and on a switch (tests/integration/test_job_torchrun.sh), every
# rank on GPU 0 with NCCL; then the same with every node's fabric declared without RDMA. Each
# node runs `eval "$(sparkc env --for torchrun)"; torchrun --nproc_per_node 1 torch_job.py`.
# Prints each run's ranks and the transport NCCL chose; NCCL_NVLS_ENABLE=0 stays set throughout.
#
# Usage: tests/gpu/job_torchrun.sh   (SPARKD_BIN, SPARKC_BIN, PROBE_HELPER_DIR as for the
#        integration tests; sparkd, sparkc and the helpers on PATH otherwise)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export SPARKD_BIN=${SPARKD_BIN:-$(command -v sparkd)} SPARKC_BIN=${SPARKC_BIN:-$(command -v sparkc)}
export PROBE_HELPER_DIR=${PROBE_HELPER_DIR:-$(dirname "$SPARKD_BIN")}
export JOB_BACKEND=nccl CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} JOB_NCCL_DEBUG=1 NCCL_NVLS_ENABLE=0
rc=0
for rdma in "" no; do
        if [ -n "$rdma" ]; then echo "=== fabric declared without RDMA"; else echo "=== fabric as found"; fi
        FABRIC_RDMA=$rdma KEEP_TEST_TMP=1 bash "$here/../integration/test_job_torchrun.sh" >"/tmp/job_torchrun_${rdma:-rdma}.log" 2>&1 || rc=1
        grep -E '^(ring|switch)|PASS|FAIL' "/tmp/job_torchrun_${rdma:-rdma}.log"
        kept=$(ls -td /tmp/sparkd-test_job_torchrun.* 2>/dev/null | head -1)
        [ -z "$kept" ] || grep -hE 'NCCL INFO (Using network|Channel 00/0|NET/)' "$kept"/job-*.out 2>/dev/null | sort | uniq -c | head -12
done
exit $rc
