// A vllm.cpp-style CPU static quant (QuantFp8Static + F32ToFp8), exported
// through fp8lab's C ABI (fp8lab/abi/fp8lab_kernel.h).
//
//   y = x * inv, inv = 1.0f / scale formed once; code = F32ToFp8(y)
//
// F32ToFp8 (vllm.cpp cpu_ops.cpp): NaN -> 0x7F with the sign
// dropped; |y| >= 448 or inf -> sign|0x7E; frexp, then nearbyint (RNE) of the
// significand; subnormals as nearbyint(|y| * 512) in double.
//
// Build: g++ -O2 -shared -fPIC -I<fp8lab>/abi vllm_cpp_quant.cpp -o libvllm_cpp_quant.so
// Planted defects for fp8lab's meta tests, one -D switch each:
//   FP8LAB_DEFECT_DIVIDE    y = x / scale (the seed's M2)
//   FP8LAB_DEFECT_TIES_AWAY round half away from zero instead of to even
//   FP8LAB_DEFECT_NAN_448   NaN -> 0x7E
//   FP8LAB_DEFECT_STATUS    returns 7 (a kernel error)
//   FP8LAB_DEFECT_SEGFAULT  writes through a null pointer
//   FP8LAB_DEFECT_ABORT     calls abort()
//   FP8LAB_DEFECT_SKIP_ZERO never stores a zero code (the right codes, if out starts zeroed)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fp8lab_kernel.h"

namespace {

#ifdef FP8LAB_DEFECT_TIES_AWAY
double round_int(double v) { return std::round(v); }
#else
double round_int(double v) { return std::nearbyint(v); }  // default mode: to nearest even
#endif

uint8_t f32_to_fp8(float x) {
#ifdef FP8LAB_DEFECT_NAN_448
  if (std::isnan(x)) return 0x7E;
#else
  if (std::isnan(x)) return 0x7F;
#endif
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float a = std::fabs(x);
  if (!std::isfinite(a) || a >= 448.0f) return sign | 0x7E;
  if (a == 0.0f) return sign;
  int e = 0;
  const float frac = std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1)
  int field = e + 6;
  if (field <= 0) return sign | static_cast<uint8_t>(round_int(static_cast<double>(a) * 512.0));
  int mant = static_cast<int>(round_int(2.0f * frac * 8.0f));  // in [8, 16]
  if (mant == 16) {
    mant = 8;
    field += 1;
  }
  mant -= 8;
  if (field > 15 || (field == 15 && mant >= 7)) return sign | 0x7E;
  return sign | static_cast<uint8_t>((field << 3) | mant);
}

float widen(const void *x, int32_t x_dtype, int64_t i) {
  if (x_dtype == FP8LAB_X_FLOAT32) return static_cast<const float *>(x)[i];
  const uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t *>(x)[i]) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

extern "C" int32_t fp8lab_quant(const void *x, int32_t x_dtype, int64_t n, float scale,
                                uint8_t *out) {
#ifdef FP8LAB_DEFECT_STATUS
  return 7;
#endif
#ifdef FP8LAB_DEFECT_SEGFAULT
  *static_cast<volatile uint8_t *>(nullptr) = 1;
#endif
#ifdef FP8LAB_DEFECT_ABORT
  std::abort();
#endif
  if (x_dtype != FP8LAB_X_FLOAT32 && x_dtype != FP8LAB_X_BFLOAT16) return 2;
#ifdef FP8LAB_DEFECT_DIVIDE
  for (int64_t i = 0; i < n; ++i) out[i] = f32_to_fp8(widen(x, x_dtype, i) / scale);
#else
  const float inv = 1.0f / scale;  // formed once
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t code = f32_to_fp8(widen(x, x_dtype, i) * inv);
#ifdef FP8LAB_DEFECT_SKIP_ZERO
    if (code == 0) continue;
#endif
    out[i] = code;
  }
#endif
  return 0;
}
