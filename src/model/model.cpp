#include "model/model.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "core/cpu_features.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "model/fold_coverage.h"
#include "quant/codec.h"
#include "quant/pq2_panels.h"
#include "quant/trit_panels.h"

namespace tern::model {

namespace {

constexpr int64_t kTokenTypeUnused = 5;

std::vector<bool> read_unused_tokens(const gguf::Reader& file, int64_t vocab) {
  std::vector<bool> unused;
  const gguf::Value* types = file.find("tokenizer.ggml.token_type");
  if (types == nullptr) return unused;
  const gguf::Array* array = std::get_if<gguf::Array>(&types->data);
  if (array == nullptr || static_cast<int64_t>(array->items.size()) > vocab) {
    fail(ErrorKind::kConfig, "{}: tokenizer.ggml.token_type must be an array of at most {} entries",
         file.name(), vocab);
  }
  unused.reserve(array->items.size());
  for (const gguf::Value& v : array->items) {
    const int64_t* s = std::get_if<int64_t>(&v.data);
    const uint64_t* u = std::get_if<uint64_t>(&v.data);
    unused.push_back((s != nullptr && *s == kTokenTypeUnused) || (u != nullptr && *u == kTokenTypeUnused));
  }
  return unused;
}

FoldSites resolve_sites(const Config& c, const hadamard::Contract* contract) {
  FoldSites sites;
  if (contract == nullptr) return sites;
  sites.enabled = true;
  sites.block = contract->block_size;
  sites.model_width = contract->signs_for(c.d_model);
  sites.attention_output =
      c.n_attention_layers() > 0 ? contract->signs_for(c.n_head * c.head_dim) : std::span<const float>{};
  sites.gdn_output =
      c.n_attention_layers() < c.n_layer ? contract->signs_for(c.gdn_inner) : std::span<const float>{};
  sites.ffn_inner = contract->signs_for(c.d_ff);
  return sites;
}

// Runs range(first, last) over contiguous ranges splitting [0, units) among `threads` threads (0: every
// allowed CPU), the calling thread taking the first; the first error is rethrown on the caller.
void split_over_threads(int64_t units, int threads, const std::function<void(int64_t, int64_t)>& range) {
  const int64_t parts = std::clamp<int64_t>(ThreadPool::resolve(threads), 1, std::max<int64_t>(units, 1));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  {
    std::vector<std::jthread> workers;
    for (int64_t p = 1; p < parts; ++p) {
      workers.emplace_back([&, p] {
        try {
          range(units * p / parts, units * (p + 1) / parts);
        } catch (...) {
          errors[static_cast<size_t>(p)] = std::current_exception();
        }
      });
    }
    try {
      range(0, units / parts);
    } catch (...) {
      errors[0] = std::current_exception();
    }
  }
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

// Rows of m packed by `pack` (quant::pack_pq2_panels, quant::pack_trit_panels_ptq1) into panels of
// panel_bytes at `out`, split over threads by whole panels so that each thread writes a range of its own.
using PanelPacker = void (*)(const uint8_t* src, size_t src_row_bytes, int64_t rows, int64_t k, uint8_t* out);
void pack_in_panels(const kernels::MatrixView& m, uint8_t* out, int threads, size_t panel_bytes,
                    PanelPacker pack) {
  const int64_t panels = (m.rows + quant::kPq2PanelRows - 1) / quant::kPq2PanelRows;
  split_over_threads(panels, threads, [&](int64_t first, int64_t last) {
    const int64_t row = first * quant::kPq2PanelRows;
    const int64_t rows = std::min(last * quant::kPq2PanelRows, m.rows) - row;
    if (rows > 0) pack(m.row(row), m.row_bytes, rows, m.cols, out + static_cast<size_t>(first) * panel_bytes);
  });
}

}  // namespace

std::unique_ptr<const Model> Model::open(const std::string& path, LoadOptions options) {
  return load(gguf::Reader::open(path), options);
}

std::unique_ptr<const Model> Model::load(gguf::Reader file, LoadOptions options) {
  return std::unique_ptr<const Model>(new Model(std::move(file), options));
}

Model::Model(gguf::Reader file, LoadOptions options) : file_(std::move(file)) {
  config_ = read_config(file_);
  contract_ = hadamard::read_contract(file_);
  if (contract_) check_contract_covers(*contract_, config_, file_);
  weights_ = bind_weights(file_, config_, contract());
  place_matrices(options);
  sites_ = resolve_sites(config_, contract());
  unused_token_ = read_unused_tokens(file_, config_.vocab_size);
}

Ptq1Form default_ptq1_form() {
  return cpu_features().has_avx512_vbmi() ? Ptq1Form::kTritPanels : Ptq1Form::kPq2_0;
}

Ptq1Form parse_ptq1_form(const std::string& name) {
  if (name == "auto") return default_ptq1_form();
  if (name == "panels") return Ptq1Form::kTritPanels;
  if (name == "planes") return Ptq1Form::kTritPlanes;
  if (name == "rows") return Ptq1Form::kTritRows;
  if (name == "pq2_0") return Ptq1Form::kPq2_0;
  fail(ErrorKind::kInput, "--ptq1-form must be auto, panels, planes, rows or pq2_0, not '{}'", name);
}

Pq2Form default_pq2_form() {
  return cpu_features().has_avx512_vbmi() ? Pq2Form::kPanels : Pq2Form::kRows;
}

Pq2Form parse_pq2_form(const std::string& name) {
  if (name == "auto") return default_pq2_form();
  if (name == "rows") return Pq2Form::kRows;
  if (name == "panels") return Pq2Form::kPanels;
  fail(ErrorKind::kInput, "--pq2-form must be auto, rows or panels, not '{}'", name);
}

// The scalar codec re-packs ≈ 150 MB of PTQ1_0 a second per thread, so the rows are split over threads:
// contiguous ranges, each written by one thread.
void Model::repack_ptq1(const kernels::MatrixView& m, uint8_t* out, size_t row_bytes, int threads) const {
  if (ptq1_placed_ == quant::TensorType::kTritPanels) {
    pack_in_panels(m, out, threads, quant::trit_panel_bytes(m.cols), quant::pack_trit_panels_ptq1);
    return;
  }
  split_over_threads(m.rows, threads, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      quant::transcode_row(quant::TensorType::kPTQ1_0, ptq1_placed_, m.row(r),
                           out + static_cast<size_t>(r) * row_bytes, m.cols, file_.name().c_str());
    }
  });
}

