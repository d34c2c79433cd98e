// The kernel tests of the row-wise trit forms (trit planes, trit rows): one random matrix held both as
// PQ2_0 and in the form, a two-call kernel run over a row split, and a bitwise comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/pq2_slabs.h"
#include "quant/codec.h"
#include "tests/support/decode_steps.h"
#include "tests/support/random_acts.h"

namespace tern::testing_support {

struct TwoForms {
  std::vector<uint8_t> pq2_bytes, form_bytes;
  kernels::cpu::TernaryMatrix pq2, form;
};

// Random trits (0..2, skewed) and scales, as PQ2_0 and as `form` (a row-wise trit form).
inline TwoForms random_two_forms(quant::TensorType form, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.005f, 0.05f);
  TwoForms m;
  const size_t pq2_row = static_cast<size_t>(cols / 128) * quant::kPq2Bytes;
  const size_t form_row = *quant::row_bytes(form, cols);
  m.pq2_bytes.resize(pq2_row * rows);
  m.form_bytes.resize(form_row * rows);
  uint8_t codes[128];
  for (size_t at = 0; at < m.pq2_bytes.size(); at += quant::kPq2Bytes) {
    for (auto& c : codes) c = static_cast<uint8_t>(rng() % 7 < 3 ? 2 : rng() % 2);
    quant::pq2_pack(codes, fp32_to_fp16((rng() % 2 ? 1.0f : -1.0f) * scale(rng)), m.pq2_bytes.data() + at);
  }
  for (int64_t r = 0; r < rows; ++r) {
    quant::transcode_row(quant::TensorType::kPQ2_0, form, &m.pq2_bytes[r * pq2_row],
                         &m.form_bytes[r * form_row], cols, "test");
  }
  m.pq2 = kernels::cpu::TernaryMatrix{m.pq2_bytes.data(), rows, cols, pq2_row};
  m.form = kernels::cpu::TernaryMatrix{m.form_bytes.data(), rows, cols, form_row, form};
  return m;
}

inline std::vector<float> kernel_test_acts(int64_t n, uint32_t seed) {
  return random_acts(n, seed, 61, 8.0f);
}

// Every token's outputs of w's rows, by two calls of `kernel`: rows [0, split) and [split, rows).
inline std::vector<float> run_split(kernels::cpu::Pq2RowsKernel kernel, const kernels::cpu::TernaryMatrix& w,
                                    const kernels::cpu::QuantizedActs& a, int64_t split) {
  std::vector<float> y(static_cast<size_t>(a.n_tokens * w.rows), -1.0f);
  kernel(y.data(), w.rows, w, a, 0, split);
  kernel(y.data(), w.rows, w, a, split, w.rows);
  return y;
}

inline void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << what;
}

// Two matrices of `form` sharing one token's activations over a pool of two threads: `kernel` gives the
// bits `pq2_kernel` gives on their PQ2_0 twins.
inline void expect_shared_matmul_equals_pq2(quant::TensorType form, kernels::cpu::Pq2RowsKernel kernel,
                                            kernels::cpu::Pq2RowsKernel pq2_kernel) {
  ThreadPool pool(2);
  const int64_t cols = 128 * 43;
  const TwoForms q = random_two_forms(form, 300, cols, 1), k = random_two_forms(form, 64, cols, 2);
  const std::vector<float> x = kernel_test_acts(cols, 3);
  kernels::cpu::ActBuffer buffer;
  const kernels::cpu::QuantizedActs a =
      buffer.quantize(x.data(), cols, 1, nullptr, decode_block_steps_from());
  std::vector<float> yq(300), yk(64), eq(300), ek(64);
  const kernels::cpu::TernaryTarget held[] = {{yq.data(), q.form}, {yk.data(), k.form}};
  const kernels::cpu::TernaryTarget pq2[] = {{eq.data(), q.pq2}, {ek.data(), k.pq2}};
  kernels::cpu::pq2_matmul_shared(held, a, &pool, kernel);
  kernels::cpu::pq2_matmul_shared(pq2, a, &pool, pq2_kernel);
  expect_same_bits(yq, eq, "q");
  expect_same_bits(yk, ek, "k");
}

// On any CPU: `to_pq2` gives the PQ2_0 bytes of a `form` matrix, and `kernel` on it the bits of this
// CPU's PQ2_0 decode kernel on those bytes, for one and for three tokens.
inline void expect_pq2_decode_bits(quant::TensorType form, kernels::cpu::ToPq2Rows to_pq2,
                                   kernels::cpu::Pq2RowsKernel kernel) {
  const int64_t cols = 128 * 7;
  const TwoForms m = random_two_forms(form, 41, cols, 8);
  std::vector<uint8_t> out(m.pq2_bytes.size());
  to_pq2(m.form, 0, 41, out.data());
  EXPECT_EQ(out, m.pq2_bytes);
  for (int64_t tokens : {1, 3}) {
    const std::vector<float> x = kernel_test_acts(tokens * cols, 5);
    kernels::cpu::ActBuffer buffer;
    const kernels::cpu::QuantizedActs a =
        buffer.quantize(x.data(), cols, tokens, nullptr, decode_block_steps_from());
    expect_same_bits(run_split(kernel, m.form, a, 13),
                     run_split(kernels::cpu::pq2_decode_kernel(), m.pq2, a, 0), "decode");
  }
}

}  // namespace tern::testing_support
