// LoadOptions::pq2_form: PQ2_0 matrices copied to huge pages are packed in panels (quant/pq2_panels.h) or
// kept as rows; mapped ones, the token embedding and PTQ1_0 files keep their forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/cpu_features.h"
#include "core/error.h"
#include "model/model.h"
#include "quant/pq2_panels.h"
#include "tests/model/tiny_model.h"

namespace tern::model {
namespace {

using quant::TensorType;

// The placed ternary matrices of a model, in for_each_matrix order, the token embedding left out.
std::vector<kernels::MatrixView> ternary_matrices(const Model& m) {
  Weights w = m.weights();  // for_each_matrix takes a mutable Weights; the views still point into m
  std::vector<kernels::MatrixView> out;
  for_each_matrix(w, [&](kernels::MatrixView& v) {
    if (v.data != nullptr && quant::is_ternary(v.type) && &v != &w.token_embd) out.push_back(v);
  });
  return out;
}

// A panel-form matrix's bytes, whole panels and padding included.
std::vector<uint8_t> panel_bytes(const kernels::MatrixView& v) {
  return {v.data, v.data + quant::pq2_panels_bytes(v.rows, v.cols)};
}

std::unique_ptr<const Model> open_pq2(Pq2Form form, WeightPlacement placement = WeightPlacement::kHugePages,
                                      int threads = 0) {
  return Model::open(testing_support::tiny_pq2_model(),
                     {.placement = placement, .pq2_form = form, .threads = threads});
}

TEST(Pq2Form, PanelsHoldTheRowsOfTheRowsForm) {
  const auto rows = open_pq2(Pq2Form::kRows);
  const auto panels = open_pq2(Pq2Form::kPanels);
  EXPECT_EQ(rows->placed_type(TensorType::kPQ2_0), TensorType::kPQ2_0);
  EXPECT_EQ(panels->placed_type(TensorType::kPQ2_0), TensorType::kPq2Panels);
  EXPECT_EQ(panels->placed_type(TensorType::kBF16), TensorType::kBF16);
  const std::vector<kernels::MatrixView> a = ternary_matrices(*rows), b = ternary_matrices(*panels);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 10u);
  bool odd_blocks = false;
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "matrix " << i << ", " << a[i].rows << " x " << a[i].cols);
    EXPECT_EQ(a[i].type, TensorType::kPQ2_0);
    ASSERT_EQ(b[i].type, TensorType::kPq2Panels);
    EXPECT_EQ(b[i].rows, a[i].rows);
    EXPECT_EQ(b[i].cols, a[i].cols);
    EXPECT_EQ(b[i].row_bytes, a[i].row_bytes);  // PQ2_0's, as the kernels expect
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b[i].data) % 64, 0u);
    std::vector<uint8_t> back(a[i].row_bytes * static_cast<size_t>(a[i].rows));
    quant::pq2_panels_to_rows(b[i].data, b[i].cols, 0, b[i].rows, back.data());
    EXPECT_TRUE(std::equal(back.begin(), back.end(), a[i].data));
    odd_blocks |= (a[i].cols / 128) % 2 == 1;
  }
  EXPECT_TRUE(odd_blocks) << "the tiny model should have a width of an odd block count (panel padding)";
  // The embedding a token reads one row of stays the file's rows.
  EXPECT_EQ(panels->weights().token_embd.type, TensorType::kPQ2_0);
  EXPECT_EQ(panels->weights().token_embd.data, panels->file().tensor("token_embd.weight").data.data());
}

