import os

import numpy as np
import pytest

from fp8lab.runtime.guard import (
    KernelFaultError,
    call_kernel,
    call_sealed,
    private_readonly,
    sealed_copy,
)


def test_kernel_writing_into_its_input_gets_a_clear_error_and_changes_nothing():
    x = np.arange(4, dtype=np.float32)

    def clips_in_place(a):
        np.clip(a, 0, 1, out=a)
        return a

    with pytest.raises(KernelFaultError, match="read-only"):
        call_kernel(clips_in_place, x)
    assert x.tolist() == [0, 1, 2, 3]


def test_kernel_that_reenables_writes_touches_only_its_private_copy():
    x = np.arange(4, dtype=np.float32)

    def sneaky(a):
        a.setflags(write=True)
        a[:] = 0
        return a

    call_kernel(sneaky, x)
    assert x.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "exc", [SystemExit(0), SystemExit(3), RuntimeError("boom"), GeneratorExit()]
)
def test_any_base_exception_becomes_a_fault(exc):
    def raises(_):
        raise exc

    with pytest.raises(KernelFaultError) as info:
        call_kernel(raises, np.zeros(1))
    assert type(exc).__name__ in info.value.reason


def test_keyboard_interrupt_passes_through():
    def interrupted(_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        call_kernel(interrupted, np.zeros(1))


def test_non_arrays_pass_unchanged():
    assert private_readonly(0.5) == 0.5
    assert private_readonly(os) is os


def test_a_sealed_copy_refuses_writes_and_cannot_be_made_writable():
    x = np.arange(4, dtype=np.float32)
    sealed = sealed_copy(x)

    def sneaky(a):
        a.setflags(write=True)
        a[:] = 0
        return a

    with pytest.raises(KernelFaultError, match="WRITEABLE"):
        call_sealed(sneaky, sealed)
    assert sealed.tolist() == [0, 1, 2, 3] and not np.shares_memory(sealed, x)
