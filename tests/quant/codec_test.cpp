// dequantize_row / quantize_row for the float types, PQ2_0 and Q2_0, and the ternary quantiser contract
// (model-spec §3.2, §3.3). PTQ1_0's trit layout is in ptq1_test.cpp, transcoding in transcode_test.cpp.
#include "quant/codec.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/half.h"

namespace tern::quant {
namespace {

std::vector<float> dequantize(TensorType type, const std::vector<uint8_t>& bytes, int64_t k) {
  std::vector<float> out(static_cast<size_t>(k));
  dequantize_row(type, bytes.data(), out.data(), k);
  return out;
}

std::vector<uint8_t> quantize(TensorType type, const std::vector<float>& values) {
  const auto k = static_cast<int64_t>(values.size());
  std::vector<uint8_t> out(*row_bytes(type, k));
  quantize_row(type, values.data(), out.data(), k);
  return out;
}

// Offset of the fp16 scale inside one block of a ternary type.
size_t scale_offset(TensorType type) {
  return type == TensorType::kPTQ1_0 ? 26 : 0;
}

uint16_t block_scale(TensorType type, const std::vector<uint8_t>& bytes, int64_t block) {
  const size_t at = static_cast<size_t>(block) * traits(type).block_bytes + scale_offset(type);
  return static_cast<uint16_t>(bytes[at] | (bytes[at + 1] << 8));
}

constexpr std::array<TensorType, 3> kTernaryTypes{TensorType::kPQ2_0, TensorType::kPTQ1_0, TensorType::kQ2_0};

TEST(Pq2Block, DecodesHandCheckedBytes) {
  std::vector<uint8_t> block(kPq2Bytes, 0x55);  // every code 1 -> 0
  block[0] = 0x00;                              // d = 2.0, stored FIRST, little-endian
  block[1] = 0x40;
  block[2] = 0b10010010;   // qs[0]: elements 0..3 = codes 2,0,1,2 (low bits first)
  block[3] = 0xff;         // qs[1]: elements 4..7 = code 3 -> +2d
  block[33] = 0b00011011;  // qs[31]: elements 124..127 = codes 3,2,1,0
  const std::vector<float> v = dequantize(TensorType::kPQ2_0, block, 128);
  const std::vector<float> head{2, -2, 0, 2, 4, 4, 4, 4};
  for (size_t j = 0; j < head.size(); ++j) EXPECT_EQ(v[j], head[j]) << "element " << j;
  for (size_t j = 8; j < 124; ++j) EXPECT_EQ(v[j], 0.0f) << "element " << j;
  EXPECT_EQ(v[124], 4.0f);
  EXPECT_EQ(v[125], 2.0f);
  EXPECT_EQ(v[126], 0.0f);
  EXPECT_EQ(v[127], -2.0f);
}

TEST(Pq2Block, UnpackAndPackAreInverse) {
  std::mt19937 rng(7);
  std::array<uint8_t, 128> codes{};
  for (auto& c : codes) c = static_cast<uint8_t>(rng() % 4);
  std::array<uint8_t, kPq2Bytes> block{};
  pq2_pack(codes.data(), 0xbeef, block.data());
  EXPECT_EQ(block[0], 0xef);
  EXPECT_EQ(block[1], 0xbe);
  for (int j = 0; j < 128; ++j) EXPECT_EQ((block[2 + j / 4] >> (2 * (j % 4))) & 3, codes[j]) << j;
  std::array<uint8_t, 128> back{};
  uint16_t d_bits = 0;
  pq2_unpack(block.data(), back.data(), &d_bits);
  EXPECT_EQ(back, codes);
  EXPECT_EQ(d_bits, 0xbeef);
}

TEST(Q2Block, DecodesGroupsOf64WithTheirOwnScale) {
  std::vector<uint8_t> row(2 * kQ2Bytes, 0x55);
  row[0] = 0x00;  // block 0: d = 1.0
  row[1] = 0x3c;
  row[2] = 0b11100100;  // elements 0..3 = codes 0,1,2,3
  row[18] = 0x00;       // block 1: d = -0.5
  row[19] = 0xb8;
  row[35] = 0b00000010;  // element 124 of the row (60 of block 1) = code 2, 125..127 = code 0
  const std::vector<float> v = dequantize(TensorType::kQ2_0, row, 128);
  EXPECT_EQ(v[0], -1.0f);
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_EQ(v[2], 1.0f);
  EXPECT_EQ(v[3], 2.0f);
  EXPECT_EQ(v[63], 0.0f);
  EXPECT_EQ(v[124], -0.5f);
  EXPECT_EQ(v[125], 0.5f);
  EXPECT_EQ(v[127], 0.5f);
}

TEST(FloatRows, F32IsACopy) {
  const std::vector<float> values{1.5f, -0.0f, std::ldexp(1.0f, -140), 3e38f};
  const std::vector<uint8_t> bytes = quantize(TensorType::kF32, values);
  const std::vector<float> back = dequantize(TensorType::kF32, bytes, 4);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(values[i]));
  }
}

