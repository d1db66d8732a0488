// A minimal correct fp8lab_matmul for the bundle tests: vllm.cpp's CPU MatmulFp8 (fp8-facts
// §3): decode both e4m3fn operands exactly (0x7F/0xFF are NaN), sum over k in order in
// float32, out = alpha * acc with alpha = float32(s_in * s_w); bfloat16 out by RNE.
#include "fp8lab/abi/fp8lab_kernel.h"

#include <cmath>
#include <cstring>

namespace {

float decode(uint8_t code) {
    if ((code & 0x7F) == 0x7F) return NAN;
    const int exp = (code >> 3) & 0xF, mant = code & 7;
    const float mag = exp == 0 ? std::ldexp(static_cast<float>(mant), -9)
                               : std::ldexp(static_cast<float>(8 + mant), exp - 10);
    return (code & 0x80) ? -mag : mag;
}

uint16_t to_bf16(float value) {  // round to nearest even; NaN stays NaN
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
    return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

}  // namespace

extern "C" int32_t fp8lab_matmul(const uint8_t *a, const uint8_t *b, int64_t m, int64_t n,
                                 int64_t k, float s_in, float s_w, int32_t out_dtype,
                                 void *out) {
    if (out_dtype != FP8LAB_OUT_FLOAT32 && out_dtype != FP8LAB_OUT_BFLOAT16) return 1;
    const float alpha = s_in * s_w;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (int64_t kk = 0; kk < k; ++kk) acc += decode(a[i * k + kk]) * decode(b[j * k + kk]);
            const float value = alpha * acc;
            if (out_dtype == FP8LAB_OUT_FLOAT32) {
                static_cast<float *>(out)[i * n + j] = value;
            } else {
                static_cast<uint16_t *>(out)[i * n + j] = to_bf16(value);
            }
        }
    }
    return 0;
}
