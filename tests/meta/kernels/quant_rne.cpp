// A minimal correct fp8lab_quant for the bundle tests: vllm.cpp's QuantFp8Static with
// its F32ToFp8 encoder (frexp + nearbyint, fp8-facts §3): the reciprocal of the scale is
// formed once in float32 and multiplied; NaN -> 0x7F (sign dropped); |y| >= 448 or inf
// saturates to sign|0x7E; round to nearest even. bfloat16 input is widened exactly.
#include "fp8lab/abi/fp8lab_kernel.h"

#include <cmath>
#include <cstring>

namespace {

uint8_t f32_to_fp8(float x) {
    if (std::isnan(x)) return 0x7F;
    const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
    const float a = std::fabs(x);
    if (!std::isfinite(a) || a >= 448.0f) return sign | 0x7E;
    if (a == 0.0f) return sign;
    int e = 0;
    const float frac = std::frexp(a, &e);  // a = frac * 2^e, frac in [0.5, 1)
    int field = e + 6;
    if (field <= 0) {  // subnormal: multiples of 2^-9
        const int sub = static_cast<int>(std::nearbyint(static_cast<double>(a) * 512.0));
        return sign | static_cast<uint8_t>(sub);  // 8 reads as the smallest normal, 0x08
    }
    int mant = static_cast<int>(std::nearbyint(2.0f * frac * 8.0f));  // in [8, 16]
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
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

}  // namespace

extern "C" int32_t fp8lab_quant(const void *x, int32_t x_dtype, int64_t n, float scale,
                                uint8_t *out) {
    if (x_dtype != FP8LAB_X_FLOAT32 && x_dtype != FP8LAB_X_BFLOAT16) return 1;
    const float inv = 1.0f / scale;  // formed once
    for (int64_t i = 0; i < n; ++i) out[i] = f32_to_fp8(widen(x, x_dtype, i) * inv);
    return 0;
}
