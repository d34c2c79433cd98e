// kernels/cpu activation quantisation and PQ2_0 matmul against an fp64 computation over the
// dequantised weights (quant::dequantize_row), on 27B widths and awkward shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/bandwidth.h"
#include "kernels/cpu/pq2_matmul.h"
#include "quant/codec.h"

namespace tern::kernels::cpu {
namespace {

struct Weights {
  std::vector<uint8_t> bytes;
  std::vector<float> dense;  // dequantised, [rows][cols]
  Pq2Matrix view;
};

// Random PQ2_0 rows; codes 0..2 with code 3 (+2d) sprinkled in, scales around 0.02 with random signs.
Weights random_weights(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.005f, 0.05f);
  Weights w;
  const size_t row_bytes = static_cast<size_t>(cols / 128) * quant::kPq2Bytes;
  w.bytes.resize(row_bytes * static_cast<size_t>(rows));
  uint8_t codes[128];
  for (size_t at = 0; at < w.bytes.size(); at += quant::kPq2Bytes) {
    for (auto& c : codes) c = static_cast<uint8_t>(rng() % 50 == 0 ? 3 : rng() % 3);
    const float d = (rng() % 2 ? 1.0f : -1.0f) * scale(rng);
    quant::pq2_pack(codes, fp32_to_fp16(d), w.bytes.data() + at);
  }
  w.dense.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    quant::dequantize_row(quant::TensorType::kPQ2_0, w.bytes.data() + static_cast<size_t>(r) * row_bytes,
                          w.dense.data() + r * cols, cols);
  }
  w.view = Pq2Matrix{w.bytes.data(), rows, cols, row_bytes};
  return w;
}

// Gaussian activations with a few outliers, as after a Hadamard site.
std::vector<float> random_acts(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng) * (rng() % 97 == 0 ? 6.0f : 1.0f);
  return x;
}

struct Reference {
  std::vector<double> y;      // [tokens][rows], exact in fp64
  std::vector<double> bound;  // rigorous bound on the int8 rounding error of each output
};

// The int8 error of one output is at most Σ_groups d_x/2 · Σ |w| (each activation moves by at most half
// a step of its 32-group), plus float accumulation error that the slack covers.
Reference reference(const Weights& w, const std::vector<float>& x, int64_t tokens) {
  const int64_t rows = w.view.rows, cols = w.view.cols;
  Reference ref;
  ref.y.resize(static_cast<size_t>(tokens * rows));
  ref.bound.resize(ref.y.size());
  for (int64_t t = 0; t < tokens; ++t) {
    const float* xt = x.data() + t * cols;
    for (int64_t r = 0; r < rows; ++r) {
      const float* wr = w.dense.data() + r * cols;
      double acc = 0.0, bound = 0.0, magnitude = 0.0;
      for (int64_t g = 0; g < cols / 32; ++g) {
        double amax = 0.0, wsum = 0.0;
        for (int64_t j = g * 32; j < (g + 1) * 32; ++j) {
          acc += static_cast<double>(wr[j]) * xt[j];
          magnitude += std::fabs(static_cast<double>(wr[j]) * xt[j]);
          amax = std::max(amax, std::fabs(static_cast<double>(xt[j])));
          wsum += std::fabs(static_cast<double>(wr[j]));
        }
        bound += amax / 127.0 / 2.0 * wsum * 1.0001;
      }
      ref.y[static_cast<size_t>(t * rows + r)] = acc;
      ref.bound[static_cast<size_t>(t * rows + r)] = bound + 1e-5 * magnitude;
    }
  }
  return ref;
}

std::vector<Pq2RowsKernel> kernels() {
  std::vector<Pq2RowsKernel> out{pq2_rows_scalar};
  if (cpu_features().has_avx2_fma()) out.push_back(pq2_rows_avx2);
  return out;
}

// Runs every kernel (single-threaded and on a 2-thread pool) and checks each output against the bound;
// returns the worst error relative to the rms of the exact outputs.
double check_matmul(int64_t rows, int64_t cols, int64_t tokens, uint32_t seed) {
  const Weights w = random_weights(rows, cols, seed);
  const std::vector<float> x = random_acts(tokens * cols, seed + 1);
  const Reference ref = reference(w, x, tokens);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), cols, tokens);
  double rms = 0.0;
  for (double v : ref.y) rms += v * v;
  rms = std::sqrt(rms / static_cast<double>(ref.y.size()));
  ThreadPool pool(2);
  double worst = 0.0;
  for (Pq2RowsKernel kernel : kernels()) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(ref.y.size(), NAN);
      pq2_matmul(y.data(), w.view, acts, p, kernel);
      for (size_t i = 0; i < y.size(); ++i) {
        const double err = std::fabs(y[i] - ref.y[i]);
        EXPECT_LE(err, ref.bound[i]) << "rows " << rows << " cols " << cols << " tokens " << tokens
                                     << " output " << i << " kernel "
                                     << (kernel == pq2_rows_scalar ? "scalar" : "avx2");
        worst = std::max(worst, err / rms);
      }
    }
  }
  return worst;
}

