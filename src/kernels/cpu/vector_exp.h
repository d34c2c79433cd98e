// The constants of the SIMD exponentials (vector_exp_avx2.h, vector_exp_avx512.h), which the ISA files
// share so that every width computes e^x the same way.
#pragma once

namespace tern::kernels::cpu {

// The vector exponential of the SIMD policies, for arguments in [kMin, 0]: e^x = 2^n · e^r with n =
// round(x · log2 e) and r = x − n · ln 2 (ln 2 split in two so n · ln2_hi is exact), |r| ≤ ln 2 / 2, e^r by
// its Taylor polynomial to degree 7 (truncation below 1e-8 relative), then scaled by 2^n exactly.
// Below kMin (where 2^n would leave the normal range) the result is 0.
namespace vector_exp {
inline constexpr float kMin = -87.0f;
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;
inline constexpr float kLn2Lo = -2.12194440e-4f;
// 1/k! for k = 7 down to 2: Horner from the highest degree.
inline constexpr float kTaylor[] = {1.0f / 5040, 1.0f / 720, 1.0f / 120, 1.0f / 24, 1.0f / 6, 1.0f / 2};
}  // namespace vector_exp

}  // namespace tern::kernels::cpu
