// kernels/cpu activation quantisation and PQ2_0 matmul against an fp64 computation over the
// dequantised weights (quant::dequantize_row), on 27B widths and awkward shapes.
#include <gtest/gtest.h>

#include <cstring>

#include <algorithm>
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
#include "kernels/cpu/stream_read.h"
#include "quant/codec.h"
#include "tests/support/random_acts.h"

namespace tern::kernels::cpu {
namespace {

struct Weights {
  std::vector<uint8_t> bytes;
  std::vector<float> dense;  // dequantised, [rows][cols]
  TernaryMatrix view;
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
  w.view = TernaryMatrix{w.bytes.data(), rows, cols, row_bytes};
  return w;
}

std::vector<float> random_acts(int64_t n, uint32_t seed) {
  return testing_support::random_acts(n, seed, 97, 6.0f);
}

struct Reference {
  std::vector<double> y;      // [tokens][rows], exact in fp64
  std::vector<double> bound;  // rigorous bound on the int8 rounding error of each output
};

// The quantisation error of one output is at most Σ_groups step · Σ |w| (each activation moves by at most
// one step of its 32-group: half a step of rounding, or one where the low digit is clamped), plus float
// accumulation error that the slack covers.
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
        bound += amax / (127.0 * 256.0) * wsum * 1.0001;
      }
      ref.y[static_cast<size_t>(t * rows + r)] = acc;
      ref.bound[static_cast<size_t>(t * rows + r)] = bound + 1e-5 * magnitude;
    }
  }
  return ref;
}

struct NamedKernel {
  const char* name;
  Pq2RowsKernel kernel;
};

// The lane-order kernels this CPU runs (pq2_matmul.h): all give the scalar kernel's bits.
std::vector<NamedKernel> lane_order_kernels() {
  std::vector<NamedKernel> out{{"scalar", pq2_rows_scalar}};
  const CpuFeatures& cpu = cpu_features();
#if defined(__x86_64__)
  if (cpu.has_avx2_fma()) {
    out.push_back({"avx2", pq2_rows_avx2});
    out.push_back({"avx2 words", pq2_rows_avx2_words});
  }
  if (cpu.has_avx_vnni()) out.push_back({"avxvnni", pq2_rows_avxvnni});
#elif defined(__aarch64__)
  if (cpu.neon) out.push_back({"neon", pq2_rows_neon});
  if (cpu.dotprod) out.push_back({"dotprod", pq2_rows_dotprod});
#endif
  (void)cpu;
  return out;
}

// Every kernel this CPU runs.
std::vector<NamedKernel> kernels() {
  std::vector<NamedKernel> out = lane_order_kernels();
#if defined(__x86_64__)
  const CpuFeatures& cpu = cpu_features();
  if (cpu.has_avx512_vnni()) {
    out.push_back({"avx512 lanes", pq2_rows_avx512_lanes});
    out.push_back({"avx512 groups", pq2_rows_avx512_groups});
    out.push_back({"avx512 panels", pq2_rows_avx512_panels});
  }
  if (cpu.has_avx_vnni()) out.push_back({"avxvnni panels", pq2_rows_avxvnni_panels});
  if (cpu.has_amx_int8()) {
    out.push_back({"amx", pq2_rows_amx});
    out.push_back({"amx few", pq2_rows_amx_few});
  }
#endif
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
  for (const auto& [name, kernel] : kernels()) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      std::vector<float> y(ref.y.size(), NAN);
      pq2_matmul(y.data(), w.view, acts, p, kernel);
      for (size_t i = 0; i < y.size(); ++i) {
        const double err = std::fabs(y[i] - ref.y[i]);
        EXPECT_LE(err, ref.bound[i]) << "rows " << rows << " cols " << cols << " tokens " << tokens
                                     << " output " << i << " kernel " << name;
        worst = std::max(worst, err / rms);
      }
    }
  }
  return worst;
}

struct QuantizedBlock {
  int8_t q[kActBlockBytes];
  float ymm_scales[kYmmLanes], zmm_scales[kZmmLanes];
  int32_t ymm_neg_sums[kYmmLanes], zmm_sums[kZmmSums];
  ActBlockOut out() { return {q, ymm_scales, ymm_neg_sums, zmm_scales, zmm_sums}; }
  int32_t digits(int at) const { return 256 * q[at] + q[kActBlock + at]; }
};

