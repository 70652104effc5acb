package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// createTemp is os.CreateTemp, which a test replaces to fill the disk.
var createTemp = os.CreateTemp

// Status is where a run stands, as its summary.json says.
type Status string

// A run's summary.json is written with StatusRunning once setup has
// succeeded on every rank, and rewritten with one of the others when the
// run ends; the first signal rewrites it at once with StatusInterrupted
// (the stop it asks for comes at the next step boundary). A summary left
// at StatusRunning with no live job holding the directory's lock was
// killed before any rank could write (EndedAbnormally).
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed" // all epochs, or stopped early (StopReason)
	// StatusInterrupted: stopped on request; Checkpoint names the
	// checkpoint to resume from.
	StatusInterrupted Status = "interrupted"
	StatusDiverged    Status = "diverged" // a non-finite loss; Message says where
	// StatusStalled: the watchdog (runtime.stall_timeout) ended the job;
	// Message is its line.
	StatusStalled Status = "stalled"
	StatusFailed  Status = "failed" // an error; Message is the error
)

// Reasons a completed run stopped before its last epoch (Result.StopReason).
const (
	StopTargetAcc = "target_acc" // validation accuracy reached train.target_acc
	StopPatience  = "patience"   // train.patience evaluations without improvement
)

// SummaryFile is the name of the run summary inside output.dir.
const SummaryFile = "summary.json"

// Result summarises a run; rank 0 writes it as summary.json. Its JSON keys
// are snake_case, final_accuracy's too (MarshalJSON); reading is
// case-insensitive, so summaries written before the keys were lower-cased
// ({"Train", "Val", "Test"}) read the same.
type Result struct {
	Status Status `json:"status"`
	// Message is the error of a failed run, or where a diverged run's loss
	// stopped being finite.
	Message string `json:"message,omitempty"`
	// Checkpoint is the checkpoint an interrupted run resumes from.
	Checkpoint string `json:"checkpoint,omitempty"`
	// StopReason is StopTargetAcc or StopPatience when a completed run
	// stopped before train.epochs.
	StopReason string `json:"stop_reason,omitempty"`

	// Epochs is train.epochs; EpochsRun the epochs trained so far.
	Epochs     int      `json:"epochs"`
	EpochsRun  int      `json:"epochs_run"`
	FinalLoss  float64  `json:"final_loss"`
	Final      Accuracy `json:"final_accuracy"`
	BestValAcc float64  `json:"best_val_acc"`
	TestAtBest float64  `json:"test_acc_at_best_val"`
	BestEpoch  int      `json:"best_epoch"`
	// TimeToTargetS is the training time until an evaluation first reached
	// train.target_acc (ScaleGNN's time-to-accuracy), TargetEpoch that
	// epoch; nil and 0 when there is no target or it was not reached.
	TimeToTargetS *float64 `json:"time_to_target_s,omitempty"`
	TargetEpoch   int      `json:"target_epoch,omitempty"`
	TrainSec      float64  `json:"train_s"`
	MeanEpochS    float64  `json:"mean_epoch_s"` // over EpochsRun
	Grid          string   `json:"grid"`
	Ranks         int      `json:"ranks"`
	Permutation   string   `json:"permutation"`
	Mode          string   `json:"mode"`
	// Algorithm is what trained, as the performance model names it
	// (AlgorithmOf: "3d", "1.5d", ...); Replication is c of "1.5d".
	// perfmodel score matches a run to its prediction by them and the grid.
	Algorithm   string `json:"algorithm,omitempty"`
	Replication int    `json:"replication,omitempty"`
	// StepsPerEpoch is 1 in full-graph training.
	StepsPerEpoch int `json:"steps_per_epoch"`
	// Precision is train.precision: "float32" or "bf16" (mixed-precision
	// products).
	Precision string `json:"precision,omitempty"`
}

// Accuracy is a model's accuracy on the training, validation and test
// vertices (the fields of gcn.Accuracy, which converts to it).
type Accuracy struct{ Train, Val, Test float64 }

// accuracyJSON is Accuracy with summary.json's keys.
type accuracyJSON struct {
	Train float64 `json:"train"`
	Val   float64 `json:"val"`
	Test  float64 `json:"test"`
}

// resultFields is Result without its methods; MarshalJSON shadows its
// fields that need another encoding with shallower ones of the same name.
type resultFields Result

// MarshalJSON writes r with snake_case keys throughout and a non-finite
// final loss (a diverged run) as null.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		resultFields
		FinalLoss jsonNum      `json:"final_loss"`
		Final     accuracyJSON `json:"final_accuracy"`
	}{resultFields(r), jsonNum(r.FinalLoss), accuracyJSON(r.Final)})
}

// WriteSummary writes r as dir/summary.json atomically: into a temporary
// file in dir, synced, then renamed over the old one, so that a reader (or
// a job killed mid-write) sees the old summary or the new one, never a
// partial file. On a full disk, where the temporary file cannot be
// written, the summary is rewritten in place instead: truncating the old
// one frees the blocks the new one needs, and a run that failed because
// the disk is full must not be left saying "running".
func WriteSummary(dir string, r *Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", SummaryFile, err)
	}
	path := filepath.Join(dir, SummaryFile)
	err = writeFileAtomic(path, append(b, '\n'))
	if errors.Is(err, syscall.ENOSPC) {
		if werr := os.WriteFile(path, append(b, '\n'), 0o644); werr == nil {
			return nil
		}
	}
	return err
}

// writeFileAtomic replaces path with data: a temporary file beside it,
// written and synced, renamed over path.
func writeFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomic replaces path with what write writes, through a temporary
// file beside it, synced and renamed over path: a failed write (a full
// disk) leaves path as it was and no temporary file, never a truncated
// file.
func WriteAtomic(path string, write func(io.Writer) error) error {
	f, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