void Model::place_matrices(const LoadOptions& options) {
  // The embedding stays mapped in its own type in both placements: a token reads one row of it. A role
  // the layer does not have (an attention matrix of a GDN layer) is an empty view and stays one.
  const auto moves = [&](const kernels::MatrixView& m) {
    return m.data != nullptr && &m != &weights_.token_embd &&
           (m.type == quant::TensorType::kPTQ1_0 || options.placement == WeightPlacement::kHugePages);
  };
  switch (options.ptq1_form) {
    case Ptq1Form::kTritPanels:
      ptq1_placed_ = quant::TensorType::kTritPanels;
      break;
    case Ptq1Form::kTritPlanes:
      ptq1_placed_ = quant::TensorType::kTritPlanes;
      break;
    case Ptq1Form::kTritRows:
      ptq1_placed_ = quant::TensorType::kTritRows;
      break;
    case Ptq1Form::kPq2_0:
      ptq1_placed_ = quant::TensorType::kPQ2_0;
      break;
  }
  // Only a copy can change the order of the bytes: mapped PQ2_0 matrices are the file's rows.
  pq2_placed_ = options.placement == WeightPlacement::kHugePages && options.pq2_form == Pq2Form::kPanels
                    ? quant::TensorType::kPq2Panels
                    : quant::TensorType::kPQ2_0;
  // A panel-form view keeps PQ2_0's row_bytes (the bytes of one row), though it takes whole panels.
  const auto placed_row_bytes = [&](const kernels::MatrixView& m) {
    return m.type == quant::TensorType::kPTQ1_0 ? *quant::row_bytes(ptq1_placed_, m.cols) : m.row_bytes;
  };
  const auto placed_bytes = [&](const kernels::MatrixView& m) {
    return quant::is_panel_form(placed_type(m.type))
               ? *quant::matrix_bytes(placed_type(m.type), m.rows, m.cols)
               : placed_row_bytes(m) * static_cast<size_t>(m.rows);
  };
  constexpr size_t kAlign = 64;
  const auto aligned = [](size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; };

  std::map<const uint8_t*, kernels::MatrixView> done;  // a tied head shares its embedding's copy
  size_t total = 0;
  std::set<const uint8_t*> mapped;
  for_each_matrix(weights_, [&](kernels::MatrixView& m) {
    if (moves(m)) {
      if (done.emplace(m.data, m).second) total += aligned(placed_bytes(m));
    } else if (m.data != nullptr && &m != &weights_.token_embd && mapped.insert(m.data).second) {
      mapped_matrix_bytes_ += m.row_bytes * static_cast<uint64_t>(m.rows);
    }
  });
  placed_ = HugePageBuffer::allocate(total, file_.name().c_str());
  done.clear();
  uint8_t* out = placed_.data();
  for_each_matrix(weights_, [&](kernels::MatrixView& m) {
    if (!moves(m)) return;
    if (auto it = done.find(m.data); it != done.end()) {
      m = it->second;
      return;
    }
    const size_t row_bytes = placed_row_bytes(m);
    const size_t bytes = placed_bytes(m);
    if (m.type == quant::TensorType::kPTQ1_0) {
      repack_ptq1(m, out, row_bytes, options.threads);
    } else if (placed_type(m.type) == quant::TensorType::kPq2Panels) {
      pack_in_panels(m, out, options.threads, quant::pq2_panel_bytes(m.cols), quant::pack_pq2_panels);
    } else {
      std::memcpy(out, m.data, bytes);
    }
    file_.release_pages({m.data, m.row_bytes * static_cast<size_t>(m.rows)});  // never read again
    const kernels::MatrixView placed{placed_type(m.type), out, m.cols, m.rows, row_bytes};
    done.emplace(m.data, placed);
    m = placed;
    out += aligned(bytes);
  });
}

bool Model::accepts_token(int64_t id) const {
  if (id < 0 || id >= config_.vocab_size) return false;
  return static_cast<size_t>(id) >= unused_token_.size() || !unused_token_[static_cast<size_t>(id)];
}

}  // namespace tern::model
