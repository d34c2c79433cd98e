#include "runtime/sequence_state.h"

#include <gtest/gtest.h>

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
  const size_t gdn = 3 * (3 * (2 * 16 + 16) + 4 * 8 * 4) * sizeof(float);
  EXPECT_EQ(f16.bytes(), 2 * 10 * 16 * 2 + gdn);
  EXPECT_EQ(f32.bytes(), 2 * 10 * 16 * 4 + gdn);
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
