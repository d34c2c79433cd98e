// The CPU backend's op table: ternary matmuls run on the int8 kernels of this folder (activations
// quantised per call, rows split over the pool), PQ2_0 on pq2_matmul.h's and PTQ1_0, in the form it takes
// at load (trit panels, planes or rows, or transcoded to PQ2_0), on its form's, so both files give
// bit-identical logits; the gated delta rule runs in fp32 over the pool (gdn_cpu.h); attention is
// kernels/cpu/attention_cpu.h (fp32, online softmax, heads over the pool); every other op and weight
// type is the fp32 oracle (kernels/ref) until a fast version exists.
#pragma once

#include "kernels/ops.h"

namespace tern {
class ThreadPool;
}

namespace tern::kernels {

// The table is plain data (function pointers), so the pool travels beside it, per calling thread: the
// matmuls a thread calls use the pool of that thread's last cpu_ops call (runtime::Engine makes that
// call at every step, so engines with their own pools can share a thread). The pool must outlive
// those calls, and one pool must not be driven by two threads at once. Each calling thread has its
// own activation and transcode buffers, which grow to the largest request and are then reused.
const Ops& cpu_ops(ThreadPool& pool);

// cpu_ops with every ternary matmul replaced by cpu::pq2_rows_read_only, which reads the weights and
// writes 0: a measuring instrument (`tern bench --read-only-matmuls`), never a way to run a model. The
// pool binds as for cpu_ops (either call binds it for both tables).
const Ops& cpu_read_only_ops(ThreadPool& pool);

}  // namespace tern::kernels
