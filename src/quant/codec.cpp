#include "quant/codec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/half.h"
#include "quant/trit_planes.h"
#include "quant/trit_rows.h"

namespace tern::quant {
namespace {

uint16_t load_u16le(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

void store_u16le(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xffu);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// A panel-form matrix has no row at any one address (quant/pq2_panels.h, quant/trit_panels.h), so a call
// that takes one row pointer would read other rows' bytes: a caller's bug, refused before anything is read.
void refuse_panels(TensorType type, const char* what) {
  if (is_panel_form(type)) {
    fail(ErrorKind::kInternal, "{}: {} has no addressable rows (its *_to_rows gives PQ2_0 rows)", what,
         traits(type).name);
  }
}

// Blocks in a row of k values; Error(kInput) if k does not split into whole blocks.
int64_t row_blocks(TensorType type, int64_t k, const char* what) {
  const TypeTraits& t = traits(type);
  if (k < 0 || k % t.block_elems != 0) {
    fail(ErrorKind::kInput, "{}: {} values is not a whole number of {} blocks ({} values each)", what, k,
         t.name, t.block_elems);
  }
  return k / t.block_elems;
}

// ---- 2-bit codes (PQ2_0, Q2_0): element j at bits 2(j%4) of qs[j/4] (§3.3) ----

void unpack_codes(const uint8_t* qs, int n, uint8_t* codes) {
  for (int j = 0; j < n; ++j) codes[j] = static_cast<uint8_t>((qs[j / 4] >> (2 * (j % 4))) & 3u);
}

void pack_codes(const uint8_t* codes, int n, uint8_t* qs) {
  std::memset(qs, 0, static_cast<size_t>(n / 4));
  for (int j = 0; j < n; ++j)
    qs[j / 4] = static_cast<uint8_t>(qs[j / 4] | ((codes[j] & 3u) << (2 * (j % 4))));
}

void dequantize_codes(const uint8_t* codes, int n, uint16_t d_bits, float* dst) {
  const float d = fp16_to_fp32(d_bits);
  for (int j = 0; j < n; ++j) dst[j] = static_cast<float>(static_cast<int>(codes[j]) - 1) * d;
}

// Ternary quantiser of one group of n values (contract in codec.h); returns the scale bits.
uint16_t quantize_codes(const float* w, int n, uint8_t max_code, uint8_t* codes, TensorType type,
                        int64_t block) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (!std::isfinite(w[j])) {
      fail(ErrorKind::kInput, "quantize_row {}: block {} element {} is not finite", traits(type).name, block,
           j);
    }
    amax = std::max(amax, std::fabs(w[j]));
  }
  const uint16_t d_bits = fp32_to_fp16(amax);
  const float d = fp16_to_fp32(d_bits);
  if (std::isinf(d)) {
    fail(ErrorKind::kInput, "quantize_row {}: block {} has max|w| = {} beyond the fp16 scale range",
         traits(type).name, block, amax);
  }
  for (int j = 0; j < n; ++j) {
    const float q = d == 0.0f ? 1.0f : std::roundf(w[j] / d) + 1.0f;
    codes[j] = static_cast<uint8_t>(std::clamp(q, 0.0f, static_cast<float>(max_code)));
  }
  return d_bits;
}

// ---- PTQ1_0 trits (§3.4) ----

constexpr std::array<uint32_t, 5> kPow3{1, 3, 9, 27, 81};

// Trit n of a byte: (((byte * 3^n) mod 256) * 3) >> 8.
uint8_t byte_trit(uint8_t byte, int n) {
  const uint32_t wrapped = (byte * kPow3[n]) & 0xffu;
  return static_cast<uint8_t>((wrapped * 3u) >> 8);
}

// v = 0..242 -> ceil(v * 256 / 243).
uint8_t trit_byte(uint32_t v) {
  return static_cast<uint8_t>((v * 256u + 242u) / 243u);
}

// Stages of the staged element order: `bytes` bytes starting at qs byte `first_byte` hold elements
// first_elem + bytes*n + m (trit n of byte m), `trits` trits per byte.
struct Ptq1Stage {
  int first_byte;
  int bytes;
  int first_elem;
  int trits;
};
constexpr std::array<Ptq1Stage, 3> kPtq1Stages{{
    {0, 16, 0, 5},    // elements 0..79 in qs[0..15]
    {16, 8, 80, 5},   // elements 80..119 in qs[16..23]
    {24, 2, 120, 4},  // elements 120..127 in qh[0..1]
}};
constexpr int kPtq1ScaleOffset = 26;

// ---- the row-wise trit forms (trit planes, trit rows): written a whole row at a time ----

bool is_whole_row_form(TensorType type) {
  return type == TensorType::kTritPlanes || type == TensorType::kTritRows;
}

void load_trit_block(TensorType type, const uint8_t* row, int64_t k, int64_t b, uint8_t* trits,
                     uint16_t* d_bits) {
  if (type == TensorType::kTritPlanes) {
    trit_planes_load_block(row, k, b, trits, d_bits);
  } else {
    trit_rows_load_block(row, k, b, trits, d_bits);
  }
}

void store_trit_row(TensorType type, uint8_t* row, int64_t k, const uint8_t* trits, const uint16_t* d_bits) {
  if (type == TensorType::kTritPlanes) {
    trit_planes_store_row(row, k, trits, d_bits);
  } else {
    trit_rows_store_row(row, k, trits, d_bits);
  }
}

// ---- 128-element ternary chunks: the common currency of transcode_row ----

struct TernaryChunk {
  std::array<uint8_t, kTernaryBlock> codes;
  std::array<uint16_t, 2> d_bits;  // scales of elements 0..63 and 64..127
};

// Bytes of a chunk in a row of `type` (the row-wise trit forms are not chunk by chunk: their codec takes the
// row).
size_t chunk_bytes(TensorType type) {
  return type == TensorType::kQ2_0 ? 2 * kQ2Bytes : traits(type).block_bytes;
}

// Chunk c of a row of k values.
void read_chunk(TensorType type, const uint8_t* row, int64_t k, int64_t c, TernaryChunk& chunk) {
  const uint8_t* src = row + static_cast<size_t>(c) * chunk_bytes(type);
  switch (type) {
    case TensorType::kPQ2_0:
      pq2_unpack(src, chunk.codes.data(), &chunk.d_bits[0]);
      chunk.d_bits[1] = chunk.d_bits[0];
      return;
    case TensorType::kPTQ1_0:
      ptq1_unpack(src, chunk.codes.data(), &chunk.d_bits[0]);
      chunk.d_bits[1] = chunk.d_bits[0];
      return;
    case TensorType::kQ2_0:
      for (int half = 0; half < 2; ++half) {
        const uint8_t* block = src + static_cast<size_t>(half) * kQ2Bytes;
        chunk.d_bits[half] = load_u16le(block);
        unpack_codes(block + 2, kQ2Block, chunk.codes.data() + half * kQ2Block);
      }
      return;
    case TensorType::kTritPlanes:
    case TensorType::kTritRows:
      load_trit_block(type, row, k, c, chunk.codes.data(), &chunk.d_bits[0]);
      chunk.d_bits[1] = chunk.d_bits[0];
      return;
    default:
      fail(ErrorKind::kInternal, "read_chunk: {} is not ternary", traits(type).name);
  }
}

// Source block of chunk element e, for error messages.
int64_t source_block(TensorType from, int64_t chunk, int e) {
  return from == TensorType::kQ2_0 ? 2 * chunk + e / kQ2Block : chunk;
}

// Refuses a chunk `to` cannot hold: two Q2_0 scales headed for one, a code 3 headed for trits.
void check_storable(TensorType from, TensorType to, const TernaryChunk& chunk, int64_t index,
                    const char* where) {
  if (to != TensorType::kQ2_0 && chunk.d_bits[0] != chunk.d_bits[1]) {
    fail(ErrorKind::kFormat,
         "{}: q2_0 blocks {} and {} have different scales ({:#06x}, {:#06x}); {} holds one scale per 128 "
         "values",
         where, 2 * index, 2 * index + 1, chunk.d_bits[0], chunk.d_bits[1], traits(to).name);
  }
  if (to != TensorType::kPTQ1_0 && !is_whole_row_form(to)) return;
  for (int e = 0; e < kTernaryBlock; ++e) {
    if (chunk.codes[e] > 2) {
      fail(ErrorKind::kFormat, "{}: {} block {} holds code 3 (+2d) at element {}, which {} cannot store",
           where, traits(from).name, source_block(from, index, e), e % traits(from).block_elems,
           traits(to).name);
    }
  }
}

// Chunk `index` of a row of a chunk-by-chunk type (not a row-wise trit form).
void write_chunk(TensorType to, const TernaryChunk& chunk, int64_t index, uint8_t* row) {
  uint8_t* dst = row + static_cast<size_t>(index) * chunk_bytes(to);
  switch (to) {
    case TensorType::kPQ2_0:
      pq2_pack(chunk.codes.data(), chunk.d_bits[0], dst);
      return;
    case TensorType::kPTQ1_0:
      ptq1_pack(chunk.codes.data(), chunk.d_bits[0], dst);
      return;
    case TensorType::kQ2_0:
      for (int half = 0; half < 2; ++half) {
        uint8_t* block = dst + static_cast<size_t>(half) * kQ2Bytes;
        store_u16le(block, chunk.d_bits[half]);
        pack_codes(chunk.codes.data() + half * kQ2Block, kQ2Block, block + 2);
      }
      return;
    default:
      fail(ErrorKind::kInternal, "write_chunk: {} is not ternary", traits(to).name);
  }
}

}  // namespace

