// AVX2 PQ2_0 kernel for CPUs that run each 256-bit instruction as two 128-bit halves with one 128-bit
// multiplier (AMD Zen and Zen+, CpuFeatures::split_256). There the lane order's eight `vpmaddubsw` and two
// `vpmaddwd` per block, row and token, two cycles each on the one pipe, bound the kernel. This one
// multiplies each code by its whole activation 256·hi + lo as one int16 word: eight `vpmaddwd`.
//
// The activations are first laid out in words, per block {even[4][16], odd[4][16]}: even[s] word w is
// value 4·(2w) + s (the s-th field of qs byte 2w), odd[s] word w is value 4·(2w + 1) + s. A qs word
// shifted by 2s and masked by 0x0003 is then the even byte's code, masked by 0x0300 the odd byte's code
// times 256, so no code needs a shift of its own: the odd products' sum, a multiple of 256, is shifted
// back once per block (|Σ| ≤ 8 · 3·256 · 32639 < 2³¹). `vpmaddwd` lane l sums words 2l and 2l + 1, that
// is qs bytes 4l..4l+3: the lane order's lanes with the same exact integers, so the same bits as
// pq2_rows_avx2.
//
// Each thread lays out the words of the tokens it needs in its own scratch, once per call for one token
// and per L2-sized chunk for more (at most prompt_chunk_act_bytes()). The words use every vector pipe:
// in L2 on Zen 1 (BM_Pq2KernelHot, 12-06) 1.11–1.13× pq2_rows_avx2's speed for 4 and 64 tokens, one
// row by four tokens a tile, and only 1.02–1.03× for one token (eight `vpand` a block and row then stay
// in the loop, and with the adds they fill the other pipes).
#include <immintrin.h>

#include <algorithm>

#include "kernels/cpu/grow_buffer.h"
#include "kernels/cpu/pq2_avx2_lanes.h"

namespace tern::kernels::cpu {

namespace {

template <bool kReloadWords>
struct WordsDot {
  // The words keep both bytes' fields; lanes() masks them apart.
  static __m256i field_mask() { return _mm256_set1_epi8(-1); }

  // x: the block's words, even[0..3] then odd[0..3].
  static __m256i lanes(const __m256i (&codes)[4], const __m256i* x, __m256i neg_sums) {
    if constexpr (kReloadWords) __asm__("" : "+r"(x));  // as MaddubsDot<true> (maddubs_dot_avx2.h)
    const __m256i even_field = _mm256_set1_epi16(0x0003);
    const __m256i odd_field = _mm256_set1_epi16(0x0300);
    const auto products = [&](__m256i field, const __m256i* words) {
      const auto one = [&](int s) { return _mm256_madd_epi16(_mm256_and_si256(codes[s], field), words[s]); };
      return _mm256_add_epi32(_mm256_add_epi32(one(0), one(1)), _mm256_add_epi32(one(2), one(3)));
    };
    const __m256i even = products(even_field, x);
    const __m256i odd = products(odd_field, x + 4);
    return _mm256_add_epi32(_mm256_add_epi32(even, _mm256_srai_epi32(odd, 8)), neg_sums);
  }
};

// One token's digit planes (act_quant.h) as WordsDot's words, block by block.
void planes_to_words(const int8_t* planes, int64_t blocks, int8_t* words) {
  const __m256i high_byte = _mm256_set1_epi16(static_cast<short>(0xff00));
  for (int64_t b = 0; b < blocks; ++b) {
    const auto* hi = reinterpret_cast<const __m256i*>(planes + b * kActBlockBytes);
    auto* out = reinterpret_cast<__m256i*>(words + b * kActBlockBytes);
    for (int s = 0; s < 4; ++s) {
      const __m256i h = _mm256_load_si256(hi + s);
      const __m256i l = _mm256_load_si256(hi + 4 + s);
      // Word w of h holds hi[2w] in its low byte and hi[2w + 1] in its high byte; lo is signed.
      const __m256i even =
          _mm256_add_epi16(_mm256_slli_epi16(h, 8), _mm256_srai_epi16(_mm256_slli_epi16(l, 8), 8));
      const __m256i odd = _mm256_add_epi16(_mm256_and_si256(h, high_byte), _mm256_srai_epi16(l, 8));
      _mm256_store_si256(out + s, even);
      _mm256_store_si256(out + 4 + s, odd);
    }
  }
}

}  // namespace

void pq2_rows_avx2_words(float* y, int64_t y_stride, const TernaryMatrix& w, const QuantizedActs& a,
                         int64_t row_begin, int64_t row_end) {
  using DecodeTiles = tiling::BlockTiles<Avx2Lanes<WordsDot<true>>>;
  using PromptTiles = tiling::BlockTiles<Avx2Lanes<WordsDot<false>>>;
  constexpr int kPromptRows = 1, kPromptTokens = 4;
  const int64_t token_bytes = a.blocks() * kActBlockBytes;
  const int64_t chunk = a.n_tokens == 1 ? 1 : prompt_chunk_tokens(token_bytes, kPromptTokens);
  thread_local GrowBuffer<int8_t> scratch;
  int8_t* words = scratch.at_least(static_cast<size_t>(std::min(chunk, a.n_tokens) * token_bytes));
  for (int64_t t = 0; t < a.n_tokens; t += chunk) {
    const int64_t n = std::min(chunk, a.n_tokens - t);
    planes_to_words(a.token_q(t), n * a.blocks(), words);
    QuantizedActs part = a.slice(t, n);
    part.q = words;
    float* y_part = y + t * y_stride;
    if (n == 1) {
      tiling::sweep<DecodeTiles, 4, 1>(y_part, y_stride, w, part, row_begin, row_end, 0, 1);
    } else {
      tiling::sweep<PromptTiles, kPromptRows, kPromptTokens>(y_part, y_stride, w, part, row_begin, row_end, 0,
                                                             n);
    }
  }
}

}  // namespace tern::kernels::cpu