TEST(CpuActQuant, TwoDigitsReproduceEachValueWithinOneStep) {
  std::vector<float> x(128);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : x) v = normal(rng);
  x[5] = 40.0f;  // an outlier coarsens only its own group
  QuantizedBlock block;
  quantize_block(x.data(), block.out());
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < 32; ++i) {
      const int j = 4 * i + s;
      const float step = block.ymm_scales[(i / 4)];  // lane i/4 holds group i/8
      float amax = 0.0f;
      for (int g = j / 32 * 32; g < j / 32 * 32 + 32; ++g)
        amax = std::max(amax, std::fabs(x[static_cast<size_t>(g)]));
      EXPECT_FLOAT_EQ(step, amax / (127.0f * 256.0f));
      EXPECT_LE(std::fabs(static_cast<float>(block.digits(32 * s + i)) * step - x[static_cast<size_t>(j)]),
                step * 1.0001f)
          << "value " << j;
    }
  }
  EXPECT_GT(block.ymm_scales[0], 10.0f * block.ymm_scales[2]);  // only group 0 holds the outlier
}

TEST(CpuActQuant, BlockStepIsOnePowerOfTwoForTheFourGroups) {
  std::vector<float> x(128);
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : x) v = normal(rng);
  x[70] = 9.0f;
  QuantizedBlock groups, block;
  quantize_block(x.data(), groups.out(), StepScope::kGroup);
  quantize_block(x.data(), block.out(), StepScope::kBlock);
  const float step = block.ymm_scales[0];
  int exponent = 0;
  EXPECT_EQ(std::frexp(step, &exponent), 0.5f);  // a power of two
  const float largest = *std::max_element(std::begin(groups.ymm_scales), std::end(groups.ymm_scales));
  EXPECT_EQ(largest, groups.ymm_scales[4]);  // group 2 holds the largest value
  EXPECT_GE(step, largest);
  EXPECT_LT(step, 2.0f * largest);
  for (int lane = 0; lane < kYmmLanes; ++lane) EXPECT_EQ(block.ymm_scales[lane], step);
  for (int lane = 0; lane < kZmmLanes; ++lane) EXPECT_EQ(block.zmm_scales[lane], step);
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < 32; ++i) {
      const float value = x[static_cast<size_t>(4 * i + s)];
      EXPECT_LE(std::fabs(static_cast<float>(block.digits(32 * s + i)) * step - value), step) << 4 * i + s;
    }
  }
}

TEST(CpuActQuant, BlockStepOfNanZeroTinyAndExactSteps) {
  EXPECT_TRUE(std::isnan(block_step({0.5f, NAN, 2.0f, 0.0f})));
  EXPECT_EQ(block_step({0.0f, 0.0f, 0.0f, 0.0f}), 0.0f);
  EXPECT_EQ(block_step({0.0f, 0x1p-130f, 0.0f, 0.0f}), kLeastBlockStep);  // never subnormal products
  EXPECT_EQ(block_step({0.25f, 0.125f, 0.0f, 0.0f}), 0.25f);              // a power of two stays
  EXPECT_EQ(block_step({0.3f, 0.125f, 0.26f, 0.0f}), 0.5f);
}

TEST(CpuActQuant, TokensFromTheFirstBlockStepTokenTakeBlockSteps) {
  constexpr int64_t kK = 512, kTokens = 5, kFirst = 2;
  const std::vector<float> x = random_acts(kK * kTokens, 12);
  ActBuffer grouped, split;
  const QuantizedActs all_groups = grouped.quantize(x.data(), kK, kTokens);
  const QuantizedActs acts = split.quantize(x.data(), kK, kTokens, nullptr, kFirst);
  EXPECT_FALSE(all_groups.block_steps());
  EXPECT_FALSE(acts.block_steps());
  EXPECT_FALSE(acts.slice(1, 3).block_steps());
  EXPECT_TRUE(acts.slice(kFirst, kTokens - kFirst).block_steps());
  EXPECT_TRUE(acts.slice(kTokens - 1, 1).block_steps());
  const int64_t lanes = acts.blocks() * kYmmLanes;
  for (int64_t t = 0; t < kTokens; ++t) {
    const float* steps = acts.token_ymm_scales(t);
    const bool block = t >= kFirst;
    EXPECT_EQ(std::equal(steps, steps + lanes, all_groups.token_ymm_scales(t)), !block) << "token " << t;
    if (block) {
      for (int64_t lane = 0; lane < lanes; ++lane)
        EXPECT_EQ(steps[lane], steps[lane / kYmmLanes * kYmmLanes]) << "token " << t << " lane " << lane;
    }
  }
}

