package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// EpochMetrics is one epoch of training as written to the metrics file.
// Times are in seconds; "max" and "mean" are over ranks, so max − mean shows
// load imbalance. Bytes are payload bytes handed to the collectives during
// the epoch (evaluation included), summed over all ranks.
type EpochMetrics struct {
	Epoch int     `json:"epoch"` // 1-based
	Loss  float64 `json:"loss"`  // mean training loss over the epoch's steps and replicas
	Steps int     `json:"steps"` // optimizer steps in the epoch

	// Accuracies are nil on epochs without evaluation.
	TrainAcc *float64 `json:"train_acc,omitempty"`
	ValAcc   *float64 `json:"val_acc,omitempty"`
	TestAcc  *float64 `json:"test_acc,omitempty"`
	// ValLoss is the mean cross-entropy over the validation vertices of
	// the evaluation (no dropout); nil on epochs without evaluation and in
	// files written before it was recorded.
	ValLoss *float64 `json:"val_loss,omitempty"`

	EpochSec     float64 `json:"epoch_s"` // wall time of the epoch (slowest rank), evaluation included
	SpMMSecMax   float64 `json:"spmm_s_max"`
	SpMMSecMean  float64 `json:"spmm_s_mean"`
	GEMMSecMax   float64 `json:"gemm_s_max"`
	GEMMSecMean  float64 `json:"gemm_s_mean"`
	CommSecMax   float64 `json:"comm_s_max"` // 3D collectives inside a replica
	CommSecMean  float64 `json:"comm_s_mean"`
	DPSecMax     float64 `json:"dp_s_max"` // data-parallel gradient all-reduce
	DPSecMean    float64 `json:"dp_s_mean"`
	OtherSecMax  float64 `json:"other_s_max"` // training time not in the above or in sampling waits
	OtherSecMean float64 `json:"other_s_mean"`
	// Sampling: the time a step waited for its batch, and the time building
	// the batches took (with prefetch, build − wait was hidden).
	SampleWaitSecMax  float64 `json:"sample_wait_s_max"`
	SampleWaitSecMean float64 `json:"sample_wait_s_mean"`
	SampleSecMax      float64 `json:"sample_s_max"`
	SampleSecMean     float64 `json:"sample_s_mean"`
	EvalSec           float64 `json:"eval_s"` // evaluation (slowest rank)

	PMMBytes    int64 `json:"pmm_bytes"`     // the 3D-PMM all-reduces (halved by bf16)
	Comm3DBytes int64 `json:"comm_3d_bytes"` // every collective on the X, Y and Z communicators
	DPBytes     int64 `json:"dp_bytes"`      // the data-parallel all-reduce
	// EvalBytes is evaluation's communication, kept apart from training's
	// where evaluation runs on communicators of its own (train.mode =
	// "neighbor": the per-layer all-gathers; "isolated": the 3D evaluation
	// grid's collectives; algorithm "1.5d").
	EvalBytes int64 `json:"eval_bytes,omitempty"`
	// ChunkBytes is what train.mode = "isolated" read to build partitions
	// (grappa.Loader.Bytes): the chunks loaded for the next super-epoch
	// during this epoch, and in the first epoch the first partition's.
	ChunkBytes int64 `json:"chunk_bytes,omitempty"`
}

// SetAccuracies records the accuracies of an evaluated epoch.
func (m *EpochMetrics) SetAccuracies(train, val, test float64) {
	m.TrainAcc, m.ValAcc, m.TestAcc = &train, &val, &test
}

// SetValLoss records the validation loss of an evaluated epoch.
func (m *EpochMetrics) SetValLoss(loss float64) { m.ValLoss = &loss }

// jsonNum is a float64 that JSON cannot choke on: a diverged run's NaN or
// ±Inf loss is written as null (and read back as NaN) instead of failing
// the write and losing the line that shows the divergence.
type jsonNum float64

func (x jsonNum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(x))
}

func (x *jsonNum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = jsonNum(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(x))
}

// epochFields is EpochMetrics without its methods, and epochJSON shadows
// the fields that can be non-finite (loss, accuracies, a wall time taken
// from a broken clock) with jsonNum versions: encoding/json prefers the
// shallower field of a name. The shadowing fields come first, so a line
// starts with the epoch, loss and accuracies.
type epochFields EpochMetrics

type epochJSON struct {
	Epoch    int      `json:"epoch"`
	Loss     jsonNum  `json:"loss"`
	TrainAcc *jsonNum `json:"train_acc,omitempty"`
	ValAcc   *jsonNum `json:"val_acc,omitempty"`
	TestAcc  *jsonNum `json:"test_acc,omitempty"`
	ValLoss  *jsonNum `json:"val_loss,omitempty"`
	EpochSec jsonNum  `json:"epoch_s"`
	epochFields
}

