#include "runtime/sequence_state.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "core/available_memory.h"
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
  // The KV of 10 positions is held in one whole block of 16 (kernels::ref::kKvBlockPositions).
  EXPECT_EQ(f16.bytes(), 2 * 16 * 16 * 2 + gdn);
  EXPECT_EQ(f32.bytes(), 2 * 16 * 16 * 4 + gdn);
  EXPECT_EQ(q8.bytes(), 2 * 16 * (16 + 2 * 4) + gdn);  // head_dim 8: one scale per head and position
  EXPECT_EQ(kv_head_bytes(KvPrecision::kQ8, 256), 256u + 8u * 4u);
  EXPECT_EQ(f16.conv_state(2).size(), 3u * 48u);
  EXPECT_EQ(f16.recurrent_state(0).size(), 4u * 8u * 4u);
  EXPECT_TRUE(f16.fits(c));
  model::Config other = c;
  other.gdn_n_v = 8;
  other.gdn_inner = 32;
  EXPECT_FALSE(f16.fits(other));
}

// Index in a small_config() cache array of element i (head i / 8, dimension i % 8) of position pos.
int64_t element(int64_t pos, int64_t i) {
  return kernels::ref::kv_row(pos, i / 8, 2) * 8 + i % 8;
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
        EXPECT_EQ(static_cast<const uint16_t*>(view.k)[element(3, i)], fp32_to_fp16(k[i]));
        EXPECT_EQ(static_cast<const uint16_t*>(view.v)[element(3, i)], fp32_to_fp16(v[i]));
      } else {
        EXPECT_EQ(static_cast<const float*>(view.k)[element(3, i)], k[i]);
        EXPECT_EQ(static_cast<const float*>(view.v)[element(3, i)], v[i]);
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
    EXPECT_EQ(view.k_scales[kernels::ref::kv_row(4, head, 2)], scale);  // one group a head
    for (int d = 0; d < 8; ++d) {
      const int8_t stored = static_cast<const int8_t*>(view.k)[element(4, head * 8 + d)];
      EXPECT_EQ(stored, codes[d]);
      EXPECT_LE(std::fabs(static_cast<float>(stored) * scale - k[head * 8 + d]), 0.5f * scale * 1.0001f);
    }
  }
  EXPECT_EQ(static_cast<const int8_t*>(view.v)[element(4, 0)], 127);  // v[0] = 1 is its group's maximum
}

TEST(SequenceState, KvBlocksHoldEachHeadsPositionsTogether) {
  const model::Config c = small_config();
  SequenceState s(c, 40, KvPrecision::kF32);
  std::vector<float> k(16), v(16, 0.0f);
  for (int i = 0; i < 16; ++i) k[i] = static_cast<float>(i);
  s.store_kv(0, 17, k.data(), v.data());
  const auto* keys = static_cast<const float*>(s.kv_view(0).k);
  // Block 1 (positions 16..31): head 0's 16 rows, then head 1's; position 17 is row 1 of each run.
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(keys[(2 * 16 + 1) * 8 + d], k[d]);
    EXPECT_EQ(keys[(3 * 16 + 1) * 8 + d], k[8 + d]);
  }
}

