/* fp8lab CUDA arm, host build: the same math through cuda_fp8.hpp's host
 * conversion, exporting the fp8lab C ABI (fp8lab/abi/fp8lab_kernel.h).
 * Built by g++ -x c++ (fp8lab.cuda.host_build), never by nvcc. */
#include "fp8lab_cuda.cuh"

#include "fp8lab_kernel.h"

extern "C" {

int32_t fp8lab_quant(const void *x, int32_t x_dtype, int64_t n, float scale, uint8_t *out) {
    if (x_dtype != FP8LAB_X_FLOAT32 && x_dtype != FP8LAB_X_BFLOAT16) return 1;
    if (n < 0) return 2;
    const float inv = 1.0f / scale; /* the reciprocal, formed once */
    for (int64_t i = 0; i < n; ++i) out[i] = fp8lab_quant_one(fp8lab_load(x, x_dtype, i), scale, inv);
    return 0;
}

static int32_t fp8lab_matmul_impl(const uint8_t *a, const uint8_t *b, int64_t m, int64_t n,
                                  int64_t k, float s_in, float s_w, int32_t out_dtype,
                                  int two_scalar, void *out) {
    if (out_dtype != FP8LAB_OUT_FLOAT32 && out_dtype != FP8LAB_OUT_BFLOAT16) return 1;
    if (m < 0 || n < 0 || k < 0) return 2;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            float y = fp8lab_gemm_one(a, b, i, j, k, s_in, s_w, two_scalar);
            if (out_dtype == FP8LAB_OUT_BFLOAT16) {
                ((uint16_t *)out)[i * n + j] = fp8lab_bf16_bits(y);
            } else {
                ((float *)out)[i * n + j] = y;
            }
        }
    }
    return 0;
}

/* Folded alpha = f32(s_in*s_w) (vllm.cpp's epilogue). */
int32_t fp8lab_matmul(const uint8_t *a, const uint8_t *b, int64_t m, int64_t n, int64_t k,
                      float s_in, float s_w, int32_t out_dtype, void *out) {
    return fp8lab_matmul_impl(a, b, m, n, k, s_in, s_w, out_dtype, 0, out);
}

/* Two scalars, s_in * f32(s_w * acc) (upstream vLLM); same signature. */
int32_t fp8lab_matmul_two_scalar(const uint8_t *a, const uint8_t *b, int64_t m, int64_t n,
                                 int64_t k, float s_in, float s_w, int32_t out_dtype, void *out) {
    return fp8lab_matmul_impl(a, b, m, n, k, s_in, s_w, out_dtype, 1, out);
}

/* Every float32 pattern in [start, start + n): out[i] = code of pattern start + i. */
int32_t fp8lab_encode_e4m3fn_range(uint64_t start, int64_t n, uint8_t *out) {
    if (n < 0 || start + (uint64_t)n > (1ULL << 32)) return 2;
    for (int64_t i = 0; i < n; ++i) out[i] = fp8lab_cvt_e4m3(fp8lab_bits_f32((uint32_t)(start + i)));
    return 0;
}

int32_t fp8lab_encode_e5m2_range(uint64_t start, int64_t n, uint8_t *out) {
    if (n < 0 || start + (uint64_t)n > (1ULL << 32)) return 2;
    for (int64_t i = 0; i < n; ++i) out[i] = fp8lab_cvt_e5m2(fp8lab_bits_f32((uint32_t)(start + i)));
    return 0;
}

}  /* extern "C" */