// Every 16-bit pattern decodes and re-encodes to itself (NaNs stay NaN), through the row functions.
void expect_every_pattern_round_trips(TensorType type) {
  std::vector<uint8_t> bytes(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    bytes[2 * h] = static_cast<uint8_t>(h & 0xff);
    bytes[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  const std::vector<float> values = dequantize(type, bytes, 65536);
  const std::vector<uint8_t> back = quantize(type, values);
  for (uint32_t h = 0; h < 65536; ++h) {
    if (std::isnan(values[h])) continue;
    EXPECT_EQ(back[2 * h] | (back[2 * h + 1] << 8), static_cast<int>(h)) << traits(type).name << " " << h;
  }
}

TEST(FloatRows, F16RoundTripsEveryPattern) {
  expect_every_pattern_round_trips(TensorType::kF16);
  const std::vector<float> v = dequantize(TensorType::kF16, {0x00, 0x3c, 0x01, 0x80}, 2);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -std::ldexp(1.0f, -24));
}

TEST(FloatRows, Bf16RoundTripsEveryPatternWithoutGoingThroughFp16) {
  expect_every_pattern_round_trips(TensorType::kBF16);
  // 2^100 is far outside fp16's range; BF16 must keep it (§3.2).
  const std::vector<float> v = dequantize(TensorType::kBF16, {0x80, 0x71, 0x80, 0xbf}, 2);
  EXPECT_EQ(v[0], std::ldexp(1.0f, 100));
  EXPECT_EQ(v[1], -1.0f);
}

TEST(FloatRows, QuantizeRoundsToNearestEven) {
  const std::vector<float> values{1.0f + std::ldexp(1.0f, -11), 1.0f + 3 * std::ldexp(1.0f, -11)};
  const std::vector<uint8_t> f16 = quantize(TensorType::kF16, values);
  EXPECT_EQ(f16, (std::vector<uint8_t>{0x00, 0x3c, 0x02, 0x3c}));
  const std::vector<float> bf{std::bit_cast<float>(0x3f808000u), std::bit_cast<float>(0x3f818000u)};
  EXPECT_EQ(quantize(TensorType::kBF16, bf), (std::vector<uint8_t>{0x80, 0x3f, 0x82, 0x3f}));
}

TEST(TernaryQuantizer, RandomFloatsLandWithinHalfAScaleAndScaleIsFp16OfMaxAbs) {
  for (TensorType type : kTernaryTypes) {
    for (uint32_t seed = 0; seed < 20; ++seed) {
      std::mt19937 rng(seed);
      std::normal_distribution<float> normal(0.0f, std::ldexp(1.0f, static_cast<int>(seed % 9) - 6));
      const int64_t block = traits(type).block_elems;
      const int64_t k = 8 * 128;
      std::vector<float> w(k);
      for (float& x : w) x = normal(rng);
      const std::vector<uint8_t> bytes = quantize(type, w);
      const std::vector<float> back = dequantize(type, bytes, k);
      for (int64_t b = 0; b < k / block; ++b) {
        float amax = 0.0f;
        for (int64_t j = 0; j < block; ++j) amax = std::max(amax, std::fabs(w[b * block + j]));
        const uint16_t d_bits = block_scale(type, bytes, b);
        ASSERT_EQ(d_bits, fp32_to_fp16(amax)) << traits(type).name << " seed " << seed << " block " << b;
        const float d = fp16_to_fp32(d_bits);
        for (int64_t j = 0; j < block; ++j) {
          const size_t i = static_cast<size_t>(b * block + j);
          // One fp32 rounding of w/d may tip an exact half-way case; allow a hair over d/2.
          EXPECT_LE(std::fabs(back[i] - w[i]), 0.5f * d * (1.0f + 1e-6f))
              << traits(type).name << " seed " << seed << " element " << i << " w " << w[i];
        }
      }
    }
  }
}

TEST(TernaryQuantizer, ExactlyTernaryInputRoundTripsBitExactly) {
  const std::array<uint16_t, 6> scales{0x3c00, 0x1f5c, 0x0001, 0x03ff, 0x7bff, 0x2266};
  for (TensorType type : kTernaryTypes) {
    for (uint16_t d_bits : scales) {
      std::mt19937 rng(d_bits);
      const float d = fp16_to_fp32(d_bits);
      std::vector<float> w(4 * 128);
      for (float& x : w) x = static_cast<float>(static_cast<int>(rng() % 3) - 1) * d;
      for (size_t b = 0; b < w.size(); b += 64) w[b] = d;  // every block reaches max|w| = d
      const std::vector<float> back = dequantize(type, quantize(type, w), static_cast<int64_t>(w.size()));
      for (size_t i = 0; i < w.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(w[i]))
            << traits(type).name << " d " << d_bits << " element " << i;
      }
    }
  }
}

