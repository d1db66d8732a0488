"""A kernel written for torch tensors, called with numpy arrays: the conversion at its door.

``--arrays torch`` (or ``arrays = "torch"`` on the kernel or its function)
wraps the user's kernel in its own process in :class:`TorchArrays`: every
array argument becomes a torch tensor on the chosen device (float32 stays
float32, bfloat16 becomes ``torch.bfloat16`` bit for bit, uint8 codes stay
``torch.uint8``; a numpy scalar becomes a 0-d tensor), and every tensor the
kernel returns comes back as numpy: a float8 tensor as the ml_dtypes float8
array of its format, bfloat16 as ``ml_dtypes.bfloat16``, anything else as its own dtype. Nothing
is rounded on the way either way. A float8 tensor comes back as the ml_dtypes
array of its format (``float8_e4m3fn``, ``float8_e5m2``, ...), so a gate can
tell an e5m2 answer from an e4m3fn one; one ml_dtypes has no type for, as its
uint8 codes. torch is imported only here, only when asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ARRAYS", "DEVICES", "TorchArrays", "from_torch", "to_torch"]

ARRAYS = ("numpy", "torch", "triton")  # triton: torch tensors, Triton's interpreter on CPU
DEVICES = ("cpu", "cuda")


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ValueError("--arrays torch needs torch: pip install torch") from None
    return torch


def to_torch(value: Any, device: str) -> Any:
    """``value`` with each numpy array or scalar as a torch tensor on ``device``."""
    torch = _torch()
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value, order="C")  # a 0-d array stays 0-d
        if array.dtype.name == "bfloat16":
            tensor = torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
        else:
            tensor = torch.from_numpy(array.copy())
        return tensor.to(device)
    if isinstance(value, tuple | list):
        return type(value)(to_torch(v, device) for v in value)
    return value


def from_torch(value: Any) -> Any:
    """``value`` with each torch tensor as numpy: float8 as its ml_dtypes format, bfloat16 too."""
    torch = _torch()
    if isinstance(value, torch.Tensor):
        tensor = value.detach().to("cpu").contiguous()
        if tensor.dtype.is_floating_point and tensor.element_size() == 1:  # float8 of any kind
            import ml_dtypes

            codes = tensor.view(torch.uint8).numpy()
            kind = getattr(ml_dtypes, str(tensor.dtype).removeprefix("torch."), None)
            return codes.view(kind) if kind is not None else codes
        if tensor.dtype == torch.bfloat16:
            import ml_dtypes

            return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return tensor.numpy()
    if isinstance(value, tuple | list):
        return type(value)(from_torch(v) for v in value)
    return value


class TorchArrays:
    """``kernel`` called with torch tensors on ``device``; its methods and attributes kept.

    Raises:
        ValueError: if torch is missing, or ``device`` is not one torch has here.
    """

    def __init__(self, kernel: Any, device: str = "cpu") -> None:
        torch = _torch()
        if device not in DEVICES:
            raise ValueError(f"--device {device!r}: one of {', '.join(DEVICES)}")
        if device == "cuda" and not torch.cuda.is_available():
            raise ValueError("--device cuda: torch sees no CUDA device here")
        self._kernel, self._device = kernel, device
        for name in ("name", "nan_policy", "spec"):
            if hasattr(kernel, name):
                setattr(self, name, getattr(kernel, name))
        for method in ("quantize", "encode", "matmul", "trace"):
            if callable(getattr(kernel, method, None)):
                setattr(self, method, self._through(getattr(kernel, method)))

    def _through(self, func: Any) -> Any:
        def call(*args: Any) -> Any:
            return from_torch(func(*to_torch(args, self._device)))

        return call

    def __call__(self, *args: Any) -> Any:
        """The kernel called as a function, through the conversion."""
        return self._through(self._kernel)(*args)
