// PTQ1_0 (model-spec §3.4): the base-3 byte code and the staged, non-positional element order. The
// expected values here are computed straight from the spec's table and formulas, not from the library.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "quant/codec.h"

namespace tern::quant {
namespace {

// Where element e lives: byte offset in the 28-byte block, and which trit of that byte (§3.4 table).
struct TritSlot {
  int byte;
  int trit;
};

TritSlot slot_of(int e) {
  if (e < 80) return {e % 16, e / 16};                    // e = 16n + m  <-> trit n of qs[m]
  if (e < 120) return {16 + (e - 80) % 8, (e - 80) / 8};  // e = 80 + 8n + m <-> trit n of qs[16+m]
  return {24 + (e - 120) % 2, (e - 120) / 2};             // e = 120 + 2n + h <-> trit n of qh[h]
}

int spec_trit(uint8_t byte, int n) {
  int pow3 = 1;
  for (int i = 0; i < n; ++i) pow3 *= 3;
  return (((byte * pow3) % 256) * 3) >> 8;
}

uint8_t spec_byte(int v) {
  return static_cast<uint8_t>((v * 256 + 242) / 243);
}

// The spec's decode, written out independently of ptq1_unpack.
std::array<float, 128> spec_decode(const uint8_t* block) {
  const float d = fp16_to_fp32(static_cast<uint16_t>(block[26] | (block[27] << 8)));
  std::array<float, 128> out{};
  for (int e = 0; e < 128; ++e) {
    const TritSlot s = slot_of(e);
    out[e] = static_cast<float>(spec_trit(block[s.byte], s.trit) - 1) * d;
  }
  return out;
}

TEST(Ptq1Bytes, SpecFormulaRoundTripsAllFiveAndFourTritPatterns) {
  for (int v = 0; v < 243; ++v) {
    const uint8_t byte = spec_byte(v);
    for (int n = 0; n < 5; ++n) {
      int digit = v;
      for (int i = n; i < 4; ++i) digit /= 3;
      EXPECT_EQ(spec_trit(byte, n), digit % 3) << "v " << v << " trit " << n;
    }
  }
  for (int v = 0; v < 81; ++v) {  // qh: four trits, stored as v = 3 * (27 t0 + 9 t1 + 3 t2 + t3)
    const uint8_t byte = spec_byte(3 * v);
    for (int n = 0; n < 4; ++n) {
      int digit = v;
      for (int i = n; i < 3; ++i) digit /= 3;
      EXPECT_EQ(spec_trit(byte, n), digit % 3) << "qh v " << v << " trit " << n;
    }
  }
}

// Fills every byte of a block with a pattern number (0..242 for qs, 0..80 for qh), packs the trits
// through the library, and checks each byte against the spec's formula and the unpack against the trits.
TEST(Ptq1Bytes, PackAndUnpackCoverEveryPatternInEveryByte) {
  for (int p = 0; p < 243; ++p) {
    std::array<uint8_t, 128> trits{};
    std::array<int, 26> pattern{};
    for (int b = 0; b < 26; ++b) pattern[b] = b < 24 ? (p + 37 * b) % 243 : (p + 11 * b) % 81;
    for (int e = 0; e < 128; ++e) {
      const TritSlot s = slot_of(e);
      const int digits = s.byte < 24 ? 5 : 4;
      int v = pattern[s.byte];
      for (int i = s.trit; i < digits - 1; ++i) v /= 3;
      trits[e] = static_cast<uint8_t>(v % 3);
    }
    std::array<uint8_t, kPtq1Bytes> block{};
    ptq1_pack(trits.data(), 0x1234, block.data());
    for (int b = 0; b < 26; ++b) {
      const int v = b < 24 ? pattern[b] : 3 * pattern[b];  // 4-trit bytes are shifted up one trit
      ASSERT_EQ(block[b], spec_byte(v)) << "pattern " << p << " byte " << b;
    }
    EXPECT_EQ(block[26], 0x34);  // d LAST, little-endian
    EXPECT_EQ(block[27], 0x12);
    std::array<uint8_t, 128> back{};
    uint16_t d_bits = 0;
    ptq1_unpack(block.data(), back.data(), &d_bits);
    ASSERT_EQ(back, trits) << "pattern " << p;
    EXPECT_EQ(d_bits, 0x1234);
  }
}

TEST(Ptq1Block, DecodesHandCheckedBytes) {
  std::array<uint8_t, kPtq1Bytes> block{};
  block.fill(128);   // 128 = trits (1,1,1,1,1): all zeros
  block[0] = 188;    // qs[0] = trits (2,0,1,2,1) -> elements 0, 16, 32, 48, 64
  block[23] = 188;   // qs[23] -> elements 87, 95, 103, 111, 119
  block[25] = 177;   // qh[1] = trits (2,0,0,2) -> elements 121, 123, 125, 127
  block[26] = 0x00;  // d = 1.0, LAST
  block[27] = 0x3c;
  std::array<float, 128> expected{};
  for (int e : {0, 48, 87, 111, 121, 127}) expected[e] = 1.0f;
  for (int e : {16, 95, 123, 125}) expected[e] = -1.0f;
  std::vector<float> v(128);
  dequantize_row(TensorType::kPTQ1_0, block.data(), v.data(), 128);
  for (int e = 0; e < 128; ++e) EXPECT_EQ(v[e], expected[e]) << "element " << e;
  // The "5 sequential trits per byte" misreading would put qs[0]'s trits at elements 0..4.
  EXPECT_EQ(v[1], 0.0f);
}

TEST(Ptq1Block, RandomBlocksMatchTheSpecDecoder) {
  for (uint32_t seed = 0; seed < 64; ++seed) {
    std::mt19937 rng(seed);
    const int64_t blocks = 6;
    std::vector<uint8_t> row(blocks * kPtq1Bytes);
    for (int64_t b = 0; b < blocks; ++b) {
      std::array<uint8_t, 128> trits{};
      for (auto& t : trits) t = static_cast<uint8_t>(rng() % 3);
      ptq1_pack(trits.data(), static_cast<uint16_t>(rng() & 0x7fffu), row.data() + b * kPtq1Bytes);
    }
    // Also arbitrary bytes: every byte value decodes to some trits, canonical or not.
    if (seed % 2 == 1) {
      for (auto& byte : row) byte = static_cast<uint8_t>(rng());
    }
    std::vector<float> v(blocks * 128);
    dequantize_row(TensorType::kPTQ1_0, row.data(), v.data(), blocks * 128);
    for (int64_t b = 0; b < blocks; ++b) {
      const std::array<float, 128> expected = spec_decode(row.data() + b * kPtq1Bytes);
      for (int e = 0; e < 128; ++e) {
        const float got = v[static_cast<size_t>(b * 128 + e)];
        if (std::isnan(expected[e])) {
          EXPECT_TRUE(std::isnan(got));
        } else {
          ASSERT_EQ(got, expected[e]) << "seed " << seed << " block " << b << " element " << e;
        }
      }
    }
  }
}

TEST(Ptq1Block, PackRefusesTritsAboveTwo) {
  std::array<uint8_t, 128> trits{};
  trits[77] = 3;
  std::array<uint8_t, kPtq1Bytes> block{};
  try {
    ptq1_pack(trits.data(), 0, block.data());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("element 77"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tern::quant
