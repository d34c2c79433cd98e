#include "kernels/cpu/act_quant.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/huge_pages.h"
#include "core/thread_pool.h"

namespace tern::kernels::cpu {

namespace {

constexpr int64_t kGroups = kActBlock / kActGroup;

// The scale of one group: its step, or NaN when it holds a non-finite value (digits then stay 0).
float group_step(const float* x) {
  float amax = 0.0f;
  for (int64_t j = 0; j < kActGroup; ++j) {
    const float a = std::fabs(x[j]);
    if (!(a <= std::numeric_limits<float>::max())) return std::numeric_limits<float>::quiet_NaN();
    amax = std::max(amax, a);
  }
  return amax / (127.0f * kLoDigit);
}

}  // namespace

void ActBuffer::reserve(int64_t k, int64_t n_tokens) {
  if (k < 0 || n_tokens < 0 || k % kActBlock != 0)
    fail(ErrorKind::kInternal, "activation buffer: k {} is not a multiple of {}", k, kActBlock);
  const size_t blocks = static_cast<size_t>(k / kActBlock) * static_cast<size_t>(n_tokens);
  if (blocks <= capacity_blocks_) return;
  q_ = StreamedArray<int8_t>(blocks * kActBlockBytes);
  ymm_scales_ = StreamedArray<float>(blocks * kYmmLanes);
  ymm_neg_sums_ = StreamedArray<int32_t>(blocks * kYmmLanes);
  zmm_scales_ = StreamedArray<float>(blocks * kZmmLanes);
  zmm_sums_ = StreamedArray<int32_t>(blocks * kZmmSums);
  capacity_blocks_ = blocks;
}

QuantizedActs ActBuffer::quantize(const float* x, int64_t k, int64_t n_tokens, ThreadPool* pool,
                                  int64_t block_steps_from) {
  reserve(k, n_tokens);
  const int64_t blocks = k / kActBlock * n_tokens;  // rows are contiguous, so blocks run straight on
  const int64_t first_block_token = std::clamp<int64_t>(block_steps_from, 0, n_tokens);
  const int64_t first_block_step = k / kActBlock * first_block_token;  // the first block with block steps
  auto quantize_one = quantize_block;
#if defined(__x86_64__)
  if (cpu_features().has_avx512_vnni()) {
    quantize_one = quantize_block_avx512;
  } else if (cpu_features().has_avx2_fma()) {
    quantize_one = quantize_block_avx2;
  }
#endif
  const auto quantize_blocks = [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) {
      quantize_one(x + b * kActBlock,
                   ActBlockOut{q_.data() + b * kActBlockBytes, ymm_scales_.data() + b * kYmmLanes,
                               ymm_neg_sums_.data() + b * kYmmLanes, zmm_scales_.data() + b * kZmmLanes,
                               zmm_sums_.data() + b * kZmmSums},
                   b < first_block_step ? StepScope::kGroup : StepScope::kBlock);
    }
  };
  constexpr int64_t kBlocksPerTask = 256;  // ~20 µs of work; a decode row is one task or a few
  const int64_t tasks = (blocks + kBlocksPerTask - 1) / kBlocksPerTask;
  if (pool == nullptr || tasks < 2) {
    quantize_blocks(0, blocks);
  } else {
    pool->for_each(tasks, [&](int64_t task, int) {
      quantize_blocks(task * kBlocksPerTask, std::min(blocks, (task + 1) * kBlocksPerTask));
    });
  }
  return QuantizedActs{q_.data(),          ymm_scales_.data(), ymm_neg_sums_.data(),
                       zmm_scales_.data(), zmm_sums_.data(),   k,
                       n_tokens,           first_block_token};
}

float block_step(const float (&group_steps)[kActBlock / kActGroup]) {
  float most = 0.0f;
  for (const float step : group_steps) {
    if (std::isnan(step)) return step;
    most = std::max(most, step);
  }
  if (most == 0.0f) return 0.0f;
  int exponent = 0;
  const float fraction = std::frexp(std::max(most, kLeastBlockStep), &exponent);  // in [0.5, 1)
  return std::ldexp(1.0f, fraction == 0.5f ? exponent - 1 : exponent);
}

void quantize_block(const float* x, const ActBlockOut& out, StepScope scope) {
  float steps[kGroups];
  for (int64_t g = 0; g < kGroups; ++g) steps[g] = group_step(x + g * kActGroup);
  if (scope == StepScope::kBlock) std::fill(std::begin(steps), std::end(steps), block_step(steps));
  int8_t* hi = out.q;
  int8_t* lo = out.q + kActBlock;
  for (int64_t s = 0; s < 4; ++s) {
    for (int64_t i = 0; i < 32; ++i) {
      const int64_t j = 4 * i + s;
      const float step = steps[j / kActGroup];
      int8_t h = 0, l = 0;
      if (step > 0.0f) {  // false for 0 and NaN
        const float in_steps = x[j] / step;
        const float high = std::nearbyint(in_steps / kLoDigit);
        h = static_cast<int8_t>(std::clamp(high, -127.0f, 127.0f));
        l = static_cast<int8_t>(std::clamp(std::nearbyint(in_steps - high * kLoDigit), -127.0f, 127.0f));
      }
      hi[32 * s + i] = h;
      lo[32 * s + i] = l;
    }
  }
  const auto digits = [&](int64_t at) { return static_cast<int32_t>(kLoDigit) * hi[at] + lo[at]; };
  for (int64_t lane = 0; lane < kZmmLanes; ++lane) out.zmm_sums[lane] = out.zmm_sums[kZmmLanes + lane] = 0;
  for (int64_t lane = 0; lane < kYmmLanes; ++lane) {
    int32_t ymm = 0;
    for (int64_t s = 0; s < 4; ++s) {
      // zmm lane `lane` covers vectors s0 and s2, lane 8 + `lane` covers s1 and s3.
      const int64_t zmm_lane = lane + (s % 2) * kYmmLanes;
      for (int64_t i = 4 * lane; i < 4 * lane + 4; ++i) {
        ymm += digits(32 * s + i);
        out.zmm_sums[zmm_lane] -= hi[32 * s + i];
        out.zmm_sums[kZmmLanes + zmm_lane] += lo[32 * s + i];
      }
    }
    out.ymm_neg_sums[lane] = -ymm;
    out.ymm_scales[lane] = steps[lane / 2];
    out.zmm_scales[lane] = steps[lane / 2];
    out.zmm_scales[lane + kYmmLanes] = steps[lane / 2];
  }
}

void group_neg_sums(const QuantizedActs& a, int64_t first, int64_t count, int32_t* out) {
  const int64_t groups = a.blocks() * (kActBlock / kActGroup);
  for (int64_t t = 0; t < count; ++t) {
    const int32_t* lanes = a.token_ymm_neg_sums(first + t);
    for (int64_t i = 0; i < groups; ++i) out[t * groups + i] = lanes[2 * i] + lanes[2 * i + 1];
  }
}

}  // namespace tern::kernels::cpu