TEST(CpuActQuant, LaneSumsAndScalesMatchBothVectorWidths) {
  std::vector<float> x(128);
  for (size_t j = 0; j < x.size(); ++j)
    x[j] = std::sin(static_cast<float>(j)) * static_cast<float>(j % 7 + 1);
  QuantizedBlock block;
  quantize_block(x.data(), block.out());
  for (int lane = 0; lane < kYmmLanes; ++lane) {
    int32_t ymm = 0, hi_even = 0, hi_odd = 0, lo_even = 0, lo_odd = 0;
    for (int s = 0; s < 4; ++s) {
      for (int i = 4 * lane; i < 4 * lane + 4; ++i) {
        ymm += block.digits(32 * s + i);
        (s % 2 == 0 ? hi_even : hi_odd) += block.q[32 * s + i];
        (s % 2 == 0 ? lo_even : lo_odd) += block.q[kActBlock + 32 * s + i];
      }
    }
    EXPECT_EQ(block.ymm_neg_sums[lane], -ymm);
    EXPECT_EQ(block.zmm_sums[lane], -hi_even);
    EXPECT_EQ(block.zmm_sums[lane + 8], -hi_odd);
    EXPECT_EQ(block.zmm_sums[kZmmLanes + lane], lo_even);
    EXPECT_EQ(block.zmm_sums[kZmmLanes + lane + 8], lo_odd);
    EXPECT_EQ(block.zmm_scales[lane], block.ymm_scales[lane]);
    EXPECT_EQ(block.zmm_scales[lane + 8], block.ymm_scales[lane]);
    EXPECT_EQ(block.ymm_scales[lane], block.ymm_scales[lane / 2 * 2]);
  }
}

TEST(CpuActQuant, PooledQuantisationEqualsSerial) {
  constexpr int64_t kK = 1024, kTokens = 70;  // 560 blocks: three tasks on the pool
  const std::vector<float> x = random_acts(kK * kTokens, 31);
  ActBuffer serial, pooled;
  ThreadPool pool(2);
  const QuantizedActs a = serial.quantize(x.data(), kK, kTokens);
  const QuantizedActs b = pooled.quantize(x.data(), kK, kTokens, &pool);
  const auto blocks = static_cast<size_t>(kK / kActBlock * kTokens);
  EXPECT_TRUE(std::equal(a.q, a.q + blocks * kActBlockBytes, b.q));
  EXPECT_TRUE(std::equal(a.ymm_neg_sums, a.ymm_neg_sums + blocks * kYmmLanes, b.ymm_neg_sums));
  EXPECT_TRUE(std::equal(a.zmm_scales, a.zmm_scales + blocks * kZmmLanes, b.zmm_scales));
  EXPECT_TRUE(std::equal(a.zmm_sums, a.zmm_sums + blocks * kZmmSums, b.zmm_sums));
}

TEST(CpuActQuant, ZeroGroupHasZeroScaleAndNanPropagates) {
  std::vector<float> x(128, 0.0f);
  x[72] = NAN;  // group 2 = ymm lanes 4, 5
  QuantizedBlock block;
  std::fill(std::begin(block.q), std::end(block.q), int8_t{9});
  quantize_block(x.data(), block.out());
  for (int lane = 0; lane < kYmmLanes; ++lane) {
    if (lane == 4 || lane == 5)
      EXPECT_TRUE(std::isnan(block.ymm_scales[lane]));
    else
      EXPECT_EQ(block.ymm_scales[lane], 0.0f);
    EXPECT_EQ(block.ymm_neg_sums[lane], 0);
  }
  for (int8_t v : block.q) EXPECT_EQ(v, 0);
}

