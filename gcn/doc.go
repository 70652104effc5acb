// Package gcn owns the model scalegnn trains and its 3D-parallel execution:
// the input projection, the GCN layers (sparse aggregation, dense
// transformation, optional RMSNorm, ReLU, dropout and residual), the output
// head, the distributed softmax cross-entropy and argmax accuracy, and the
// Adam/AdamW/SGD optimizers. Every tensor is laid out over the grid exactly
// as docs/architecture.md ("Layouts") prescribes (layer rotation over three
// adjacency shards, optional double permutation).
//
// The model runs on a device.Device: its parameters (W, G and the
// optimizer moments) are device buffers, reached from the host only
// through Param's Download and Upload; forward, loss, backward, the
// optimizer and evaluation call only the Device's operations and package
// device's collective adapters, so no slice of device memory is reachable
// from this package (the compiler enforces it). Activations, gradients,
// masks and temporaries come from an arena (arena.go), one for the full
// graph and one for mini-batches, rewound every pass and grown to the
// largest pass seen: a steady-state step allocates nothing
// (step_alloc_test.go). The arena plan (arena_plan.go) walks what each
// pass takes from block shapes alone, for the performance model's memory
// prediction; its tests hold it to the arenas (Model.ArenaBytes). A bound (bind.go) is what the model derives from
// one Shards: host devices share the shards' adjacency, features and
// labels instead of copying them, so Use(batch) costs no copy and the
// batch must stay intact until its step is done.
//
// Reference is a serial float64 implementation of the same model, written
// independently of the distributed one. Conformance holds distributed
// training on a given world to it (full graph, and data-parallel
// mini-batches against the mean of the replicas' serial batches): gcn's
// tests run the suite in process, scalegnn selftest over MPI. Random draws (weight initialisation, dropout masks) are counter-based
// functions of (seed, site, vertex id, column), so the serial model, any
// grid shape and any vertex permutation see identical draws.
//
// The package owns the typed options Mode (full-graph or mini-batch
// training) and Norm, which the job file and the performance model decode
// into, and Source, where NewShards reads a rank's blocks from (a graph in
// memory, or a prepared dataset) together with the sizes a model is built
// for.
package gcn