void pq2_unpack(const uint8_t* block, uint8_t codes[128], uint16_t* d_bits) {
  *d_bits = load_u16le(block);
  unpack_codes(block + 2, kTernaryBlock, codes);
}

void pq2_pack(const uint8_t codes[128], uint16_t d_bits, uint8_t* block) {
  store_u16le(block, d_bits);
  pack_codes(codes, kTernaryBlock, block + 2);
}

void ptq1_unpack(const uint8_t* block, uint8_t trits[128], uint16_t* d_bits) {
  for (const Ptq1Stage& stage : kPtq1Stages) {
    for (int m = 0; m < stage.bytes; ++m) {
      const uint8_t byte = block[stage.first_byte + m];
      for (int n = 0; n < stage.trits; ++n)
        trits[stage.first_elem + stage.bytes * n + m] = byte_trit(byte, n);
    }
  }
  *d_bits = load_u16le(block + kPtq1ScaleOffset);
}

void ptq1_pack(const uint8_t trits[128], uint16_t d_bits, uint8_t* block) {
  for (int e = 0; e < kTernaryBlock; ++e) {
    if (trits[e] > 2)
      fail(ErrorKind::kInput, "ptq1_pack: element {} has trit {} (must be 0..2)", e, trits[e]);
  }
  for (const Ptq1Stage& stage : kPtq1Stages) {
    for (int m = 0; m < stage.bytes; ++m) {
      // Five trit slots, t0 most significant; a 4-trit byte leaves the last slot 0 (v = 3 * ...).
      uint32_t v = 0;
      for (int n = 0; n < 5; ++n) {
        v = 3 * v + (n < stage.trits ? trits[stage.first_elem + stage.bytes * n + m] : 0u);
      }
      block[stage.first_byte + m] = trit_byte(v);
    }
  }
  store_u16le(block + kPtq1ScaleOffset, d_bits);
}