#if defined(__x86_64__)
// 400 blocks of tiny to huge magnitudes (subnormal steps included), all-zero groups, NaN and infinity,
// and exact ties of both roundings, through `vector` and the scalar quantiser.
void expect_quantiser_equals_scalar(void (*vector_quantiser)(const float*, const ActBlockOut&, StepScope)) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> exponent(-30.0f, 30.0f);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<float> x(128);
    const float scale = std::exp2(exponent(rng));
    for (float& v : x) v = normal(rng) * scale;
    if (trial % 5 == 1) std::fill(x.begin() + 32, x.begin() + 64, 0.0f);
    if (trial % 7 == 2) x[static_cast<size_t>(trial) % 128] = (trial % 2 == 0) ? NAN : -INFINITY;
    if (trial % 11 == 3) {  // values on half steps
      for (size_t j = 0; j < 32; ++j) x[j] = (static_cast<float>(j) - 15.5f) * 256.0f;
      x[0] = 127.0f * 256.0f * 16.0f;
    }
    const StepScope scope = trial % 2 == 0 ? StepScope::kGroup : StepScope::kBlock;
    QuantizedBlock scalar, vector;
    quantize_block(x.data(), scalar.out(), scope);
    vector_quantiser(x.data(), vector.out(), scope);
    ASSERT_TRUE(std::equal(std::begin(scalar.q), std::end(scalar.q), vector.q)) << "trial " << trial;
    ASSERT_TRUE(
        std::equal(std::begin(scalar.ymm_neg_sums), std::end(scalar.ymm_neg_sums), vector.ymm_neg_sums));
    ASSERT_TRUE(std::equal(std::begin(scalar.zmm_sums), std::end(scalar.zmm_sums), vector.zmm_sums));
    ASSERT_EQ(std::memcmp(scalar.ymm_scales, vector.ymm_scales, sizeof scalar.ymm_scales), 0)
        << "trial " << trial;
    ASSERT_EQ(std::memcmp(scalar.zmm_scales, vector.zmm_scales, sizeof scalar.zmm_scales), 0)
        << "trial " << trial;
  }
}

