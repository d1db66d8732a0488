/* fp8lab CUDA arm: the math shared by the device build (cupy, NVRTC) and the
 * host build (g++ against the CUDA headers from PyPI). One source, two builds.
 *
 * Conversion (cuda_fp8.hpp __nv_cvt_float_to_fp8):
 *   device, sm_89+, SATFINITE: the header emits
 *     cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1   (x in %1, 0.0f in %2, result in the low byte);
 *   host: NaN -> canonical +NaN (0x7FFFFFFF), widened to double, then
 *     __nv_cvt_double_to_fp8 (so every float NaN gives 0x7F).
 * The device build emits that same instruction by inline PTX and does not
 * include the header (it is fragile under NVRTC); define
 * FP8LAB_DEVICE_USE_HEADER to call the header on the device instead.
 *
 * Planted defects, for the meta tests only: FP8LAB_PLANT_DIVIDE divides by
 * the scale instead of multiplying by the reciprocal formed once;
 * FP8LAB_PLANT_NO_CLAMP drops the fminf/fmaxf clamp.
 */
#ifndef FP8LAB_CUDA_CUH
#define FP8LAB_CUDA_CUH

#if defined(__CUDACC__)
#define FP8LAB_FN static __device__ __forceinline__
#else
#define FP8LAB_FN static inline
#include <math.h>
#include <string.h>
#endif

#if !defined(__CUDA_ARCH__) || defined(FP8LAB_DEVICE_USE_HEADER)
#include <cuda_fp8.h>
#define FP8LAB_VIA_HEADER 1
#elif __CUDA_ARCH__ < 890
#error "fp8lab device encoders need sm_89+ (cvt.rn.satfinite.e4m3x2.f32)"
#endif

#define FP8LAB_E4M3_MAX 448.0f

FP8LAB_FN unsigned int fp8lab_f32_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    unsigned int u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

FP8LAB_FN float fp8lab_bits_f32(unsigned int u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* float -> e4m3fn code, round to nearest even, SATFINITE. */
FP8LAB_FN unsigned char fp8lab_cvt_e4m3(float x) {
#if defined(FP8LAB_VIA_HEADER)
    return (unsigned char)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
#else
    unsigned short pair;
    asm("{cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;}\n" : "=h"(pair) : "f"(x), "f"(0.0f));
    return (unsigned char)(pair & 0xFFu);
#endif
}

/* float -> e5m2 code, round to nearest even, SATFINITE. */
FP8LAB_FN unsigned char fp8lab_cvt_e5m2(float x) {
#if defined(FP8LAB_VIA_HEADER)
#if defined(FP8LAB_PLANT_E5M2_NOSAT)
    return (unsigned char)__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2);
#else
    return (unsigned char)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
#endif
#else
    unsigned short pair;
    asm("{cvt.rn.satfinite.e5m2x2.f32 %0, %2, %1;}\n" : "=h"(pair) : "f"(x), "f"(0.0f));
    return (unsigned char)(pair & 0xFFu);
#endif
}

/* x_dtype 0: float32 bits; 1: bfloat16 bits (the top half of a float32). */
FP8LAB_FN float fp8lab_load(const void *x, int x_dtype, long long i) {
    if (x_dtype == 1) {
        return fp8lab_bits_f32((unsigned int)((const unsigned short *)x)[i] << 16);
    }
    return fp8lab_bits_f32(((const unsigned int *)x)[i]);
}

/* Upstream vLLM static quant (common.cuh): y = x * inv, clamp, convert. */
FP8LAB_FN unsigned char fp8lab_quant_one(float x, float scale, float inv) {
#if defined(FP8LAB_PLANT_DIVIDE)
    float y = x / scale;
#else
    float y = x * inv;
    (void)scale;
#endif
#if !defined(FP8LAB_PLANT_NO_CLAMP)
    y = fmaxf(-FP8LAB_E4M3_MAX, fminf(y, FP8LAB_E4M3_MAX));
#endif
    return fp8lab_cvt_e4m3(y);
}

/* e4m3fn code -> float, exactly, from the fields (bias 7; 0x7F/0xFF NaN). */
FP8LAB_FN float fp8lab_decode_e4m3(unsigned char c) {
    unsigned int sign = (unsigned int)(c & 0x80u) << 24;
    unsigned int e = (c >> 3) & 0xFu;
    unsigned int m = c & 0x7u;
    if (e == 0xFu && m == 0x7u) {
        return fp8lab_bits_f32(sign | 0x7FC00000u);
    }
    if (e == 0u) {
        float v = (float)m * 0.001953125f; /* m * 2^-9, exact */
        return sign ? -v : v;
    }
    return fp8lab_bits_f32(sign | ((e - 7u + 127u) << 23) | (m << 20));
}

/* float -> bfloat16 bits: integer RNE; NaN -> 0x7FC0 with its sign. */
FP8LAB_FN unsigned short fp8lab_bf16_bits(float y) {
    unsigned int u = fp8lab_f32_bits(y);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
        return (unsigned short)(((u >> 16) & 0x8000u) | 0x7FC0u);
    }
    unsigned long long w = (unsigned long long)u + 0x7FFFu + ((u >> 16) & 1u);
    return (unsigned short)(w >> 16);
}

/* One output of A·Bᵀ: decode, f32 accumulation in k order, then the epilogue:
 * two_scalar 0 folds alpha = f32(s_in*s_w) into alpha*acc (vllm.cpp);
 * two_scalar 1 is s_in * f32(s_w * acc) (upstream vLLM). Each product of two
 * e4m3fn values is exact in float32, so fused and unfused adds agree. */
FP8LAB_FN float fp8lab_gemm_one(const unsigned char *a, const unsigned char *b, long long i,
                                long long j, long long k, float s_in, float s_w, int two_scalar) {
    float acc = 0.0f;
    for (long long s = 0; s < k; ++s) {
#if defined(FP8LAB_PLANT_GEMM_REVERSED_K)
        long long t = k - 1 - s;
#else
        long long t = s;
#endif
        acc = acc + fp8lab_decode_e4m3(a[i * k + t]) * fp8lab_decode_e4m3(b[j * k + t]);
    }
    if (two_scalar) {
        float inner = s_w * acc;
        return s_in * inner;
    }
    float alpha = s_in * s_w;
    return alpha * acc;
}

#endif /* FP8LAB_CUDA_CUH */