TEST(CpuActQuant, PermutesEachBlockForTheTwoBitFields) {
  std::vector<float> x(256);
  for (size_t j = 0; j < x.size(); ++j) x[j] = static_cast<float>(j % 32) - 15.5f;
  for (size_t g = 0; g < 8; ++g) x[g * 32 + 3] = 127.0f / static_cast<float>(g + 1);  // group max
  std::vector<int8_t> q(256);
  float scales[16];
  int16_t sums[32];
  quantize_row(x.data(), 256, q.data(), scales, sums);
  for (int b = 0; b < 2; ++b) {
    for (int g = 0; g < 4; ++g) {
      const float d = 1.0f / static_cast<float>(4 * b + g + 1);
      EXPECT_FLOAT_EQ(scales[8 * b + 2 * g], d);
      EXPECT_EQ(scales[8 * b + 2 * g + 1], scales[8 * b + 2 * g]);
    }
    for (int s = 0; s < 4; ++s) {
      for (int i = 0; i < 32; ++i) {
        const size_t j = static_cast<size_t>(128 * b + 4 * i + s);
        const float inv = static_cast<float>(4 * b + i / 8 + 1);  // 127 / max of the group
        EXPECT_EQ(q[static_cast<size_t>(128 * b + 32 * s + i)],
                  static_cast<int8_t>(std::nearbyint(x[j] * inv)))
            << b << " " << s << " " << i;
      }
    }
  }
  for (int b = 0; b < 2; ++b) {
    for (int lane = 0; lane < 16; ++lane) {
      int expect = 0;
      for (int s = 0; s < 4; ++s) {
        const size_t at = static_cast<size_t>(128 * b + 32 * s + 2 * lane);
        expect += q[at] + q[at + 1];
      }
      EXPECT_EQ(sums[16 * b + lane], expect);
    }
  }
}

TEST(CpuActQuant, ZeroBlockHasZeroScaleAndNanPropagates) {
  std::vector<float> x(256, 0.0f);
  x[200] = NAN;
  std::vector<int8_t> q(256, 9);
  float scales[16];
  int16_t sums[32];
  quantize_row(x.data(), 256, q.data(), scales, sums);
  for (int lane = 0; lane < 8; ++lane) EXPECT_EQ(scales[lane], 0.0f);
  EXPECT_TRUE(std::isnan(scales[8 + 4]));  // value 200 is in group 6 = lanes 12, 13
  EXPECT_EQ(scales[8], 0.0f);
  for (int8_t v : q) EXPECT_EQ(v, 0);
  for (int16_t v : sums) EXPECT_EQ(v, 0);
}

TEST(CpuActQuant, RefusesWidthNotMultipleOfBlock) {
  ActBuffer buffer;
  std::vector<float> x(200);
  EXPECT_THROW(buffer.quantize(x.data(), 200, 1), Error);
}

TEST(CpuPq2Matmul, DecodeShapesOf27B) {
  for (int64_t cols : {5120, 6144, 17408}) {
    const double worst = check_matmul(37, cols, 1, static_cast<uint32_t>(cols));
    std::printf("[ decode K=%lld ] worst |y - y_fp64| / rms(y) = %.3g\n", static_cast<long long>(cols),
                worst);
  }
}

TEST(CpuPq2Matmul, AwkwardShapes) {
  check_matmul(1, 128, 1, 1);   // one row, one block
  check_matmul(3, 128, 5, 2);   // rows below the interleave, tokens not a multiple of the tile
  check_matmul(13, 256, 7, 3);  // rows not a multiple of 4 or 8
  check_matmul(17, 384, 2, 4);
}

TEST(CpuPq2Matmul, PrefillTokenCounts) {
  for (int64_t tokens : {2, 3, 4, 9, 70}) check_matmul(19, 5120, tokens, static_cast<uint32_t>(tokens));
  check_matmul(10, 17408, 13, 5);  // more tokens than one activation chunk holds
}

TEST(CpuPq2Matmul, ThreadedEqualsSingleThreadBitForBit) {
  const Weights w = random_weights(101, 1024, 9);
  const std::vector<float> x = random_acts(3 * 1024, 10);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), 1024, 3);
  ThreadPool pool(2);
  std::vector<float> one(3 * 101), two(3 * 101);
  pq2_matmul(one.data(), w.view, acts, nullptr);
  pq2_matmul(two.data(), w.view, acts, &pool);
  EXPECT_EQ(one, two);
}

TEST(CpuPq2Matmul, RefusesMismatchedWidth) {
  const Weights w = random_weights(4, 256, 11);
  const std::vector<float> x = random_acts(128, 12);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), 128, 1);
  std::vector<float> y(4);
  EXPECT_THROW(pq2_matmul(y.data(), w.view, acts, nullptr), Error);
}

TEST(CpuProbes, ReadBandwidthIsPositiveAndFinite) {
  ThreadPool pool(2);
  const double gbs = measure_read_bandwidth_gbs(pool, size_t{4} << 20);
  EXPECT_GT(gbs, 0.0);
  EXPECT_TRUE(std::isfinite(gbs));
}

}  // namespace
}  // namespace tern::kernels::cpu