TEST(Pq2Form, MappedWeightsStayTheFilesRows) {
  const auto mapped = open_pq2(Pq2Form::kPanels, WeightPlacement::kMapped);
  EXPECT_EQ(mapped->placed_type(TensorType::kPQ2_0), TensorType::kPQ2_0);
  const std::vector<kernels::MatrixView> views = ternary_matrices(*mapped);
  ASSERT_FALSE(views.empty());
  std::set<const uint8_t*> in_file;
  for (const gguf::TensorInfo& t : mapped->file().tensors()) in_file.insert(t.data.data());
  for (const kernels::MatrixView& v : views) {
    EXPECT_EQ(v.type, TensorType::kPQ2_0);
    EXPECT_TRUE(in_file.contains(v.data)) << v.rows << " x " << v.cols << " is not the file's tensor";
  }
}

// The pack is split over threads by whole panels; the placed bytes must not depend on how.
TEST(Pq2Form, PanelPackGivesTheSameBytesOnAnyThreadCount) {
  const auto all_bytes = [](const Model& m) {
    std::vector<uint8_t> bytes;
    for (const kernels::MatrixView& v : ternary_matrices(m)) {
      const std::vector<uint8_t> one = panel_bytes(v);
      bytes.insert(bytes.end(), one.begin(), one.end());
    }
    return bytes;
  };
  const std::vector<uint8_t> expected =
      all_bytes(*open_pq2(Pq2Form::kPanels, WeightPlacement::kHugePages, 1));
  ASSERT_FALSE(expected.empty());
  for (int threads : {2, 3, 7, 64}) {
    EXPECT_EQ(all_bytes(*open_pq2(Pq2Form::kPanels, WeightPlacement::kHugePages, threads)), expected)
        << threads << " threads";
  }
}

TEST(Pq2Form, Ptq1MatricesKeepTheirPtq1Form) {
  for (const auto& [form, expected] : {std::pair{Ptq1Form::kTritPanels, TensorType::kTritPanels},
                                       std::pair{Ptq1Form::kTritPlanes, TensorType::kTritPlanes},
                                       std::pair{Ptq1Form::kTritRows, TensorType::kTritRows},
                                       std::pair{Ptq1Form::kPq2_0, TensorType::kPQ2_0}}) {
    for (const WeightPlacement placement : {WeightPlacement::kHugePages, WeightPlacement::kMapped}) {
      const auto m = Model::open(testing_support::tiny_ptq1_model(),
                                 {.placement = placement, .ptq1_form = form, .pq2_form = Pq2Form::kPanels});
      EXPECT_EQ(m->placed_type(TensorType::kPTQ1_0), expected);
      for (const kernels::MatrixView& v : ternary_matrices(*m)) EXPECT_EQ(v.type, expected);
    }
  }
}

TEST(Ptq1Form, ParsesItsNamesAndRefusesOthersNamingTheOption) {
  EXPECT_EQ(parse_ptq1_form("panels"), Ptq1Form::kTritPanels);
  EXPECT_EQ(parse_ptq1_form("planes"), Ptq1Form::kTritPlanes);
  EXPECT_EQ(parse_ptq1_form("rows"), Ptq1Form::kTritRows);
  EXPECT_EQ(parse_ptq1_form("pq2_0"), Ptq1Form::kPq2_0);
  EXPECT_EQ(parse_ptq1_form("auto"), default_ptq1_form());
  EXPECT_EQ(default_ptq1_form(), cpu_features().has_avx512_vbmi() ? Ptq1Form::kTritPanels : Ptq1Form::kPq2_0);
  try {
    parse_ptq1_form("columns");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("--ptq1-form must be auto, panels, planes, rows or pq2_0, not 'columns'"),
        std::string::npos)
        << e.what();
  }
}

TEST(Pq2Form, ParsesItsNamesAndRefusesOthersNamingTheOption) {
  EXPECT_EQ(parse_pq2_form("rows"), Pq2Form::kRows);
  EXPECT_EQ(parse_pq2_form("panels"), Pq2Form::kPanels);
  EXPECT_EQ(parse_pq2_form("auto"), default_pq2_form());
  EXPECT_EQ(LoadOptions{}.pq2_form, default_pq2_form());
  try {
    parse_pq2_form("foo");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("--pq2-form"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("foo"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tern::model
