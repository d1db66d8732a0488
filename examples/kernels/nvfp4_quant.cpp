// NVFP4 quant (1x16 blocks, rowwise) in the style of TransformerEngine's kernels,
// exported through fp8lab's C ABI (fp8lab/abi/fp8lab_kernel.h, the
// fp8lab_nvfp4_quant signature) for gate GQ --scheme nvfp4. One symbol per rule
// (fp8lab/schemes/nvfp4_rules.py names TE's file, function and commit of each):
//
//   te_nvfp4_divide_quant      te-nvfp4-divide: quantize_transpose_nvfp4.cuh (433b1dbc)
//                              S_dec_b = e4m3(fminf(block_amax / 6.0f * S_enc, FLT_MAX)),
//                              S_dec = 1.0 / S_enc (a double quotient, stored as float),
//                              y = x * fminf(1.0f / (float(S_dec_b) * S_dec), FLT_MAX)
//   te_nvfp4_reciprocal_quant  te-nvfp4-reciprocal: quantize_nvfp4.cuh (433b1dbc)
//                              S_dec_b = e4m3(block_amax * rcp_6f * S_enc), no clamp,
//                              y = x * (S_enc / float(S_dec_b)), no clamp (__fdiv_rn)
//   te_nvfp4_fused_quant       te-nvfp4-fused: quantize_transpose_nvfp4_tuned_1D.cuh (523801df7)
//                              S_dec_b = e4m3(fminf(block_amax * (S_enc * fp4_max_inv), FLT_MAX)),
//                              S_dec = 1.0f / S_enc, y as te_nvfp4_divide_quant
//
// All three: block_amax = fmaxf(block_amax, fabsf(x)) from 0 (NaN skipped);
// S_enc = fminf(448 * 6 / global_amax, FLT_MAX), 1 when global_amax or S_enc is 0
// (core_nvfp4.cuh compute_global_encode_scaling_factor_FP4); the e4m3 cast of the
// block value is SATFINITE round-to-nearest-even (__nv_fp8_e4m3); the element cast
// is cvt.rn.satfinite.e2m1x2.f32: round to nearest even, finite past 6 saturates
// to +-6, NaN codes +6 (0x7). codes: one e2m1 code per byte, low nibble;
// scales: e4m3fn bytes [M, K/16]. Every operation is one float32 rounding: build
// with -ffp-contract=off so no compiler fuses a product into a sum.
//
// Build: g++ -O2 -ffp-contract=off -shared -fPIC -I<fp8lab>/abi nvfp4_quant.cpp -o libnvfp4_quant.so
// Check: fp8lab gates --gate GQ --scheme nvfp4 --rule te-nvfp4-divide
//          --kernel ./libnvfp4_quant.so:te_nvfp4_divide_quant
// Planted defects for fp8lab's meta tests, one -D switch each:
//   FP8LAB_DEFECT_TRUNC_SCALE       every symbol: the e4m3 block byte truncated, not rounded
//   FP8LAB_DEFECT_RECIPROCAL_BLOCK  te_nvfp4_divide_quant: block value block_amax * (1/6) * S_enc
//   FP8LAB_DEFECT_E2M1_AWAY         every symbol: e2m1 ties round away from zero
//   FP8LAB_DEFECT_NO_INV_CLAMP      divide and fused: element multiplier without fminf(., FLT_MAX)
// -DFP8LAB_NVFP4_QUANT_IS=te_nvfp4_divide_quant (or another symbol) also exports it as
// fp8lab_nvfp4_quant, the name examples/bundle_runner/run_bundle.cpp calls.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "fp8lab_kernel.h"

