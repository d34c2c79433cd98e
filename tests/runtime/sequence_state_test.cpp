#include "runtime/sequence_state.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "core/half.h"

namespace tern::runtime {
namespace {

model::Config small_config() {
  model::Config c;
  c.n_layer = 4;
  c.layers = {model::LayerKind::kGatedDeltaNet, model::LayerKind::kGatedDeltaNet,
              model::LayerKind::kGatedDeltaNet, model::LayerKind::kFullAttention};
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 8;
  c.conv_kernel = 4;
  c.gdn_n_k = 2;
  c.gdn_n_v = 4;
  c.gdn_k_head_dim = 8;
  c.gdn_v_head_dim = 4;
  c.gdn_inner = 16;
  return c;
}

TEST(SequenceState, SizesFollowTheConfig) {
  const model::Config c = small_config();
  ASSERT_EQ(c.n_attention_layers(), 1);
  SequenceState f16(c, 10);
  SequenceState f32(c, 10, KvPrecision::kF32);
  SequenceState q8(c, 10, KvPrecision::kQ8);
  const size_t gdn = 3 * (3 * (2 * 16 + 16) + 4 * 8 * 4) * sizeof(float);
  EXPECT_EQ(f16.bytes(), 2 * 10 * 16 * 2 + gdn);
  EXPECT_EQ(f32.bytes(), 2 * 10 * 16 * 4 + gdn);
  EXPECT_EQ(q8.bytes(), 2 * 10 * (16 + 2 * 4) + gdn);  // head_dim 8: one scale per head and position
  EXPECT_EQ(kv_head_bytes(KvPrecision::kQ8, 256), 256u + 8u * 4u);
  EXPECT_EQ(f16.conv_state(2).size(), 3u * 48u);
  EXPECT_EQ(f16.recurrent_state(0).size(), 4u * 8u * 4u);
  EXPECT_TRUE(f16.fits(c));
  model::Config other = c;
  other.gdn_n_v = 8;
  other.gdn_inner = 32;
  EXPECT_FALSE(f16.fits(other));
}

TEST(SequenceState, KvStoresRoundToTheStorageType) {
  const model::Config c = small_config();
  std::vector<float> k(16), v(16);
  for (int i = 0; i < 16; ++i) {
    k[i] = 0.1f * static_cast<float>(i) + 1e-4f;
    v[i] = -k[i];
  }
  for (KvPrecision precision : {KvPrecision::kF16, KvPrecision::kF32}) {
    SequenceState s(c, 5, precision);
    s.store_kv(0, 3, k.data(), v.data());
    const kernels::ref::KvView view = s.kv_view(0);
    EXPECT_EQ(view.n_kv, 2);
    EXPECT_EQ(view.head_dim, 8);
    for (int i = 0; i < 16; ++i) {
      if (precision == KvPrecision::kF16) {
        EXPECT_EQ(static_cast<const uint16_t*>(view.k)[3 * 16 + i], fp32_to_fp16(k[i]));
        EXPECT_EQ(static_cast<const uint16_t*>(view.v)[3 * 16 + i], fp32_to_fp16(v[i]));
      } else {
        EXPECT_EQ(static_cast<const float*>(view.k)[3 * 16 + i], k[i]);
        EXPECT_EQ(static_cast<const float*>(view.v)[3 * 16 + i], v[i]);
      }
    }
  }
}

TEST(SequenceState, Q8StoresCodesAndScalesPerHead) {
  const model::Config c = small_config();
  std::vector<float> k(16), v(16);
  for (int i = 0; i < 16; ++i) {
    k[i] = 0.37f * static_cast<float>(i) - 2.0f;
    v[i] = 1.0f / static_cast<float>(i + 1);
  }
  SequenceState s(c, 5, KvPrecision::kQ8);
  s.store_kv(0, 4, k.data(), v.data());
  const kernels::ref::KvView view = s.kv_view(0);
  ASSERT_EQ(view.precision, KvPrecision::kQ8);
  for (int head = 0; head < 2; ++head) {
    std::vector<int8_t> codes(8);
    float scale = 0.0f;
    kernels::ref::quantize_q8_head(&k[head * 8], 8, codes.data(), &scale);
    EXPECT_EQ(view.k_scales[4 * 2 + head], scale);
    for (int d = 0; d < 8; ++d) {
      const int8_t stored = static_cast<const int8_t*>(view.k)[4 * 16 + head * 8 + d];
      EXPECT_EQ(stored, codes[d]);
      EXPECT_LE(std::fabs(static_cast<float>(stored) * scale - k[head * 8 + d]), 0.5f * scale * 1.0001f);
    }
  }
  EXPECT_EQ(static_cast<const int8_t*>(view.v)[4 * 16], 127);  // v[0] = 1 is its group's maximum
}

TEST(SequenceState, SavedKvRowsLoadBackBitForBit) {
  const model::Config c = small_config();
  for (KvPrecision precision : {KvPrecision::kF16, KvPrecision::kF32, KvPrecision::kQ8}) {
    SequenceState s(c, 6, precision);
    std::vector<float> k(16), v(16);
    for (int64_t pos = 0; pos < 6; ++pos) {
      for (int i = 0; i < 16; ++i) {
        k[i] = std::sin(static_cast<float>(pos * 16 + i));
        v[i] = std::cos(static_cast<float>(pos * 16 + i)) * 3.0f;
      }
      s.store_kv(0, pos, k.data(), v.data());
    }
    const std::vector<uint8_t> saved = s.save_kv(4);
    ASSERT_EQ(saved.size(), s.kv_bytes(4));
    EXPECT_EQ(saved.size(), 2u * 4u * 2u * kv_head_bytes(precision, 8));
    SequenceState copy(c, 8, precision);
    copy.load_kv(saved, 4);
    EXPECT_EQ(copy.save_kv(4), saved) << kv_precision_name(precision);
    EXPECT_THROW(copy.load_kv(saved, 3), Error);
    SequenceState other(c, 8, precision == KvPrecision::kQ8 ? KvPrecision::kF16 : KvPrecision::kQ8);
    EXPECT_THROW(other.load_kv(saved, 4), Error);
  }
}

TEST(SequenceState, KvPrecisionNames) {
  for (KvPrecision precision : {KvPrecision::kF16, KvPrecision::kF32, KvPrecision::kQ8})
    EXPECT_EQ(parse_kv_precision(kv_precision_name(precision)), precision);
  EXPECT_THROW(parse_kv_precision("q4"), Error);
}

TEST(SequenceState, ResetZeroesRecurrentStateAndPosition) {
  SequenceState s(small_config(), 4);
  s.conv_state(1)[5] = 2.0f;
  s.recurrent_state(2)[7] = 3.0f;
  s.advance(3);
  EXPECT_EQ(s.position(), 3);
  SequenceState checkpoint = s;
  s.reset();
  EXPECT_EQ(s.position(), 0);
  EXPECT_EQ(s.conv_state(1)[5], 0.0f);
  EXPECT_EQ(s.recurrent_state(2)[7], 0.0f);
  EXPECT_EQ(checkpoint.recurrent_state(2)[7], 3.0f);  // a copy is an independent checkpoint
}

TEST(SequenceState, RefusesNonPositiveCapacity) {
  try {
    SequenceState s(small_config(), 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
  }
}

}  // namespace
}  // namespace tern::runtime