TEST(SequenceState, SavedKvRowsLoadBackBitForBit) {
  const model::Config c = small_config();
  for (KvPrecision precision : {KvPrecision::kF16, KvPrecision::kF32, KvPrecision::kQ8}) {
    SequenceState s(c, 20, precision);
    std::vector<float> k(16), v(16);
    for (int64_t pos = 0; pos < 20; ++pos) {
      for (int i = 0; i < 16; ++i) {
        k[i] = std::sin(static_cast<float>(pos * 16 + i));
        v[i] = std::cos(static_cast<float>(pos * 16 + i)) * 3.0f;
      }
      s.store_kv(0, pos, k.data(), v.data());
    }
    // 18 positions span two blocks of 16, which are copied whole: K and V, 32 positions of 2 heads.
    const std::vector<uint8_t> saved = s.save_kv(18);
    ASSERT_EQ(saved.size(), s.kv_bytes(18));
    EXPECT_EQ(saved.size(), 2u * 32u * 2u * kv_head_bytes(precision, 8));
    SequenceState copy(c, 40, precision);
    copy.load_kv(saved, 18);
    EXPECT_EQ(copy.save_kv(18), saved) << kv_precision_name(precision);
    EXPECT_EQ(
        std::memcmp(copy.kv_view(0).k, s.kv_view(0).k, 32 * 16 * kernels::ref::kv_element_bytes(precision)),
        0);
    EXPECT_THROW(copy.load_kv(saved, 33), Error);  // three blocks' bytes expected
    SequenceState other(c, 40, precision == KvPrecision::kQ8 ? KvPrecision::kF16 : KvPrecision::kQ8);
    EXPECT_THROW(other.load_kv(saved, 18), Error);
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

TEST(SequenceState, StateBytesAreWhatTheStateHolds) {
  const model::Config c = small_config();
  for (const KvPrecision kv : {KvPrecision::kF16, KvPrecision::kF32, KvPrecision::kQ8}) {
    for (const int64_t capacity : {1, 10, 16, 17, 100}) {
      EXPECT_EQ(sequence_state_bytes(c, capacity, kv), SequenceState(c, capacity, kv).bytes())
          << kv_precision_name(kv) << " " << capacity;
    }
  }
}

// 2^40 positions of small_config's KV are 64 TiB in f16: past any machine's memory, the constructor
// says so before it allocates, instead of the OOM killer ending the process while it zero-fills.
TEST(SequenceState, RefusesAStatePastTheMemoryAvailable) {
  try {
    SequenceState s(small_config(), int64_t{1} << 40);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCapacity);
    EXPECT_NE(std::string(e.what()).find("1 sequence of 1099511627776 tokens (f16 KV): 65536.0 GiB of KV "
                                         "cache and recurrent state needed, "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(" GiB of memory available"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_state_memory(1 << 20, "a MiB"));
}

TEST(SequenceState, DescribesStatesInTheSingularAndThePlural) {
  EXPECT_EQ(describe_states(1, 4096, KvPrecision::kF16), "1 sequence of 4096 tokens (f16 KV)");
  EXPECT_EQ(describe_states(2, 8, KvPrecision::kQ8), "2 sequences of 8 tokens (q8 KV)");
}

// Mapped weights are page cache, counted as available: states that fit only by evicting them are named in
// a warning; states that fit beside them are not, nor states check_state_memory refuses.
TEST(SequenceState, WarnsOfStatesThatEvictMappedWeights) {
  const std::optional<uint64_t> available = available_memory_bytes();
  ASSERT_TRUE(available.has_value());
  EXPECT_FALSE(mapped_weights_warning(1 << 20, 1 << 20, "a MiB").has_value());
  EXPECT_FALSE(mapped_weights_warning(1 << 20, 0, "a MiB").has_value());
  const std::optional<std::string> warning = mapped_weights_warning(1 << 30, *available, "2 sequences");
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("2 sequences: 1.0 GiB of KV cache and recurrent state and "), std::string::npos)
      << *warning;
  EXPECT_NE(warning->find(" GiB of mapped weights (--mmap) exceed the "), std::string::npos) << *warning;
  EXPECT_TRUE(mapped_weights_warning(1 << 30, UINT64_MAX, "all").has_value());   // no wrap-around
  EXPECT_FALSE(mapped_weights_warning(UINT64_MAX, 1 << 30, "all").has_value());  // refused, not warned of
}

TEST(SequenceState, SaturatingArithmeticStopsAtTheLargestValue) {
  EXPECT_EQ(saturating_sum(3, 4), 7u);
  EXPECT_EQ(saturating_sum(UINT64_MAX - 4, 4), UINT64_MAX);
  EXPECT_EQ(saturating_sum(UINT64_MAX - 4, 5), UINT64_MAX);
  EXPECT_EQ(saturating_sum(5, UINT64_MAX - 4), UINT64_MAX);
  EXPECT_EQ(saturating_product(3, 4), 12u);
  EXPECT_EQ(saturating_product(UINT64_MAX / 2, 2), UINT64_MAX - 1);
  EXPECT_EQ(saturating_product(UINT64_MAX / 2 + 1, 2), UINT64_MAX);
  EXPECT_EQ(saturating_product(UINT64_MAX, 0), 0u);
}

}  // namespace
}  // namespace tern::runtime