namespace {

constexpr int64_t kBlock = 16;
constexpr float kFp8Max = 448.0f;
constexpr float kFp4Max = 6.0f;

float element(const void *x, int32_t x_dtype, int64_t i) {
  if (x_dtype == FP8LAB_X_FLOAT32) return static_cast<const float *>(x)[i];
  const uint32_t b = static_cast<uint32_t>(static_cast<const uint16_t *>(x)[i]) << 16;
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// float32 -> e4m3fn byte, SATFINITE, round to nearest even; NaN -> 0x7F.
uint8_t e4m3_satfinite(float v) {
  if (std::isnan(v)) return 0x7F;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  const float a = std::fabs(v);
  if (a >= kFp8Max) return sign | 0x7E;  // 448 and beyond (inf too) saturate
  if (a == 0.0f) return sign;
  int e2;
  std::frexp(a, &e2);                          // a = f * 2^e2, f in [0.5, 1)
  int exp = e2 - 1 < -6 ? -6 : e2 - 1;         // e4m3 exponent, subnormals at -6
  const float units = std::ldexp(a, 3 - exp);  // exact: a in units of 2^(exp-3)
#ifdef FP8LAB_DEFECT_TRUNC_SCALE
  int n = static_cast<int>(std::trunc(units));
#else
  int n = static_cast<int>(std::nearbyint(units));  // default mode: to nearest even
#endif
  if (n == 16) {  // rounded up into the next binade
    n = 8;
    ++exp;
  }
  if (n < 8) return sign | static_cast<uint8_t>(n);  // subnormal (exp == -6)
  return sign | static_cast<uint8_t>(((exp + 7) << 3) | (n - 8));
}

float e4m3_value(uint8_t byte) {
  const int e = (byte >> 3) & 0xF, m = byte & 0x7;
  const float mag = e == 0 ? std::ldexp(static_cast<float>(m), -9)
                           : std::ldexp(static_cast<float>(8 + m), e - 10);
  return (byte & 0x80) ? -mag : mag;
}

// float32 -> e2m1 code (cvt.rn.satfinite.e2m1x2.f32): grid 0 .5 1 1.5 2 3 4 6.
uint8_t e2m1_satfinite(float q) {
  if (std::isnan(q)) return 0x7;
  const uint8_t sign = std::signbit(q) ? 0x8 : 0x0;
  const float a = std::fabs(q);
#ifdef FP8LAB_DEFECT_E2M1_AWAY
  const bool tie_up = true;  // a tie goes to the larger magnitude
#else
  const bool tie_up = false;  // a tie goes to the even code: the ones below are odd
#endif
  // midpoints between neighbours; the code above each tie: 1 2* 3 4* 5 6* 7 (* even)
  static const float kMid[7] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f};
  uint8_t code = 0;
  for (int i = 0; i < 7; ++i) {
    const bool above_is_even = (i % 2) == 1;
    if (a > kMid[i] || (a == kMid[i] && (tie_up || above_is_even))) code = static_cast<uint8_t>(i + 1);
  }
  return sign | code;
}

float s_enc_of(float global_amax) {
  const float s = fminf(kFp8Max * kFp4Max / global_amax, FLT_MAX);
  return (global_amax == 0.0f || s == 0.0f) ? 1.0f : s;
}

float block_amax(const void *x, int32_t x_dtype, int64_t base) {
  float amax = 0.0f;
  for (int64_t i = 0; i < kBlock; ++i) amax = fmaxf(amax, std::fabs(element(x, x_dtype, base + i)));
  return amax;
}

enum class Rule { kDivide, kReciprocal, kFused };

template <Rule R>
int32_t quant(const void *x, int32_t x_dtype, int64_t m, int64_t k, float global_amax,
              uint8_t *codes, uint8_t *scales) {
  if ((x_dtype != FP8LAB_X_FLOAT32 && x_dtype != FP8LAB_X_BFLOAT16) || k % kBlock != 0) return 2;
  const float S_enc = s_enc_of(global_amax);
  float S_dec;
  if (R == Rule::kFused) {
    S_dec = 1.0f / S_enc;
  } else {
    S_dec = static_cast<float>(1.0 / static_cast<double>(S_enc));
  }
  const float fp4_max_inv = 1.0f / kFp4Max;  // rcp_6f
  for (int64_t blk = 0; blk < m * (k / kBlock); ++blk) {
    const int64_t base = blk * kBlock;
    const float amax = block_amax(x, x_dtype, base);
    float s;
    if (R == Rule::kDivide) {
#ifdef FP8LAB_DEFECT_RECIPROCAL_BLOCK
      s = fminf(amax * fp4_max_inv * S_enc, FLT_MAX);
#else
      s = fminf(amax / kFp4Max * S_enc, FLT_MAX);
#endif
    } else if (R == Rule::kReciprocal) {
      s = amax * fp4_max_inv * S_enc;
    } else {
      s = fminf(amax * (S_enc * fp4_max_inv), FLT_MAX);
    }
    const uint8_t byte = e4m3_satfinite(s);
    scales[blk] = byte;
    const float S_dec_b = e4m3_value(byte);
    float inv;
    if (R == Rule::kReciprocal) {
      inv = S_enc / S_dec_b;  // +inf for a zero byte: its zeros become NaN, +6
    } else {
#ifdef FP8LAB_DEFECT_NO_INV_CLAMP
      inv = 1.0f / (S_dec_b * S_dec);
#else
      inv = fminf(1.0f / (S_dec_b * S_dec), FLT_MAX);
#endif
    }
    for (int64_t i = 0; i < kBlock; ++i) codes[base + i] = e2m1_satfinite(element(x, x_dtype, base + i) * inv);
  }
  return 0;
}

}  // namespace

extern "C" int32_t te_nvfp4_divide_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                         float global_amax, uint8_t *codes, uint8_t *scales) {
  return quant<Rule::kDivide>(x, x_dtype, m, k, global_amax, codes, scales);
}

extern "C" int32_t te_nvfp4_reciprocal_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                             float global_amax, uint8_t *codes, uint8_t *scales) {
  return quant<Rule::kReciprocal>(x, x_dtype, m, k, global_amax, codes, scales);
}

extern "C" int32_t te_nvfp4_fused_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                        float global_amax, uint8_t *codes, uint8_t *scales) {
  return quant<Rule::kFused>(x, x_dtype, m, k, global_amax, codes, scales);
}

#ifdef FP8LAB_NVFP4_QUANT_IS
extern "C" int32_t fp8lab_nvfp4_quant(const void *x, int32_t x_dtype, int64_t m, int64_t k,
                                      float global_amax, uint8_t *codes, uint8_t *scales) {
  return FP8LAB_NVFP4_QUANT_IS(x, x_dtype, m, k, global_amax, codes, scales);
}
#endif
