"""benchmarks/partner_bits.py: the placements it compares are the member's own rows (an
elementwise kernel keeps every bit, a planted mix-up of members makes every placement differ),
its products are those autograd computes for a batched layer, and its CLI refuses a device
PyTorch cannot see. Nothing here depends on the BLAS: whether a BLAS keeps a member's bits is
what the benchmark measures, not what the suite asserts."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from benchmarks import partner_bits  # noqa: E402

SHAPE = (7, 64, 10)


def test_the_member_alone_is_compared_with_its_own_rows_at_every_placement() -> None:
    def doubled(x, w, b, g):  # elementwise: the same bits wherever the member stands
        return (x * 2.0, w * 2.0)

    placements = len(partner_bits.SIZES) * 2
    assert partner_bits._same_as_alone(doubled, SHAPE, torch.float64, "cpu") == (
        placements,
        placements,
    )

    def swapped(x, w, b, g):  # another member's values: never the lone member's bits
        return doubled(x.flip(0), w.flip(0), b.flip(0), g.flip(0))

    assert partner_bits._same_as_alone(swapped, SHAPE, torch.float64, "cpu") == (0, placements)


def test_the_products_are_those_of_a_batched_layer_and_its_backward() -> None:
    generator = torch.Generator().manual_seed(1)
    rows, inputs, outputs = SHAPE
    x, w, g = (
        torch.randn(3, *size, generator=generator, dtype=torch.float64)
        for size in ((rows, inputs), (inputs, outputs), (rows, outputs))
    )
    b = torch.randn(3, outputs, generator=generator, dtype=torch.float64)
    leaves = [t.clone().requires_grad_(True) for t in (x, w, b)]
    forward = leaves[2].unsqueeze(1) + leaves[0] @ leaves[1]
    grad_x, grad_w = torch.autograd.grad(forward, leaves[:2], g)
    out, weights_gradient, inputs_gradient = partner_bits._matmuls(x, w, b, g)
    for ours, reference in ((out, forward), (weights_gradient, grad_w), (inputs_gradient, grad_x)):
        torch.testing.assert_close(ours, reference.detach(), rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_cuda_without_a_gpu_is_one_line_and_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        partner_bits.main(["--device", "cuda"])
    assert stopped.value.code == 2
    assert "PyTorch sees no GPU" in capsys.readouterr().err
