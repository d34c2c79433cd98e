#include "model/gdn_order.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace tern::model {
namespace {

// The converter's grouped→tiled reorder (model-spec Appendix A), written as the axis swap it is:
// view [n_k][rep][hs], swap the first two axes to [rep][n_k][hs].
std::vector<float> converter_tile(const std::vector<float>& grouped, int64_t n_k, int64_t rep, int64_t hs) {
  std::vector<float> tiled(grouped.size());
  for (int64_t k = 0; k < n_k; ++k) {
    for (int64_t r = 0; r < rep; ++r) {
      for (int64_t i = 0; i < hs; ++i) tiled[(r * n_k + k) * hs + i] = grouped[(k * rep + r) * hs + i];
    }
  }
  return tiled;
}

TEST(GdnOrder, UntileInvertsTheConverterPermutation) {
  for (auto [n_k, rep, hs] :
       {std::tuple<int64_t, int64_t, int64_t>{16, 3, 2}, {2, 3, 4}, {3, 2, 1}, {4, 1, 3}}) {
    std::vector<float> grouped(static_cast<size_t>(n_k * rep * hs));
    for (size_t i = 0; i < grouped.size(); ++i) grouped[i] = static_cast<float>(i);
    const std::vector<float> tiled = converter_tile(grouped, n_k, rep, hs);
    std::vector<float> back(grouped.size()), retiled(grouped.size());
    untile_heads(back.data(), tiled.data(), n_k, rep, hs);
    EXPECT_EQ(back, grouped) << n_k << "x" << rep;
    tile_heads(retiled.data(), grouped.data(), n_k, rep, hs);
    EXPECT_EQ(retiled, tiled) << n_k << "x" << rep;
    if (rep > 1 && n_k > 1) {
      EXPECT_NE(tiled, grouped);  // the geometry can see a missing permute
    }
  }
}

TEST(GdnOrder, SpecExamplesFor27B) {
  // §4.5: tiled slot j holds grouped head (j mod 16)·3 + j/16; grouped g sits in slot (g mod 3)·16 + g/3.
  EXPECT_EQ(tiled_slot_of_grouped(0, 16, 3), 0);
  EXPECT_EQ(tiled_slot_of_grouped(1, 16, 3), 16);
  EXPECT_EQ(tiled_slot_of_grouped(2, 16, 3), 32);
  EXPECT_EQ(tiled_slot_of_grouped(3, 16, 3), 1);
  EXPECT_EQ(tiled_slot_of_grouped(47, 16, 3), 47);
  for (int64_t j = 0; j < 48; ++j) EXPECT_EQ(tiled_slot_of_grouped((j % 16) * 3 + j / 16, 16, 3), j);
}

}  // namespace
}  // namespace tern::model
