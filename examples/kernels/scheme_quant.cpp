// Dynamic and block-scaled fp8 quant in the style of the production kernels,
// exported through fp8lab's C ABI (fp8lab/abi/fp8lab_kernel.h, the
// fp8lab_scheme_quant signature) for gate GQ. One symbol per scale rule:
//
//   vllm_per_token_quant   vLLM dynamic_per_token_scaled_fp8_quant (common.cu):
//                          fmaxf row amax from 0, s = fmaxf(amax / 448, 1/(448*512)),
//                          y = x / s, fmaxf(-448, fminf(y, 448)), scales float32 [M]
//   vllm_per_group_quant   vLLM per_token_group_quant (per_token_group_quant.cu):
//                          fmaxf amax from eps = 1e-10 per 1x128 group, s = amax / 448,
//                          y = x / s, fminf(fmaxf(y, -448), 448), scales float32 [M, K/128]
//   mxfp8_rceil_quant      MXFP8 with NVIDIA's RCEIL (torchao _to_mx_rceil): NaN-propagating
//                          amax per block of 32, e8m0 byte of amax * (1/448) rounded up
//                          from its bits, y = x * 2^(127 - byte) from the bits, SATFINITE
//                          cast, NaN -> 0x7F; scales e8m0 bytes [M, K/32]
//
// The e4m3fn cast is the SATFINITE round-to-nearest-even conversion (finite
// values past 448 saturate to +-448, NaN to 0x7F), written on the bits.
//
// Build: g++ -O2 -shared -fPIC -I<fp8lab>/abi scheme_quant.cpp -o libscheme_quant.so
// Check: fp8lab gates --gate GQ --scheme per-token --rule vllm-per-token
//          --kernel ./libscheme_quant.so:vllm_per_token_quant
// Planted defects for fp8lab's meta tests, one -D switch each:
//   FP8LAB_DEFECT_RECIPROCAL   per-token and per-group: y = x * (1/s) instead of x / s
//   FP8LAB_DEFECT_BLOCK_31     mxfp8: the block amax reads 31 of its 32 elements
//   FP8LAB_DEFECT_E8M0_LOW     mxfp8: the e8m0 byte one step low (scale halved)
//   FP8LAB_DEFECT_NO_FLOOR     per-token: no 1/(448*512) floor (a zero row gives NaN)
//   FP8LAB_DEFECT_STATUS       every symbol returns 7 (a kernel error)
//   FP8LAB_DEFECT_SEGFAULT     every symbol writes through a null pointer
// -DFP8LAB_SCHEME_QUANT_IS=vllm_per_token_quant (or another symbol) also exports it as
// fp8lab_scheme_quant, the name examples/bundle_runner/run_bundle.cpp calls.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "fp8lab_kernel.h"

namespace {

constexpr float kMax = 448.0f;

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

float float_of(uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

float widen(const void *x, int32_t x_dtype, int64_t i) {
  if (x_dtype == FP8LAB_X_FLOAT32) return static_cast<const float *>(x)[i];
  return float_of(static_cast<uint32_t>(static_cast<const uint16_t *>(x)[i]) << 16);
}

// float32 -> e4m3fn, round to nearest even, SATFINITE; NaN -> 0x7F.
uint8_t to_e4m3fn(float v) {
  const uint32_t b = bits_of(v);
  const uint8_t sign = static_cast<uint8_t>((b >> 24) & 0x80);
  if (std::isnan(v)) return 0x7F;
  const uint32_t a = b & 0x7FFFFFFFu;
  if (a >= 0x43E00000u) return sign | 0x7E;  // |v| >= 448 (inf included): saturate
  const int exp = static_cast<int>(a >> 23) - 127;
  if (exp < -6) {  // e4m3 subnormal: units of 2^-9, RNE on the exact value
    const float units = float_of(a) * 512.0f;  // exact: a power-of-two scaling
    const float r = std::nearbyint(units);     // default mode: to nearest even
    return sign | static_cast<uint8_t>(r);     // 8 units is the smallest normal
  }
  // normal: keep 3 mantissa bits, RNE on the 20 dropped bits
  uint32_t mant = a & 0x7FFFFFu;
  uint32_t field = static_cast<uint32_t>(exp + 7);
  uint32_t kept = mant >> 20;
  const uint32_t rest = mant & 0xFFFFFu;
  if (rest > 0x80000u || (rest == 0x80000u && (kept & 1u))) ++kept;
  if (kept == 8u) {
    kept = 0;
    ++field;
  }
  if (field > 15u || (field == 15u && kept == 7u)) return sign | 0x7E;
  return sign | static_cast<uint8_t>((field << 3) | kept);
}

bool bad_dtype(int32_t x_dtype) {
  return x_dtype != FP8LAB_X_FLOAT32 && x_dtype != FP8LAB_X_BFLOAT16;
}

float apply(float v, float s) {
#ifdef FP8LAB_DEFECT_RECIPROCAL
  return v * (1.0f / s);
#else
  return v / s;
#endif
}

}  // namespace

#if defined(FP8LAB_DEFECT_STATUS)
#define FP8LAB_PROLOGUE return 7;
#elif defined(FP8LAB_DEFECT_SEGFAULT)
#define FP8LAB_PROLOGUE *static_cast<volatile uint8_t *>(nullptr) = 1;
#else
#define FP8LAB_PROLOGUE
#endif

extern "C" int32_t vllm_per_token_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                        uint8_t *codes, void *scales) {
  FP8LAB_PROLOGUE
  if (bad_dtype(x_dtype)) return 2;
  float *out_scales = static_cast<float *>(scales);
  for (int64_t r = 0; r < m; ++r) {
    float amax = 0.0f;
    for (int64_t c = 0; c < k; ++c) amax = fmaxf(amax, std::fabs(widen(x, x_dtype, r * k + c)));
#ifdef FP8LAB_DEFECT_NO_FLOOR
    const float s = amax / kMax;
#else
    const float s = fmaxf(amax / kMax, 1.0f / (kMax * 512.0f));
#endif
    out_scales[r] = s;
    for (int64_t c = 0; c < k; ++c) {
      const float y = apply(widen(x, x_dtype, r * k + c), s);
      codes[r * k + c] = to_e4m3fn(fmaxf(-kMax, fminf(y, kMax)));
    }
  }
  return 0;
}

