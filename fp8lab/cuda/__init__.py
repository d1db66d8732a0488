"""The CUDA arm: CUDA C sources with a device build (cupy) and a host build (g++).

See ``fp8lab_cuda.cuh`` for the shared math and the conversion facts
Importing this package needs only numpy and
ml_dtypes; cupy is imported by module name when the device is probed.
"""

from fp8lab.cuda.facts import CONVERSION_FACTS, ConversionFact, check_conversion_facts
from fp8lab.cuda.host_build import (
    HEADER_WHEELS,
    SOURCES,
    CudaHostBuildError,
    build_cuda_host,
    cuda_include_dirs,
    source_text,
)
from fp8lab.cuda.host_kernel import (
    CUDA_HOST,
    CudaHostEncoder,
    cuda_host_encoder,
    cuda_host_kernel,
    cuda_host_matmul_kernel,
)
from fp8lab.cuda.marshal import QuantArgs, quant_args

__all__ = [
    "CONVERSION_FACTS",
    "CUDA_HOST",
    "HEADER_WHEELS",
    "SOURCES",
    "ConversionFact",
    "CudaHostBuildError",
    "CudaHostEncoder",
    "QuantArgs",
    "build_cuda_host",
    "check_conversion_facts",
    "cuda_host_encoder",
    "cuda_host_kernel",
    "cuda_host_matmul_kernel",
    "cuda_include_dirs",
    "quant_args",
    "source_text",
]