TEST(TernaryQuantizer, RoundsHalfwayAwayFromZero) {
  for (TensorType type : kTernaryTypes) {
    std::vector<float> w(128, 0.0f);
    w[0] = 1.0f;
    w[1] = 0.5f;   // w/d = +0.5 -> roundf = 1 -> code 2 (rint would give code 1)
    w[2] = -0.5f;  // -> code 0
    w[3] = 0.49f;
    w[4] = -1.0f;
    const std::vector<float> back = dequantize(type, quantize(type, w), 128);
    EXPECT_EQ(back[1], 1.0f) << traits(type).name;
    EXPECT_EQ(back[2], -1.0f) << traits(type).name;
    EXPECT_EQ(back[3], 0.0f) << traits(type).name;
    EXPECT_EQ(back[4], -1.0f) << traits(type).name;
  }
}

TEST(TernaryQuantizer, DividesByTheStoredFp16Scale) {
  // max|w| = 1 + 0.625 ulp rounds up to the fp16 scale s = 1 + 2^-10. w = max|w|/2 is exactly half of
  // the fp32 max but just under half of s, so against the stored scale it is code 1 (value 0, error
  // < s/2); dividing by the fp32 max would give code 2 (value s, error > s/2).
  const float amax = 1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -13);
  const float s = 1.0f + std::ldexp(1.0f, -10);
  for (TensorType type : kTernaryTypes) {
    std::vector<float> w(128, 0.0f);
    w[0] = amax;
    w[1] = amax / 2;
    const std::vector<uint8_t> bytes = quantize(type, w);
    EXPECT_EQ(fp16_to_fp32(block_scale(type, bytes, 0)), s);
    const std::vector<float> back = dequantize(type, bytes, 128);
    EXPECT_EQ(back[0], s) << traits(type).name;
    EXPECT_EQ(back[1], 0.0f) << traits(type).name;
  }
}

TEST(TernaryQuantizer, ZeroBlockStoresZeroScaleAndCodeOne) {
  const std::vector<float> w(128, 0.0f);
  const std::vector<uint8_t> bytes = quantize(TensorType::kPQ2_0, w);
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[1], 0);
  for (size_t i = 2; i < kPq2Bytes; ++i) EXPECT_EQ(bytes[i], 0x55) << i;  // 4 x code 1 per byte
  // A max|w| below half the smallest subnormal stores d = 0: everything decodes to 0.
  std::vector<float> tiny(128, std::ldexp(1.0f, -26));
  tiny[3] = -std::ldexp(1.0f, -26);
  for (float v : dequantize(TensorType::kPTQ1_0, quantize(TensorType::kPTQ1_0, tiny), 128))
    EXPECT_EQ(v, 0.0f);
}

TEST(TernaryQuantizer, RefusesValuesItCannotScale) {
  for (TensorType type : kTernaryTypes) {
    std::vector<float> w(128, 0.0f);
    w[5] = std::nanf("");
    EXPECT_THROW(quantize(type, w), Error) << traits(type).name;
    w[5] = INFINITY;
    EXPECT_THROW(quantize(type, w), Error) << traits(type).name;
    w[5] = 70000.0f;  // fp16 scale would be inf, and 0 * inf is NaN
    try {
      quantize(type, w);
      ADD_FAILURE() << "no error for " << traits(type).name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInput);
      EXPECT_NE(std::string(e.what()).find("block 0"), std::string::npos) << e.what();
    }
  }
}

TEST(RowLength, MustBeAWholeNumberOfBlocks) {
  std::vector<uint8_t> bytes(4096);
  std::vector<float> values(1024);
  for (TensorType type : kTernaryTypes) {
    for (int64_t k : {int64_t{-128}, int64_t{100}, int64_t{129}}) {
      try {
        dequantize_row(type, bytes.data(), values.data(), k);
        ADD_FAILURE() << "no error for k=" << k;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kInput);
      }
      EXPECT_THROW(quantize_row(type, values.data(), bytes.data(), k), Error);
    }
  }
  EXPECT_NO_THROW(dequantize_row(TensorType::kQ2_0, bytes.data(), values.data(), 64));
  EXPECT_THROW(dequantize_row(TensorType::kPQ2_0, bytes.data(), values.data(), 64), Error);
  EXPECT_NO_THROW(dequantize_row(TensorType::kF16, bytes.data(), values.data(), 3));
  EXPECT_THROW(dequantize_row(TensorType::kF16, bytes.data(), values.data(), -1), Error);
}

}  // namespace
}  // namespace tern::quant