void dequantize_row(TensorType type, const uint8_t* src, float* dst, int64_t k) {
  refuse_panels(type, "dequantize_row");
  const int64_t blocks = row_blocks(type, k, "dequantize_row");
  std::array<uint8_t, kTernaryBlock> codes;
  uint16_t d_bits = 0;
  switch (type) {
    case TensorType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(k) * sizeof(float));
      return;
    case TensorType::kF16:
      for (int64_t i = 0; i < k; ++i) dst[i] = fp16_to_fp32(load_u16le(src + 2 * i));
      return;
    case TensorType::kBF16:
      for (int64_t i = 0; i < k; ++i) dst[i] = bf16_to_fp32(load_u16le(src + 2 * i));
      return;
    case TensorType::kQ2_0:
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* block = src + b * static_cast<int64_t>(kQ2Bytes);
        unpack_codes(block + 2, kQ2Block, codes.data());
        dequantize_codes(codes.data(), kQ2Block, load_u16le(block), dst + b * kQ2Block);
      }
      return;
    case TensorType::kPQ2_0:
      for (int64_t b = 0; b < blocks; ++b) {
        pq2_unpack(src + b * static_cast<int64_t>(kPq2Bytes), codes.data(), &d_bits);
        dequantize_codes(codes.data(), kTernaryBlock, d_bits, dst + b * kTernaryBlock);
      }
      return;
    case TensorType::kPTQ1_0:
      for (int64_t b = 0; b < blocks; ++b) {
        ptq1_unpack(src + b * static_cast<int64_t>(kPtq1Bytes), codes.data(), &d_bits);
        dequantize_codes(codes.data(), kTernaryBlock, d_bits, dst + b * kTernaryBlock);
      }
      return;
    case TensorType::kTritPlanes:
    case TensorType::kTritRows:
      for (int64_t b = 0; b < blocks; ++b) {
        load_trit_block(type, src, k, b, codes.data(), &d_bits);
        dequantize_codes(codes.data(), kTernaryBlock, d_bits, dst + b * kTernaryBlock);
      }
      return;
    case TensorType::kPq2Panels:
    case TensorType::kTritPanels:
      break;  // refused above
  }
  fail(ErrorKind::kInternal, "dequantize_row: unhandled type {}", traits(type).name);
}