TEST(CpuActQuant, Avx2QuantiserEqualsScalarByteForByte) {
  if (!cpu_features().has_avx2_fma()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  expect_quantiser_equals_scalar(quantize_block_avx2);
}

TEST(CpuActQuant, Avx512QuantiserEqualsScalarByteForByte) {
  if (!cpu_features().has_avx512_vnni()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  expect_quantiser_equals_scalar(quantize_block_avx512);
}
#endif

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

// A prompt chunk's activations leave the weights half of the L2 (on Zen 3's 512 KiB the chunk was 512 KiB
// and prefill ran ≈ 1.09× slower).
TEST(CpuPq2Matmul, PromptChunksLeaveHalfTheL2) {
  const int64_t bytes = prompt_chunk_act_bytes();
  EXPECT_GT(bytes, 0);
  EXPECT_LE(bytes, 512 * 1024);
  if (l2_cache_bytes() > 0) {
    EXPECT_LE(bytes, l2_cache_bytes() / 2);
  }
}

TEST(CpuPq2Matmul, PromptChunksHoldWholeTiles) {
  const int64_t bytes = prompt_chunk_act_bytes();
  EXPECT_EQ(prompt_chunk_tokens(bytes / 8, 4), 8);
  EXPECT_EQ(prompt_chunk_tokens(bytes / 11, 4), 8);
  EXPECT_EQ(prompt_chunk_tokens(bytes / 3, 3), 3);
  EXPECT_EQ(prompt_chunk_tokens(bytes, 4), 4);
  EXPECT_EQ(prompt_chunk_tokens(bytes * 5, 4), 4);
}

// Decode tokens take the fastest one-token kernel, in the group order with block steps where VBMI's panel
// kernels decode (pq2_decode_in_block_order()). Prompt tokens take the group order: AMX where it exists
// (the few-token kernel below kAmxMinTokens), else with AVX-512 VNNI the panel kernel (the group kernel
// below kPanelMinTokens), else with AVX-VNNI the ymm panel kernel; without any of them, the decode kernel.
TEST(CpuPq2Matmul, DecodeAndPromptKernelsFollowTheIsa) {
  const CpuFeatures& cpu = cpu_features();
  Pq2RowsKernel decode = pq2_rows_scalar;
#if defined(__x86_64__)
  if (cpu.has_avx512_vbmi()) {
    decode = pq2_rows_avx512_groups;
  } else if (cpu.has_avx512_vnni()) {
    decode = pq2_rows_avx512_lanes;
  } else if (cpu.has_avx_vnni()) {
    decode = pq2_rows_avxvnni;
  } else if (cpu.has_avx2_fma()) {
    decode = cpu.split_256 ? pq2_rows_avx2_words : pq2_rows_avx2;
  }
  if (cpu.has_amx_int8()) {
    EXPECT_EQ(pq2_prompt_kernel(1), pq2_rows_amx_few);
    EXPECT_EQ(pq2_prompt_kernel(kAmxMinTokens - 1), pq2_rows_amx_few);
    EXPECT_EQ(pq2_prompt_kernel(kAmxMinTokens), pq2_rows_amx);
  } else if (cpu.has_avx512_vnni()) {
    EXPECT_EQ(pq2_prompt_kernel(1), pq2_rows_avx512_groups);
    EXPECT_EQ(pq2_prompt_kernel(kPanelMinTokens - 1), pq2_rows_avx512_groups);
    EXPECT_EQ(pq2_prompt_kernel(kPanelMinTokens), pq2_rows_avx512_panels);
    EXPECT_EQ(pq2_prompt_kernel(512), pq2_rows_avx512_panels);
  } else if (cpu.has_avx_vnni()) {
    EXPECT_EQ(pq2_prompt_kernel(1), pq2_rows_avxvnni_panels);
    EXPECT_EQ(pq2_prompt_kernel(512), pq2_rows_avxvnni_panels);
  }
#elif defined(__aarch64__)
  if (cpu.dotprod) {
    decode = pq2_rows_dotprod;
  } else if (cpu.neon) {
    decode = pq2_rows_neon;
  }
#endif
  EXPECT_EQ(pq2_decode_kernel(), decode);
#if defined(__x86_64__)
  EXPECT_EQ(pq2_decode_in_block_order(), cpu.has_avx512_vbmi());
  EXPECT_EQ(pq2_decode_in_lane_order(), !cpu.has_avx512_vnni());
  // Batched or mixed decode takes the prompt kernels only where they give its bits on AMX tiles.
  const bool tiles = cpu.has_avx512_vbmi() && cpu.has_amx_int8();
  EXPECT_FALSE(pq2_decode_takes_prompt_kernel(kAmxDecodeMinTokens - 1, 0));
  EXPECT_EQ(pq2_decode_takes_prompt_kernel(kAmxDecodeMinTokens, 0), tiles);
  EXPECT_EQ(pq2_decode_takes_prompt_kernel(1, 1), tiles);
#else
  EXPECT_FALSE(pq2_decode_takes_prompt_kernel(kAmxDecodeMinTokens, 1));
  EXPECT_FALSE(pq2_decode_in_block_order());
  EXPECT_TRUE(pq2_decode_in_lane_order());
#endif
  if (!cpu.has_avx512_vnni() && !cpu.has_avx_vnni()) {
    EXPECT_EQ(pq2_prompt_kernel(512), decode);
  }
}

// Every lane-order kernel runs the scalar kernel's arithmetic lane for lane, so all give the same bits for
// any rows, range and token count, and x86 and ARM decode alike.
TEST(CpuPq2Matmul, LaneOrderKernelsEqualScalarBitForBit) {
  for (int64_t cols : {640, 5120}) {
    for (int64_t tokens : {1, 2, 5}) {
      for (int64_t rows : {1, 3, 8, 13}) {
        const Weights w = random_weights(rows, cols, static_cast<uint32_t>(tokens * rows + cols));
        const std::vector<float> x = random_acts(tokens * cols, static_cast<uint32_t>(tokens));
        ActBuffer buffer;
        const QuantizedActs acts = buffer.quantize(x.data(), cols, tokens);
        const int64_t begin = rows > 4 ? 1 : 0;
        std::vector<float> want(static_cast<size_t>(rows * tokens), -7.0f);
        pq2_rows_scalar(want.data(), rows, w.view, acts, begin, rows);
        for (const auto& [name, kernel] : lane_order_kernels()) {
          std::vector<float> got(want.size(), -7.0f);
          kernel(got.data(), rows, w.view, acts, begin, rows);
          EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
              << name << ": cols " << cols << " rows " << rows << " tokens " << tokens;
        }
      }
    }
  }
}

#if defined(__x86_64__)
// The words kernel lays out each chunk of tokens on its own: three chunks here, the last one short. Every
// code 3 (+2·d) against activations all at their largest digits (|256·hi + lo| = 32512) puts its int32
// sums at their largest (8 · 768 · 32512 for the odd words of a lane).
TEST(CpuPq2Matmul, Avx2WordsKernelGivesAvx2BitsOverChunksAndAtTheLargestSums) {
  if (!cpu_features().has_avx2_fma()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  constexpr int64_t kCols = 5120, kRows = 6;
  const int64_t tokens = 2 * prompt_chunk_tokens(kCols / 128 * kActBlockBytes, 4) + 3;
  Weights all_three = random_weights(kRows, kCols, 41);
  uint8_t threes[128];
  std::fill(std::begin(threes), std::end(threes), uint8_t{3});
  for (size_t at = 0; at < all_three.bytes.size(); at += quant::kPq2Bytes)
    quant::pq2_pack(threes, fp32_to_fp16(0.03f), all_three.bytes.data() + at);
  std::vector<float> largest(static_cast<size_t>(tokens * kCols), 1.0f);
  for (size_t i = static_cast<size_t>(kCols); i < largest.size(); i += 2) largest[i] = -1.0f;
  Weights random = random_weights(kRows, kCols, 42);
  std::vector<float> x = random_acts(tokens * kCols, 43);
  for (const Weights* w : {&random, &all_three}) {
    for (const std::vector<float>* acts_in : {&x, &largest}) {
      ActBuffer buffer;
      const QuantizedActs acts = buffer.quantize(acts_in->data(), kCols, tokens);
      for (int64_t n : {int64_t{1}, tokens}) {
        std::vector<float> want(static_cast<size_t>(kRows * n), -7.0f), got(want.size(), -5.0f);
        pq2_rows_avx2(want.data(), kRows, w->view, acts.slice(0, n), 0, kRows);
        pq2_rows_avx2_words(got.data(), kRows, w->view, acts.slice(0, n), 0, kRows);
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
            << "tokens " << n << (w == &all_three ? ", every code 3" : "")
            << (acts_in == &largest ? ", largest activations" : "");
      }
    }
  }
}
#endif

TEST(CpuPq2Matmul, ThreadedEqualsSingleThreadBitForBit) {
  // Large enough (126 row groups × 8 blocks) that the pool really splits the rows: guided parts for
  // decode-sized calls (1 and 3 tokens), equal parts for a prompt chunk (9).
  const Weights w = random_weights(2003, 1024, 9);
  for (int64_t tokens : {1, 3, 9}) {
    const std::vector<float> x = random_acts(tokens * 1024, 10);
    ActBuffer buffer;
    const QuantizedActs acts = buffer.quantize(x.data(), 1024, tokens);
    std::vector<float> one(static_cast<size_t>(tokens * 2003));
    pq2_matmul(one.data(), w.view, acts, nullptr);
    for (int threads : {2, 3, 7}) {
      ThreadPool pool(threads);
      std::vector<float> many(one.size(), -1.0f);
      pq2_matmul(many.data(), w.view, acts, &pool);
      EXPECT_EQ(one, many) << "tokens " << tokens << " threads " << threads;
    }
  }
}

TEST(CpuPq2Matmul, SharedPassEqualsSeparateMatmulsBitForBit) {
  constexpr int64_t kTokens = 8;  // 11 row groups × 8 blocks × 8 tokens: split over the pool
  const Weights a = random_weights(37, 1024, 21), b = random_weights(8, 1024, 22),
                c = random_weights(101, 1024, 23);
  const std::vector<float> x = random_acts(kTokens * 1024, 24);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), 1024, kTokens);
  ThreadPool pool(2);
  for (const auto& [name, kernel] : kernels()) {
    std::vector<float> ya(kTokens * 37), yb(kTokens * 8), yc(kTokens * 101);
    const TernaryTarget targets[] = {{ya.data(), a.view}, {yb.data(), b.view}, {yc.data(), c.view}};
    pq2_matmul_shared(targets, acts, &pool, kernel);
    for (const TernaryTarget& t : targets) {
      std::vector<float> alone(static_cast<size_t>(kTokens * t.w.rows));
      pq2_matmul(alone.data(), t.w, acts, nullptr, kernel);
      EXPECT_EQ(alone, std::vector<float>(t.y, t.y + alone.size())) << name << " rows " << t.w.rows;
    }
  }
}

TEST(CpuPq2Matmul, RefusesMismatchedWidth) {
  const Weights w = random_weights(4, 256, 11);
  const std::vector<float> x = random_acts(128, 12);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), 128, 1);
  std::vector<float> y(4);
  EXPECT_THROW(pq2_matmul(y.data(), w.view, acts, nullptr), Error);
}

