package gcn

import (
	"encoding"

	"scalegnn/internal/enum"
)

// Mode is how a job trains. It is the one type for the training mode: the
// job file's train.mode and the performance model decode into it
// ("fullgraph", "minibatch", "neighbor").
type Mode int

const (
	// FullGraph trains on the whole graph once per epoch.
	FullGraph Mode = iota
	// MiniBatch trains on uniformly sampled vertex-induced subgraphs
	// (ScaleGNN), built by a BatchBuilder, with data-parallel replicas.
	MiniBatch
	// Neighbor trains on neighbor-sampled message-flow graphs with every
	// rank a data-parallel worker (FastSample; package neighbor).
	Neighbor
	// Isolated trains each data-parallel worker on its own partition with
	// only gradients exchanged (Grappa; package grappa, jobs/method_isolated.go).
	Isolated
)

// Norm is the normalisation after each hidden GCN layer: the job file's
// model.norm ("none", "rms"). Config.Norm is true for RMS.
type Norm int

const (
	// NoNorm applies none.
	NoNorm Norm = iota
	// RMSNorm applies RMSNorm with a learnable scale.
	RMSNorm
)

var (
	_ encoding.TextMarshaler   = FullGraph
	_ encoding.TextUnmarshaler = (*Mode)(nil)
	_ encoding.TextMarshaler   = NoNorm
	_ encoding.TextUnmarshaler = (*Norm)(nil)
)

var (
	modeNames = []string{"fullgraph", "minibatch", "neighbor", "isolated"}
	normNames = []string{"none", "rms"}
)

// ParseMode parses "fullgraph", "minibatch" or "neighbor".
func ParseMode(s string) (Mode, error) { return enum.Parse[Mode]("training mode", s, modeNames) }

func (m Mode) String() string { return enum.Name("Mode", m, modeNames) }

// MarshalText returns the name ParseMode accepts.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText parses a name ParseMode accepts.
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err == nil {
		*m = v
	}
	return err
}

// ParseNorm parses "none" or "rms".
func ParseNorm(s string) (Norm, error) { return enum.Parse[Norm]("norm", s, normNames) }

func (n Norm) String() string { return enum.Name("Norm", n, normNames) }

// MarshalText returns the name ParseNorm accepts.
func (n Norm) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText parses a name ParseNorm accepts.
func (n *Norm) UnmarshalText(b []byte) error {
	v, err := ParseNorm(string(b))
	if err == nil {
		*n = v
	}
	return err
}