// MarshalJSON writes m as one JSON object, a non-finite loss or accuracy
// as null.
func (m EpochMetrics) MarshalJSON() ([]byte, error) {
	acc := func(p *float64) *jsonNum {
		if p == nil {
			return nil
		}
		v := jsonNum(*p)
		return &v
	}
	return json.Marshal(epochJSON{epochFields: epochFields(m), Epoch: m.Epoch, Loss: jsonNum(m.Loss),
		TrainAcc: acc(m.TrainAcc), ValAcc: acc(m.ValAcc), TestAcc: acc(m.TestAcc), ValLoss: acc(m.ValLoss), EpochSec: jsonNum(m.EpochSec)})
}

// UnmarshalJSON reads an object written by MarshalJSON; null numbers become
// NaN, null or absent accuracies (and validation loss) nil. Unknown fields are ignored so that
// older tools read newer files, and absent ones stay zero.
func (m *EpochMetrics) UnmarshalJSON(b []byte) error {
	var e epochJSON
	if err := json.Unmarshal(b, &e); err != nil {
		return err
	}
	acc := func(p *jsonNum) *float64 {
		if p == nil {
			return nil
		}
		v := float64(*p)
		return &v
	}
	*m = EpochMetrics(e.epochFields)
	m.Epoch, m.Loss, m.EpochSec = e.Epoch, float64(e.Loss), float64(e.EpochSec)
	m.TrainAcc, m.ValAcc, m.TestAcc = acc(e.TrainAcc), acc(e.ValAcc), acc(e.TestAcc)
	m.ValLoss = acc(e.ValLoss)
	return nil
}

// MetricsWriter writes a metrics file: JSON lines, one EpochMetrics per
// line. The file is written live so that a long job can be followed with
// tail -f or plotted while it runs: each line goes to the file in one write
// call as soon as Write returns, without fsync (a crash of the node, not of
// the job, may lose the last lines). A job killed mid-write can leave an
// incomplete last line, which ReadMetrics skips.
//
// A MetricsWriter is not safe for concurrent use; only one rank (rank 0)
// should write the file.
type MetricsWriter struct {
	path string
	f    *os.File
}

// CreateMetrics creates the metrics file at path, creating its directory if
// missing. It never truncates: an existing file is an error (a run that
// overwrites another removes its files first, see output.overwrite).
func CreateMetrics(path string) (*MetricsWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating metrics directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating metrics file: %w", err)
	}
	return &MetricsWriter{path: path, f: f}, nil
}

// Path returns the file being written.
func (w *MetricsWriter) Path() string { return w.path }

// Write appends m as one line.
func (w *MetricsWriter) Write(m EpochMetrics) error {
	if w.f == nil {
		return fmt.Errorf("%s: write after Close", w.path)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: encoding epoch %d: %w", w.path, m.Epoch, err)
	}
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}

// Close closes the file. Closing twice is a no-op.
func (w *MetricsWriter) Close() error {
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("closing metrics: %w", err)
	}
	return nil
}

// ReadMetrics reads a metrics file written by MetricsWriter. Blank lines are
// skipped, and so is a last line without a newline that is not valid JSON:
// it is an epoch still being written, or cut short when the job was killed.
func ReadMetrics(path string) ([]EpochMetrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading metrics: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var out []EpochMetrics
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return out, fmt.Errorf("reading metrics: %w", err)
		}
		complete := err == nil
		if t := bytes.TrimSpace(b); len(t) > 0 {
			var m EpochMetrics
			if uerr := json.Unmarshal(t, &m); uerr != nil {
				if !complete {
					return out, nil
				}
				return out, fmt.Errorf("%s: line %d: %v", path, line, uerr)
			}
			out = append(out, m)
		}
		if !complete {
			return out, nil
		}
	}
}

// MetricsAfter returns the lines of the metrics file at path whose epoch
// is after upTo, and their first and last epochs: what AppendMetrics
// drops (0 when the file is absent).
func MetricsAfter(path string, upTo int) (n, first, last int, err error) {
	ms, err := ReadMetrics(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, 0, nil
	}
	for _, m := range ms {
		if m.Epoch > upTo {
			if n == 0 {
				first = m.Epoch
			}
			n, last = n+1, m.Epoch
		}
	}
	return n, first, last, err
}

// AppendMetrics opens the metrics file of a run that resumes from a
// checkpoint taken after epoch upTo, for appending. Lines of epochs after
// upTo (trained after the checkpoint by the run that was stopped, and
// trained again now) and an incomplete last line are dropped first, by an
// atomic rewrite; every line up to the checkpoint stays as it was. A
// missing file is created.
func AppendMetrics(path string, upTo int) (*MetricsWriter, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("resuming metrics file: %w", err)
	}
	keep := 0
	for keep < len(data) {
		end := bytes.IndexByte(data[keep:], '\n')
		if end < 0 {
			break
		}
		var m EpochMetrics
		if json.Unmarshal(data[keep:keep+end], &m) != nil || m.Epoch > upTo {
			break
		}
		keep += end + 1
	}
	if keep < len(data) {
		if err := WriteAtomic(path, func(w io.Writer) error { _, err := w.Write(data[:keep]); return err }); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating metrics directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("resuming metrics file: %w", err)
	}
	return &MetricsWriter{path: path, f: f}, nil
}
