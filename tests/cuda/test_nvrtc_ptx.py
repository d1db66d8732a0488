"""Without a device, NVRTC from PyPI compiles the device source to PTX.

For sm_89 and later the PTX must hold the conversion the device runs,
``cvt.rn.satfinite.e4m3x2.f32``; below sm_89 the source refuses to compile.
The wheel (``nvidia-cuda-nvrtc``) is in the ``test`` extra, so CI runs this.
"""

from __future__ import annotations

import pytest

from fp8lab.cuda.nvrtc import NvrtcError, compile_ptx

pytestmark = pytest.mark.process

CVT = "cvt.rn.satfinite.e4m3x2.f32"
CVT_E5M2 = "cvt.rn.satfinite.e5m2x2.f32"


@pytest.mark.parametrize("arch", ["compute_89", "compute_90", "compute_100"])
def test_the_ptx_for_sm89_and_later_holds_the_satfinite_conversion(arch: str) -> None:
    ptx = compile_ptx(arch)
    assert ".entry" in ptx and CVT in ptx and CVT_E5M2 in ptx


def test_below_sm89_the_device_source_refuses_to_compile() -> None:
    with pytest.raises(NvrtcError, match="sm_89"):
        compile_ptx("compute_80")


def test_a_source_without_the_instruction_is_seen() -> None:
    plain = 'extern "C" __global__ void k(float *x) { x[0] = x[0] * 2.0f; }'
    assert CVT not in compile_ptx("compute_90", source=plain)