// The stand-in writes 0 to exactly its rows of every token and nothing else.
TEST(CpuPq2Matmul, ReadOnlyKernelZeroesExactlyItsRows) {
  const Weights w = random_weights(40, 256, 3);
  const std::vector<float> x = random_acts(2 * 256, 4);
  ActBuffer buffer;
  const QuantizedActs acts = buffer.quantize(x.data(), 256, 2);
  std::vector<float> y(2 * 40, 7.0f);
  pq2_rows_read_only(y.data(), 40, w.view, acts, 9, 31);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t r = 0; r < 40; ++r)
      EXPECT_EQ(y[static_cast<size_t>(t * 40 + r)], r >= 9 && r < 31 ? 0.0f : 7.0f) << t << " " << r;
}

// Every pattern reads every word once: parts split evenly, and a tail that no part takes.
TEST(CpuProbes, StreamSumsReadEveryWordOnceInEveryPattern) {
  constexpr size_t kSteps = 37;  // prime, so 4 and 8 streams leave a tail
  struct alignas(64) Buffer {
    uint64_t words[kSteps * kStreamStep / sizeof(uint64_t)];
  } buffer;
  std::mt19937_64 rng(11);
  uint64_t expected = 0;
  for (uint64_t& w : buffer.words) expected += (w = rng());
  const auto* bytes = reinterpret_cast<const uint8_t*>(buffer.words);
  std::vector<StreamSum> loops = {stream_sum_kernel(), stream_sum_scalar};
#if defined(__x86_64__)
  if (cpu_features().has_avx2_fma()) loops.push_back(stream_sum_avx2);
  if (cpu_features().avx512f) loops.push_back(stream_sum_avx512);
#elif defined(__aarch64__)
  loops.push_back(stream_sum_neon);
#endif
  for (const StreamSum loop : loops) {
    for (const StreamPattern pattern :
         {StreamPattern{1, false}, StreamPattern{1, true}, StreamPattern{3, true}, StreamPattern{4, false},
          StreamPattern{8, false}}) {
      EXPECT_EQ(loop(bytes, sizeof buffer.words, pattern), expected)
          << pattern.streams << " streams, prefetch " << pattern.prefetch;
    }
  }
}

TEST(CpuProbes, ReadBandwidthIsPositiveAndFiniteWithTheMedianPassAtMostTheBest) {
  ThreadPool pool(2);
  const ReadBandwidth read = measure_read_bandwidth(pool, size_t{4} << 20);
  EXPECT_GT(read.median_gb_s, 0.0);
  EXPECT_LE(read.median_gb_s, read.best_gb_s);
  EXPECT_TRUE(std::isfinite(read.best_gb_s));
}

}  // namespace
}  // namespace tern::kernels::cpu