void quantize_row(TensorType type, const float* src, uint8_t* dst, int64_t k) {
  refuse_panels(type, "quantize_row");
  const int64_t blocks = row_blocks(type, k, "quantize_row");
  std::array<uint8_t, kTernaryBlock> codes;
  switch (type) {
    case TensorType::kF32:
      std::memcpy(dst, src, static_cast<size_t>(k) * sizeof(float));
      return;
    case TensorType::kF16:
      for (int64_t i = 0; i < k; ++i) store_u16le(dst + 2 * i, fp32_to_fp16(src[i]));
      return;
    case TensorType::kBF16:
      for (int64_t i = 0; i < k; ++i) store_u16le(dst + 2 * i, fp32_to_bf16(src[i]));
      return;
    case TensorType::kQ2_0:
      for (int64_t b = 0; b < blocks; ++b) {
        uint8_t* block = dst + b * static_cast<int64_t>(kQ2Bytes);
        store_u16le(block, quantize_codes(src + b * kQ2Block, kQ2Block, 3, codes.data(), type, b));
        pack_codes(codes.data(), kQ2Block, block + 2);
      }
      return;
    case TensorType::kPQ2_0:
      for (int64_t b = 0; b < blocks; ++b) {
        const uint16_t d_bits =
            quantize_codes(src + b * kTernaryBlock, kTernaryBlock, 3, codes.data(), type, b);
        pq2_pack(codes.data(), d_bits, dst + b * static_cast<int64_t>(kPq2Bytes));
      }
      return;
    case TensorType::kPTQ1_0:
      for (int64_t b = 0; b < blocks; ++b) {
        const uint16_t d_bits =
            quantize_codes(src + b * kTernaryBlock, kTernaryBlock, 2, codes.data(), type, b);
        ptq1_pack(codes.data(), d_bits, dst + b * static_cast<int64_t>(kPtq1Bytes));
      }
      return;
    case TensorType::kTritPlanes:
    case TensorType::kTritRows: {
      std::vector<uint8_t> trits(static_cast<size_t>(k));
      std::vector<uint16_t> scales(static_cast<size_t>(blocks));
      for (int64_t b = 0; b < blocks; ++b) {
        scales[static_cast<size_t>(b)] = quantize_codes(src + b * kTernaryBlock, kTernaryBlock, 2,
                                                        trits.data() + b * kTernaryBlock, type, b);
      }
      store_trit_row(type, dst, k, trits.data(), scales.data());
      return;
    }
    case TensorType::kPq2Panels:
    case TensorType::kTritPanels:
      break;  // refused above
  }
  fail(ErrorKind::kInternal, "quantize_row: unhandled type {}", traits(type).name);
}

void transcode_row(TensorType from, TensorType to, const uint8_t* src, uint8_t* dst, int64_t k,
                   const char* where) {
  if (where == nullptr) where = "transcode_row";
  refuse_panels(from, where);
  refuse_panels(to, where);
  if (from == to) {
    row_blocks(from, k, where);
    const std::optional<size_t> bytes = row_bytes(from, k);
    if (!bytes)
      fail(ErrorKind::kInput, "{}: a row of {} {} values does not fit in memory", where, k,
           traits(from).name);
    std::memcpy(dst, src, *bytes);
    return;
  }
  if (!is_ternary(from) || !is_ternary(to)) {
    fail(ErrorKind::kInput, "{}: cannot transcode {} to {} (only between ternary types)", where,
         traits(from).name, traits(to).name);
  }
  if (k < 0 || k % kTernaryBlock != 0) {
    fail(ErrorKind::kInput, "{}: {} values is not a whole number of 128-value blocks", where, k);
  }
  const int64_t chunks = k / kTernaryBlock;
  const bool whole = is_whole_row_form(to);  // written whole, from the row's trits and scales
  std::vector<uint8_t> trits(whole ? static_cast<size_t>(k) : 0);
  std::vector<uint16_t> scales(whole ? static_cast<size_t>(chunks) : 0);
  TernaryChunk chunk;
  for (int64_t c = 0; c < chunks; ++c) {
    read_chunk(from, src, k, c, chunk);
    check_storable(from, to, chunk, c, where);
    if (whole) {
      std::memcpy(trits.data() + c * kTernaryBlock, chunk.codes.data(), kTernaryBlock);
      scales[static_cast<size_t>(c)] = chunk.d_bits[0];
    } else {
      write_chunk(to, chunk, c, dst);
    }
  }
  if (whole) store_trit_row(to, dst, k, trits.data(), scales.data());
}

}  // namespace tern::quant
