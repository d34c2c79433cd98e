// The CPU backend's op table: PQ2_0 matmuls run on the int8 kernels of this folder (activations
// quantised per call, rows split over the pool); every other op and weight type is the fp32 oracle
// (kernels/ref) until a fast version exists.
#pragma once

#include "kernels/ops.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels {

// The table is plain data (function pointers), so the pool is process-wide: the last call's pool is
// the one the matmuls use; it must outlive every use of the table. Matmuls must be called from one
// thread at a time per calling thread (each calling thread has its own activation buffer, which grows
// to the largest request and is then reused without allocating).
const Ops& cpu_ops(ThreadPool& pool);

}  // namespace tern::kernels
