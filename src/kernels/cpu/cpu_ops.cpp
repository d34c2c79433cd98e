#include "kernels/cpu/cpu_ops.h"

#include <algorithm>
#include <array>

#include "core/thread_pool.h"
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/attention_cpu.h"
#include "kernels/cpu/dense_matmul.h"
#include "kernels/cpu/gdn_cpu.h"
#include "kernels/cpu/norms_cpu.h"
#include "kernels/cpu/pq2_matmul.h"
#include "kernels/cpu/pq2_panel_form.h"
#include "kernels/cpu/silu.h"
#include "kernels/cpu/site_transform.h"
#include "kernels/cpu/trit_panels.h"
#include "kernels/cpu/trit_planes.h"
#include "kernels/cpu/trit_rows.h"
#include "kernels/ref/argmax.h"
#include "kernels/ref/matmul.h"

namespace tern::kernels {

namespace {

thread_local ThreadPool* cpu_pool = nullptr;

constexpr size_t kMaxShared = 8;  // ternary matrices over one activation (q/k/v, gate/up)

bool is_fast_ternary(const MatrixView& w) {
  return w.cols % cpu::kActBlock == 0 && cpu::is_pq2_kernel_form(w.type);
}

cpu::Pq2RowsKernel decode_kernel(quant::TensorType form) {
  switch (form) {
    case quant::TensorType::kTritPlanes:
      return cpu::trit_planes_decode_kernel();
    case quant::TensorType::kPq2Panels:
      return cpu::pq2_panel_form_decode_kernel();
    case quant::TensorType::kTritPanels:
      return cpu::trit_panels_decode_kernel();
    case quant::TensorType::kTritRows:
      return cpu::trit_rows_decode_kernel();
    default:
      return cpu::pq2_decode_kernel();
  }
}

cpu::Pq2RowsKernel prompt_kernel(quant::TensorType form, int64_t n_tokens) {
  switch (form) {
    case quant::TensorType::kTritPlanes:
      return cpu::trit_planes_rows_prompt;
    case quant::TensorType::kPq2Panels:
      return cpu::pq2_panel_form_prompt_kernel(n_tokens);
    case quant::TensorType::kTritPanels:
      return cpu::trit_panels_prompt_kernel(n_tokens);
    case quant::TensorType::kTritRows:
      return cpu::trit_rows_prompt;
    default:
      return cpu::pq2_prompt_kernel(n_tokens);
  }
}

// The token the activations' block steps start from (act_quant.h): the prompt tokens', or with decode
// tokens in block order (pq2_matmul.h) every token's.
int64_t block_steps_from(TokenRows rows) {
  static const bool decode_in_block_order = cpu::pq2_decode_in_block_order();  // cpu_features() is fixed
  return decode_in_block_order ? 0 : rows.decoding;
}

// A matmul's two roles (pq2_matmul.h): decode tokens [0, decoding) take the decode kernel of `form`, the
// prompt tokens after them its prompt kernel (where pq2_decode_takes_prompt_kernel says, all of them take
// that in one pass, with the same bits); with kReadOnly both take the read-only stand-in.
struct RolePass {
  int64_t first = 0, count = 0;
  cpu::Pq2RowsKernel kernel = nullptr;
};
template <bool kReadOnly>
std::array<RolePass, 2> role_passes(quant::TensorType form, TokenRows rows) {
  const int64_t prompt = rows.count - rows.decoding;
  if constexpr (kReadOnly) {
    return {RolePass{0, rows.decoding, cpu::pq2_rows_read_only},
            RolePass{rows.decoding, prompt, cpu::pq2_rows_read_only}};
  } else {
    if (rows.decoding > 0 && cpu::pq2_decode_takes_prompt_kernel(rows.decoding, prompt))
      return {RolePass{0, rows.count, prompt_kernel(form, rows.count)}, RolePass{}};
    return {RolePass{0, rows.decoding, decode_kernel(form)},
            RolePass{rows.decoding, prompt, prompt_kernel(form, prompt)}};
  }
}

// One pass of the targets over tokens [first, first + count) of their shared activations; `dense` (may be
// null) runs in the same job.
void ternary_pass(std::span<const cpu::TernaryTarget> targets, const cpu::QuantizedActs& acts, int64_t first,
                  int64_t count, cpu::Pq2RowsKernel kernel, const cpu::DenseTasks* dense) {
  cpu::TernaryTarget part[kMaxShared];
  for (size_t i = 0; i < targets.size(); ++i)
    part[i] = {targets[i].y + first * targets[i].w.rows, targets[i].w};
  cpu::pq2_matmul_shared({part, targets.size()}, acts.slice(first, count), cpu_pool, kernel, dense);
}

template <bool kReadOnly>
void cpu_matmul_shared(std::span<const MatmulTarget> targets, const float* x, TokenRows rows);

// The targets the ternary kernels do not take: dense ones (the BF16 decay projections) into `dense`, to
// run with the ternary pass; a ternary matrix over other activations or of another width in a call of its
// own; anything else (Q2_0, a conversion format, not a model's) through the oracle.
template <bool kReadOnly>
void sort_others(std::span<const MatmulTarget> others, const float* x, TokenRows rows, MatmulTarget* dense,
                 size_t& dense_count) {
  for (MatmulTarget t : others) {
    if (cpu::is_dense_type(t.w.type)) {
      dense[dense_count++] = t;
    } else if (is_fast_ternary(t.w)) {
      const float* own = t.x != nullptr ? t.x : x;
      t.x = nullptr;
      cpu_matmul_shared<kReadOnly>({&t, 1}, own, rows);
    } else {
      ref::matmul(t.y, t.w, t.x != nullptr ? t.x : x, rows.count);
    }
  }
}

// The ternary targets over x that share its width share one quantisation of x (block_steps_from); decode and
// prompt tokens then take their own kernels (pq2_matmul.h), per form, or with kReadOnly the stand-in that
// only reads the weights. The dense targets run in the first of those passes' jobs (in one of their own if
// there is none). Any other target goes alone.
template <bool kReadOnly>
void cpu_matmul_shared(std::span<const MatmulTarget> targets, const float* x, TokenRows rows) {
  if (targets.size() > kMaxShared) {  // in groups the fixed arrays below hold
    for (size_t at = 0; at < targets.size(); at += kMaxShared)
      cpu_matmul_shared<kReadOnly>(targets.subspan(at, std::min(kMaxShared, targets.size() - at)), x, rows);
    return;
  }
  cpu::TernaryTarget fast[kMaxShared];
  MatmulTarget other[kMaxShared], dense[kMaxShared];
  size_t count = 0, others = 0, dense_count = 0;
  for (const MatmulTarget& t : targets) {
    const bool shares_x = t.x == nullptr || t.x == x;
    if (is_fast_ternary(t.w) && shares_x && (count == 0 || fast[0].w.cols == t.w.cols)) {
      fast[count++] =
          cpu::TernaryTarget{t.y, cpu::TernaryMatrix{t.w.data, t.w.rows, t.w.cols, t.w.row_bytes, t.w.type}};
    } else {
      other[others++] = t;
    }
  }
  sort_others<kReadOnly>({other, others}, x, rows, dense, dense_count);
  const cpu::DenseTasks dense_tasks({dense, dense_count}, x, rows.count);
  const cpu::DenseTasks* pending = dense_count > 0 ? &dense_tasks : nullptr;
  if (count > 0) {
    thread_local cpu::ActBuffer buffer;
    const cpu::QuantizedActs acts =
        buffer.quantize(x, fast[0].w.cols, rows.count, cpu_pool, block_steps_from(rows));
    for (const quant::TensorType form : cpu::kPq2KernelForms) {
      cpu::TernaryTarget same[kMaxShared];
      size_t n = 0;
      for (size_t i = 0; i < count; ++i)
        if (fast[i].w.type == form) same[n++] = fast[i];
      if (n == 0) continue;
      for (const RolePass& pass : role_passes<kReadOnly>(form, rows)) {
        if (pass.count == 0) continue;
        ternary_pass({same, n}, acts, pass.first, pass.count, pass.kernel, pending);
        pending = nullptr;
      }
    }
  }
  if (pending != nullptr) cpu::dense_matmul_shared({dense, dense_count}, x, rows.count, cpu_pool);
}

template <bool kReadOnly>
void cpu_matmul(float* y, const MatrixView& w, const float* x, TokenRows rows) {
  const MatmulTarget target{y, w};
  cpu_matmul_shared<kReadOnly>({&target, 1}, x, rows);
}

// The head with its greedy pick: decode and prompt tokens take their kernels as in cpu_matmul_shared, and
// each kernel's rows are folded into the pick by the thread that wrote them. Other matrices: the matmul,
// then ref::argmax per token.
template <bool kReadOnly>
void cpu_matmul_argmax(float* y, int32_t* best, const MatrixView& w, const float* x, TokenRows rows) {
  if (!is_fast_ternary(w)) {
    cpu_matmul<kReadOnly>(y, w, x, rows);
    ref::argmax_rows(best, y, rows.count, w.rows);
    return;
  }
  const cpu::TernaryMatrix matrix{w.data, w.rows, w.cols, w.row_bytes, w.type};
  thread_local cpu::ActBuffer buffer;
  const cpu::QuantizedActs acts = buffer.quantize(x, w.cols, rows.count, cpu_pool, block_steps_from(rows));
  for (const RolePass& pass : role_passes<kReadOnly>(w.type, rows)) {
    if (pass.count == 0) continue;
    cpu::pq2_matmul_argmax(y + pass.first * w.rows, best + pass.first, matrix,
                           acts.slice(pass.first, pass.count), cpu_pool, pass.kernel);
  }
}

}  // namespace

const Ops& cpu_ops(ThreadPool& pool) {
  cpu_pool = &pool;
  static const Ops ops = [] {
    Ops table = reference_ops();
    table.name = "cpu";
    table.matmul = cpu_matmul<false>;
    table.matmul_argmax = cpu_matmul_argmax<false>;
    table.matmul_shared = cpu_matmul_shared<false>;
    table.site_forward = [](float* x, int64_t n, int64_t width, std::span<const float> signs, int64_t block) {
      cpu::site_forward(x, n, width, signs, block, cpu_pool);
    };
    table.site_inverse = [](float* x, int64_t n, int64_t width, std::span<const float> signs, int64_t block) {
      cpu::site_inverse(x, n, width, signs, block, cpu_pool);
    };
    table.silu = [](float* out, const float* x, int64_t n) { cpu::silu_kernel()(out, x, nullptr, n); };
    table.sigmoid_gate = [](float* x, const float* gate, int64_t n) {
      cpu::sigmoid_gate_kernel()(x, gate, n);
    };
    table.swiglu_site = [](float* gate, const float* up, int64_t n, int64_t width,
                           std::span<const float> signs,
                           int64_t block) { cpu::swiglu_site(gate, up, n, width, signs, block, cpu_pool); };
    table.rms_norm = cpu::rms_norm;
    table.gated_rms_norm = cpu::gated_rms_norm;
    table.l2_norm = cpu::l2_norm;
    table.causal_conv = cpu::causal_conv;
    table.gdn_recurrent = [](float* out, float* state, const GdnInputs& in, const GdnDims& dims) {
      cpu::gdn_recurrent(out, state, in, dims, cpu_pool, cpu::gdn_kernels());
    };
    table.gdn_chunked_scratch_size = [](const GdnDims&, int64_t) { return size_t{0}; };
    table.gdn_chunked = [](float* out, float* state, const GdnInputs& in, const GdnDims& dims, int64_t,
                           std::span<double>) {  // the recurrence is faster here (gdn_cpu.h)
      cpu::gdn_recurrent(out, state, in, dims, cpu_pool, cpu::gdn_kernels());
    };
    table.attention = [](float* out, const float* q, const KvView& kv, int64_t n_keys, int64_t n_head,
                         float scale) { cpu::attention(out, q, kv, n_keys, n_head, scale, cpu_pool); };
    return table;
  }();
  return ops;
}

const Ops& cpu_read_only_ops(ThreadPool& pool) {
  static const Ops ops = [&pool] {
    Ops table = cpu_ops(pool);
    table.name = "cpu, read-only matmuls";
    table.matmul = cpu_matmul<true>;
    table.matmul_argmax = cpu_matmul_argmax<true>;
    table.matmul_shared = cpu_matmul_shared<true>;
    return table;
  }();
  cpu_pool = &pool;
  return ops;
}

}  // namespace tern::kernels
