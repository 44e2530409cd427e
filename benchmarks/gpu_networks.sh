#!/usr/bin/env bash
# Seed 002's networks on a GPU, in one go (a few minutes on an H100 or H200): the GPU tests
# (tests/test_gpu.py: float32 agreement with the CPU, batched vs alone, two deterministic runs
# identical), the GPU's epoch-cost table (what `sweep cost` sizes GPU-hours from, as
# benchmarks/ffnn_epoch_costs_cuda.json once committed), and the batched trainer per network at
# M = 1, 16, 81, 256 on the GPU beside one network on one CPU thread of the same machine, and
# whether cuBLAS gives a network the same bits whatever its partners (benchmarks/partner_bits.py).
#
#   OUT=gpu-results bash benchmarks/gpu_networks.sh     # then commit $OUT/ffnn_epoch_costs_cuda.json
#
# Needs PyTorch with CUDA, NumPy, scikit-learn, pandas, PyYAML and pytest (pip install -e .[nn]).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-results}
mkdir -p "$out"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
python -c "import torch; assert torch.cuda.is_available(), 'no GPU'; print(torch.__version__, torch.cuda.get_device_name())" | tee "$out/device.txt"
python -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py 2>&1 | tee "$out/tests.txt"
python benchmarks/ffnn_epoch.py --repeats 3 --epochs 3 --device cuda \
    --json "$out/ffnn_epoch_costs_cuda.json" 2>&1 | tee "$out/epoch_costs.txt"
python benchmarks/ffnn_epoch.py --batched --rungs mean --sizes 1 16 81 256 --epochs 1 \
    --repeats 3 --device cuda 2>&1 | tee "$out/batched_cuda.txt"
python benchmarks/ffnn_epoch.py --batched --rungs mean --sizes 1 --epochs 1 --repeats 3 \
    --device cpu 2>&1 | tee "$out/one_cpu_thread.txt"
python benchmarks/partner_bits.py --device cuda 2>&1 | tee "$out/partner_bits_cuda.txt"
