/* fp8lab kernel C ABI, version 1: the signatures a shared-library kernel exports.
 *
 * fp8lab loads a library with ctypes and looks a symbol up by the name the
 * user gives (`--kernel path/libx.so:symbol`); the gate fixes the signature.
 * Every function returns 0 on success; any other value is a kernel error that
 * fails the case with that value as its reason. Arrays are contiguous,
 * little-endian, and owned by the caller; a kernel must not keep pointers.
 */
#ifndef FP8LAB_KERNEL_H
#define FP8LAB_KERNEL_H

#include <stdint.h>

#define FP8LAB_ABI_VERSION 1

/* x_dtype values */
#define FP8LAB_X_FLOAT32 0
#define FP8LAB_X_BFLOAT16 1 /* uint16 bit patterns */

/* out_dtype values */
#define FP8LAB_OUT_FLOAT32 0
#define FP8LAB_OUT_BFLOAT16 1 /* uint16 bit patterns */

#ifdef __cplusplus
extern "C" {
#endif

/* Static per-tensor quant: x holds n values of x_dtype; write n e4m3fn codes
 * to out, quantized with the per-tensor scale `scale`: G1 holds the kernel to
 * e4m3fn(clamp(x * (1/scale), -448, 448)), the reciprocal formed once in float32,
 * the product in float32, rounded to nearest even. Returns 0 on success. */
typedef int32_t (*fp8lab_quant_fn)(const void *x, int32_t x_dtype, int64_t n, float scale,
                                   uint8_t *out);
int32_t fp8lab_quant(const void *x, int32_t x_dtype, int64_t n, float scale, uint8_t *out);

/* fp8 GEMM: a is [m,k] and b is [n,k] e4m3fn codes, row-major (K contiguous);
 * the product is A·Bᵀ scaled by s_in·s_w. out is [m,n] row-major, float32 or
 * bfloat16 bits as out_dtype says. Returns 0 on success. */
typedef int32_t (*fp8lab_matmul_fn)(const uint8_t *a, const uint8_t *b, int64_t m, int64_t n,
                                    int64_t k, float s_in, float s_w, int32_t out_dtype,
                                    void *out);
int32_t fp8lab_matmul(const uint8_t *a, const uint8_t *b, int64_t m, int64_t n, int64_t k,
                      float s_in, float s_w, int32_t out_dtype, void *out);

/* Scheme quant for gate GQ (added in version 1; the two functions above are
 * unchanged). x is [m,k] row-major (K contiguous) of x_dtype. Write m*k codes
 * to `codes` (row-major) and the scales to `scales`, laid out by the scheme
 * the gate names with --scheme (the library does not learn it):
 *   per-tensor  float32 [1]
 *   per-token   float32 [m]
 *   per-group   float32 [m, k/128]
 *   mxfp8       uint8   [m, k/32]  e8m0 bytes
 * e4m3fn codes for these four. The kernel computes the scales itself (dynamic
 * quant). Every output element must be written: fp8lab calls twice with the
 * outputs pre-filled with different bytes and fails the case if they differ.
 * Returns 0 on success. */
typedef int32_t (*fp8lab_scheme_quant_fn)(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                          uint8_t *codes, void *scales);
int32_t fp8lab_scheme_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                            uint8_t *codes, void *scales);

/* NVFP4 for gate GQ (--scheme nvfp4): as fp8lab_scheme_quant, plus the
 * tensor's global amax (GQ's `global_scale`, from which TransformerEngine
 * derives S_enc = 448*6 / global_amax). codes: m*k e2m1fn codes, one per byte
 * in the low nibble (high nibble 0); scales: uint8 [m, k/16] e4m3fn bytes.
 * Returns 0 on success. */
typedef int32_t (*fp8lab_nvfp4_quant_fn)(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                         float global_amax, uint8_t *codes, uint8_t *scales);
int32_t fp8lab_nvfp4_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                           float global_amax, uint8_t *codes, uint8_t *scales);

#ifdef __cplusplus
}
#endif

#endif /* FP8LAB_KERNEL_H */
