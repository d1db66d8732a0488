/* fp8lab CUDA arm, device build: grid-stride kernels for cupy.RawModule. */
#include "fp8lab_cuda.cuh"

extern "C" __global__ void fp8lab_quant_kernel(const void *x, int x_dtype, long long n,
                                               float scale, unsigned char *out) {
    const float inv = 1.0f / scale; /* the reciprocal, formed once */
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        out[i] = fp8lab_quant_one(fp8lab_load(x, x_dtype, i), scale, inv);
    }
}

/* Every float32 pattern in [start, start + n): out[i] = code of pattern start + i. */
extern "C" __global__ void fp8lab_encode_e4m3fn_range(unsigned long long start, long long n,
                                                      unsigned char *out) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        out[i] = fp8lab_cvt_e4m3(fp8lab_bits_f32((unsigned int)(start + i)));
    }
}

extern "C" __global__ void fp8lab_encode_e5m2_range(unsigned long long start, long long n,
                                                    unsigned char *out) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        out[i] = fp8lab_cvt_e5m2(fp8lab_bits_f32((unsigned int)(start + i)));
    }
}

/* out_dtype 0: float32; 1: bfloat16 bits. One thread per output. */
extern "C" __global__ void fp8lab_matmul_kernel(const unsigned char *a, const unsigned char *b,
                                                long long m, long long n, long long k, float s_in,
                                                float s_w, int out_dtype, int two_scalar,
                                                void *out) {
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < m * n;
         idx += (long long)gridDim.x * blockDim.x) {
        float y = fp8lab_gemm_one(a, b, idx / n, idx % n, k, s_in, s_w, two_scalar);
        if (out_dtype == 1) {
            ((unsigned short *)out)[idx] = fp8lab_bf16_bits(y);
        } else {
            ((float *)out)[idx] = y;
        }
    }
}
