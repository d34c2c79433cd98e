#include "kernels/cpu/act_quant.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>

#include "core/error.h"

namespace tern::kernels::cpu {

namespace {

constexpr size_t kAlign = 64;

template <class T>
T* aligned_array(size_t count) {
  const size_t bytes = (count * sizeof(T) + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, bytes == 0 ? kAlign : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<T*>(p);
}

}  // namespace

void ActBuffer::AlignedFree::operator()(void* p) const {
  std::free(p);
}

void ActBuffer::reserve(int64_t k, int64_t n_tokens) {
  if (k < 0 || n_tokens < 0 || k % kActBlock != 0)
    fail(ErrorKind::kInternal, "activation buffer: k {} is not a multiple of {}", k, kActBlock);
  const size_t values = static_cast<size_t>(k) * static_cast<size_t>(n_tokens);
  if (values <= capacity_values_) return;
  const size_t blocks = values / kActBlock;
  q_.reset(aligned_array<int8_t>(values));
  lane_scales_.reset(aligned_array<float>(blocks * kLaneScales));
  lane_sums_.reset(aligned_array<int16_t>(blocks * kLaneSums));
  capacity_values_ = values;
}

QuantizedActs ActBuffer::quantize(const float* x, int64_t k, int64_t n_tokens) {
  reserve(k, n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const int64_t blocks = k / kActBlock;
    quantize_row(x + t * k, k, q_.get() + t * k, lane_scales_.get() + t * blocks * kLaneScales,
                 lane_sums_.get() + t * blocks * kLaneSums);
  }
  return QuantizedActs{q_.get(), lane_scales_.get(), lane_sums_.get(), k, n_tokens};
}

void quantize_block(const float* x, int8_t* q, float* lane_scales, int16_t* lane_sums) {
  float inverse[kActBlock / kActGroup];
  for (int64_t g = 0; g < kActBlock / kActGroup; ++g) {
    float amax = 0.0f;
    bool finite = true;
    for (int64_t j = g * kActGroup; j < (g + 1) * kActGroup; ++j) {
      const float a = std::fabs(x[j]);
      finite = finite && a <= std::numeric_limits<float>::max();
      amax = std::fmax(amax, a);
    }
    inverse[g] = finite && amax > 0.0f ? 127.0f / amax : 0.0f;
    const float d = finite ? amax / 127.0f : std::numeric_limits<float>::quiet_NaN();
    lane_scales[2 * g] = d;
    lane_scales[2 * g + 1] = d;
  }
  for (int64_t s = 0; s < 4; ++s) {
    for (int64_t i = 0; i < 32; ++i) {
      const int64_t j = 4 * i + s;
      const float inv = inverse[j / kActGroup];
      q[32 * s + i] = inv == 0.0f ? int8_t{0} : static_cast<int8_t>(std::nearbyint(x[j] * inv));
    }
  }
  for (int64_t lane = 0; lane < kLaneSums; ++lane) {
    int sum = 0;
    for (int64_t s = 0; s < 4; ++s) sum += q[32 * s + 2 * lane] + q[32 * s + 2 * lane + 1];
    lane_sums[lane] = static_cast<int16_t>(sum);
  }
}

void quantize_row(const float* x, int64_t k, int8_t* q, float* lane_scales, int16_t* lane_sums) {
  if (k % kActBlock != 0)
    fail(ErrorKind::kInternal, "activation quantisation: k {} is not a multiple of {}", k, kActBlock);
  for (int64_t b = 0; b < k / kActBlock; ++b) {
    quantize_block(x + b * kActBlock, q + b * kActBlock, lane_scales + b * kLaneScales,
                   lane_sums + b * kLaneSums);
  }
}

}  // namespace tern::kernels::cpu
