// A C++ fp8 GEMM that follows the vllm.cpp CPU reference (MatmulFp8),
// exported through fp8lab's C ABI (fp8lab/abi/fp8lab_kernel.h).
//
//   acc[i,j] = sum over k, in k order, of decode(a[i,k]) * decode(b[j,k]) (float32)
//   alpha = float32(s_in * s_w); out = float32(alpha * acc), then bf16 by RNE if asked
//
// Build: g++ -O2 -shared -fPIC -I<fp8lab>/abi vllm_cpp_gemm.cpp -o libvllm_cpp_gemm.so
// (no -ffast-math, no -ffp-contract=fast: each product and sum is rounded on its own).
// Planted defects, one -D switch each:
//   FP8LAB_DEFECT_TWO_SCALAR  out = s_in * (s_w * acc) instead of folded alpha
//   FP8LAB_DEFECT_NO_ALPHA    out = acc (the seed's M5a)
//   FP8LAB_DEFECT_REVERSE_K   sums k from K-1 down to 0
//   FP8LAB_DEFECT_SKIP_LAST   never stores the last output element
#include <cmath>
#include <cstdint>
#include <cstring>

#include "fp8lab_kernel.h"

namespace {

float decode_e4m3fn(uint8_t code) {
  const int exponent = (code >> 3) & 0xF;
  const int mantissa = code & 0x7;
  float magnitude;
  if (exponent == 0xF && mantissa == 0x7) {
    magnitude = NAN;
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);  // subnormal: m * 2^-9
  } else {
    magnitude = std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
  }
  return (code & 0x80) ? -magnitude : magnitude;
}

uint16_t to_bf16_bits(float v) {  // round to nearest even; NaN stays NaN
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if (std::isnan(v)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

}  // namespace

extern "C" int32_t fp8lab_matmul(const uint8_t *a, const uint8_t *b, int64_t m, int64_t n,
                                 int64_t k, float s_in, float s_w, int32_t out_dtype,
                                 void *out) {
  if (out_dtype != FP8LAB_OUT_FLOAT32 && out_dtype != FP8LAB_OUT_BFLOAT16) return 2;
  volatile float alpha_store = s_in * s_w;  // one float32 rounding
  [[maybe_unused]] const float alpha = alpha_store;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
#ifdef FP8LAB_DEFECT_REVERSE_K
      for (int64_t kk = k - 1; kk >= 0; --kk) {
#else
      for (int64_t kk = 0; kk < k; ++kk) {
#endif
        const float product = decode_e4m3fn(a[i * k + kk]) * decode_e4m3fn(b[j * k + kk]);
        acc = acc + product;
      }
#if defined(FP8LAB_DEFECT_NO_ALPHA)
      const float value = acc;
#elif defined(FP8LAB_DEFECT_TWO_SCALAR)
      const float value = s_in * (s_w * acc);
#else
      const float value = alpha * acc;
#endif
#ifdef FP8LAB_DEFECT_SKIP_LAST
      if (i == m - 1 && j == n - 1) continue;
#endif
      if (out_dtype == FP8LAB_OUT_FLOAT32) {
        static_cast<float *>(out)[i * n + j] = value;
      } else {
        static_cast<uint16_t *>(out)[i * n + j] = to_bf16_bits(value);
      }
    }
  }
  return 0;
}
