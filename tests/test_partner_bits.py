"""benchmarks/partner_bits.py: the placements it compares are the member's own rows (a planted
mix-up of members makes every cell differ), and its CLI refuses a device PyTorch cannot see."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from benchmarks import partner_bits  # noqa: E402


def test_a_member_keeps_its_bits_in_a_large_regular_shape_and_not_when_mixed_up() -> None:
    shape, dtype = (32, 64, 32), torch.float64
    torch.set_num_threads(1)
    assert partner_bits._same_as_alone(partner_bits._matmuls, shape, dtype, "cpu") == "6/6"

    def swapped(x, w, b, g):  # the products of another member: never the lone member's bits
        return partner_bits._matmuls(x.flip(0), w.flip(0), b.flip(0), g.flip(0))

    assert partner_bits._same_as_alone(swapped, shape, dtype, "cpu") == "0/6"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_cuda_without_a_gpu_is_one_line_and_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        partner_bits.main(["--device", "cuda"])
    assert stopped.value.code == 2
    assert "PyTorch sees no GPU" in capsys.readouterr().err