extern "C" int32_t vllm_per_group_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                        uint8_t *codes, void *scales) {
  FP8LAB_PROLOGUE
  constexpr int64_t kGroup = 128;
  if (bad_dtype(x_dtype) || k % kGroup != 0) return 2;
  float *out_scales = static_cast<float *>(scales);
  for (int64_t g = 0; g < m * (k / kGroup); ++g) {
    const int64_t base = g * kGroup;
    float amax = 1e-10f;
    for (int64_t i = 0; i < kGroup; ++i) amax = fmaxf(amax, std::fabs(widen(x, x_dtype, base + i)));
    const float s = amax / kMax;
    out_scales[g] = s;
    for (int64_t i = 0; i < kGroup; ++i) {
      const float y = apply(widen(x, x_dtype, base + i), s);
      codes[base + i] = to_e4m3fn(fminf(fmaxf(y, -kMax), kMax));
    }
  }
  return 0;
}

extern "C" int32_t mxfp8_rceil_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                     uint8_t *codes, void *scales) {
  FP8LAB_PROLOGUE
  constexpr int64_t kBlock = 32;
  if (bad_dtype(x_dtype) || k % kBlock != 0) return 2;
  uint8_t *out_scales = static_cast<uint8_t *>(scales);
#ifdef FP8LAB_DEFECT_BLOCK_31
  constexpr int64_t kRead = kBlock - 1;
#else
  constexpr int64_t kRead = kBlock;
#endif
  const float inv_max = 1.0f / kMax;
  for (int64_t blk = 0; blk < m * (k / kBlock); ++blk) {
    const int64_t base = blk * kBlock;
    float amax = 0.0f;  // torch.amax: NaN propagates
    for (int64_t i = 0; i < kRead; ++i) {
      const float a = std::fabs(widen(x, x_dtype, base + i));
      amax = (std::isnan(a) || std::isnan(amax)) ? NAN : (a > amax ? a : amax);
    }
    const float d = amax * inv_max;
    const uint32_t b = bits_of(d);
    const uint32_t exp = (b >> 23) & 0xFFu, mant = b & 0x7FFFFFu;
    uint32_t byte = exp + (exp == 0 ? (mant > 0x400000u ? 1u : 0u) : (mant != 0 ? 1u : 0u));
    if (!std::isfinite(d)) byte = 255;
#ifdef FP8LAB_DEFECT_E8M0_LOW
    if (byte > 0 && byte < 255) --byte;
#endif
    out_scales[blk] = static_cast<uint8_t>(byte);
    // 2^(127 - byte) from the bits: 254 - byte as the exponent field
    const uint8_t rb = static_cast<uint8_t>(254u - byte);
    const uint32_t rbits = rb == 0 ? 0x00400000u : (rb == 255 ? 0x7F800001u : uint32_t{rb} << 23);
    const float recip = float_of(rbits);
    for (int64_t i = 0; i < kBlock; ++i) codes[base + i] = to_e4m3fn(widen(x, x_dtype, base + i) * recip);
  }
  return 0;
}

#ifdef FP8LAB_SCHEME_QUANT_IS
extern "C" int32_t fp8lab_scheme_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                       uint8_t *codes, void *scales) {
  return FP8LAB_SCHEME_QUANT_IS(x, x_dtype, m, k, codes, scales);
}
#endif
