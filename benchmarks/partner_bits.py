"""Does a network's arithmetic in a batched group depend on its partners? For the kernels the
batched trainer (``hpo/learners/batched_network.py``) runs every step, the forward ``baddbmm``
and the two ``bmm`` of its backward, this prints the shapes where one member does not get the
same bits alone (a batch of one) as at another position of a batch of M. A sweep could train
the repetitions of a sequential method in lockstep only where no row is printed: otherwise a
repetition's losses would depend on which other runs shared its steps
(``docs/surrogates-hyperband.md``, "Not done").

    python benchmarks/partner_bits.py                 # the CPU, one and two threads
    python benchmarks/partner_bits.py --device cuda   # a GPU (benchmarks/gpu_networks.sh)

Shapes: (rows, inputs, outputs) of seed 002's layers: a full minibatch (32) and the short last
one (MNIST-sized data: 10,000 rows leave 16; 7 for another size), the 784 inputs, widths of the
prior log U(18, 1024), 10 classes, and the digits' 64 inputs of the unit tests.
"""

from __future__ import annotations

import argparse
import itertools

import torch

from hpo.learners.network_settings import resolve_device

SHAPES = [
    (rows, inputs, outputs)
    for rows in (32, 16, 7)
    for inputs, outputs in ((784, 249), (249, 10), (784, 1024), (1024, 10), (64, 32), (64, 10))
]
SIZES = (2, 16, 81)  # members in the batch; the member is first or second


def _same_as_alone(
    kernel, shape: tuple[int, int, int], dtype: torch.dtype, device: str
) -> tuple[int, int]:
    """How many of the (M, position) placements give the member the bits it has alone, and of
    how many."""
    generator = torch.Generator(device="cpu").manual_seed(0)
    rows, inputs, outputs = shape
    largest = max(SIZES)

    def draw(*size: int) -> torch.Tensor:
        return torch.randn(*size, generator=generator, dtype=dtype).to(device)

    x, w, b, g = (
        draw(largest, rows, inputs),
        draw(largest, inputs, outputs),
        draw(largest, outputs),
        draw(largest, rows, outputs),
    )
    alone = kernel(x[:1], w[:1], b[:1], g[:1])
    placements = list(itertools.product(SIZES, (0, 1)))
    same = 0
    for size, position in placements:
        members = torch.arange(size, device=device).roll(position)  # the member is member 0
        batched = kernel(x[members], w[members], b[members], g[members])
        same += all(torch.equal(a[0], c[position]) for a, c in zip(alone, batched, strict=True))
    return same, len(placements)


def _matmuls(x, w, b, g) -> tuple[torch.Tensor, ...]:
    """The forward and the two backward products of a layer, as autograd computes them."""
    return (
        torch.baddbmm(b.unsqueeze(1), x, w),
        torch.bmm(x.transpose(1, 2), g),
        torch.bmm(g, w.transpose(1, 2)),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: PyTorch sees no GPU")
    resolve_device(args.device)  # on a GPU, cuBLAS's deterministic workspace, as the fits set it
    torch.use_deterministic_algorithms(True)  # as the fits run
    threads = (1, 2) if args.device == "cpu" else (torch.get_num_threads(),)
    print(
        f"torch {torch.__version__}, device {args.device}: a member's forward and backward "
        f"products at M in {SIZES}, first or second, against the same member alone"
    )
    print(f"{'rows':>4} {'in':>5} {'out':>5} {'dtype':>8} {'threads':>7} {'same bits':>9}")
    mixed = 0
    for shape, dtype, count in itertools.product(SHAPES, (torch.float32, torch.float64), threads):
        torch.set_num_threads(count)
        same, total = _same_as_alone(_matmuls, shape, dtype, args.device)
        if same < total:
            mixed += 1
            rows, inputs, outputs = shape
            name, cell = str(dtype).removeprefix("torch."), f"{same}/{total}"
            print(f"{rows:>4} {inputs:>5} {outputs:>5} {name:>8} {count:>7} {cell:>9}")
    cases = len(SHAPES) * 2 * len(threads)
    print(
        f"{mixed} of {cases} (shape, dtype, threads) rows give a member other bits than alone "
        "(the others, not printed, keep them at every placement)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
