#include "kernels/ref/site_transform.h"

#include "hadamard/transform.h"

namespace tern::kernels::ref {

void site_forward(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    hadamard::forward(std::span<float>(x + t * width, static_cast<size_t>(width)), signs, block);
  }
}

void site_inverse(float* x, int64_t n_tokens, int64_t width, std::span<const float> signs, int64_t block) {
  for (int64_t t = 0; t < n_tokens; ++t) {
    hadamard::inverse(std::span<float>(x + t * width, static_cast<size_t>(width)), signs, block);
  }
}

}  // namespace tern::kernels::ref
