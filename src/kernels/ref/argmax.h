// Greedy pick over one row of logits (model-spec §8.2, §8.4): the lowest index wins a tie.
#pragma once

#include <cstdint>

namespace tern::kernels::ref {

// n > 0. NaN entries never win (a NaN row returns 0).
int64_t argmax(const float* x, int64_t n);

// best[r] = argmax of row r of y: [rows][n].
void argmax_rows(int32_t* best, const float* y, int64_t rows, int64_t n);

// argmax's choice built from candidates in any order, so threads can each fold the rows they computed
// and then fold their results: the largest non-NaN value, the lowest index among equals.
struct ArgmaxFold {
  float value = 0.0f;
  int64_t index = -1;  // -1: no non-NaN value seen yet

  void take(float v, int64_t i) {
    if (v == v && (index < 0 || v > value || (v == value && i < index))) {
      value = v;
      index = i;
    }
  }
  void take(const ArgmaxFold& other) {
    if (other.index >= 0) take(other.value, other.index);
  }
  // Folds x[0..n), the entries of indices first..first + n, in index order.
  void take_run(const float* x, int64_t first, int64_t n);
  int64_t result() const { return index < 0 ? 0 : index; }
};

}  // namespace tern::kernels::ref
