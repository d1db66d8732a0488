// An upstream-vLLM-style static quant on the host: the reciprocal formed once,
// the fminf/fmaxf clamp, then the CUDA header's conversion
// __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3) (cuda_fp8.hpp host path),
// exported through fp8lab's C ABI. fminf/fmaxf return the non-NaN operand, so
// NaN becomes +448 (code 0x7E): NaN policy `clamp-pos`.
//
// Build (CUDA headers from PyPI, no toolkit):
//   g++ -O2 -shared -fPIC -I<fp8lab>/abi -I<cuda include> upstream_quant.cpp -o libupstream_quant.so
// Planted defects, one -D switch each:
//   FP8LAB_DEFECT_DIVIDE    v = x / scale
//   FP8LAB_DEFECT_NOSAT     __NV_NOSAT: overflow past 464 gives NaN (0x7F)
#include <cmath>
#include <cstdint>
#include <cstring>

#include <cuda_fp8.h>

#include "fp8lab_kernel.h"

namespace {

float widen(const void *x, int32_t x_dtype, int64_t i) {
  if (x_dtype == FP8LAB_X_FLOAT32) return static_cast<const float *>(x)[i];
  const uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t *>(x)[i]) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

#ifdef FP8LAB_DEFECT_NOSAT
const __nv_saturation_t kSaturation = __NV_NOSAT;
#else
const __nv_saturation_t kSaturation = __NV_SATFINITE;
#endif

}  // namespace

extern "C" int32_t fp8lab_quant(const void *x, int32_t x_dtype, int64_t n, float scale,
                                uint8_t *out) {
  if (x_dtype != FP8LAB_X_FLOAT32 && x_dtype != FP8LAB_X_BFLOAT16) return 2;
  [[maybe_unused]] const float inv = 1.0f / scale;  // formed once
  for (int64_t i = 0; i < n; ++i) {
#ifdef FP8LAB_DEFECT_DIVIDE
    const float y = widen(x, x_dtype, i) / scale;
#else
    const float y = widen(x, x_dtype, i) * inv;
#endif
#ifdef FP8LAB_DEFECT_NOSAT
    const float v = y;  // no clamp either: the conversion alone decides overflow
#else
    const float v = std::fmax(-448.0f, std::fmin(y, 448.0f));
#endif
    out[i] = static_cast<uint8_t>(__nv_cvt_float_to_fp8(v, kSaturation, __NV_E4M3));
  }
  return 0;
}
