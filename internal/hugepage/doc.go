// Package hugepage owns how scalegnn asks the kernel for transparent huge
// pages for its large, long-lived arrays: the adjacency shards, their
// transposes, the feature blocks a rank decodes at start-up, and every
// large buffer of a host device (device.Alloc: the arenas that hold the
// activations, the bf16 staging).
//
// Why: a rank touches about a gigabyte of fresh memory while it loads a
// prepared dataset at R-MAT scale 22. With 4 KiB pages each first touch is
// a page fault; on the 2-core VM these were measured at 3.1–3.5 s per GiB
// (a C loop touching fresh anonymous memory), a fifth of a rank's loading
// CPU. With 2 MiB pages (MADV_HUGEPAGE, the kernel's default THP policy
// being "madvise") the same touch took 0.07–0.18 s per GiB. And an SpMM
// gathers rows of its dense operand at random: with 4 KiB pages nearly
// every gather misses the TLB. With the arenas on huge pages the R-MAT 18
// epoch (3-layer GCN 128, one rank, 2 threads) went from 1253–1334 to
// 1174 ms in float32 and from 853–886 to 738–743 ms in bf16, the same
// build side by side (docs/bf16.md). Go's runtime does not ask for huge
// pages itself, so the arrays that matter ask here.
//
// MakeResident also faults the pages in when it returns, for memory a
// caller reserves ahead of its use (the layer-wise evaluation's working
// set: package infer): on the VM measured the first touch of a fresh 4 KiB
// page cost 12–14 µs wherever it happened, and a reserved buffer pays it
// at setup instead of in the middle of the work.
//
// The advice is only advice: where the kernel has THP disabled, or the
// memory was already touched, nothing changes but the page size, never the
// contents. Other systems than Linux get a no-op.
package hugepage
