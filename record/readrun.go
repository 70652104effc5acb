package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"scalegnn/grid"
)

// Run is a training run read back from its output directory (output.dir):
// the metrics file and, when the run finished, summary.json.
type Run struct {
	Dir string
	// MetricsPath is the metrics file that was read: output.metrics of the
	// run's config.toml (metrics.jsonl when there is none), or the file
	// ReadRun was given.
	MetricsPath string
	Metrics     []EpochMetrics
	// Summary is summary.json, nil when the run wrote none (it failed in
	// setup, or predates the running status); its Status says whether the
	// run finished. Grid is its grid, parsed (zero when Summary is nil).
	Summary *Result
	Grid    grid.Shape
}

// ReadRun reads the run in directory path, or the run of the file path
// names inside it: summary.json, or a metrics file (which is then read
// instead of the one config.toml names).
func ReadRun(path string) (*Run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading run: %w", err)
	}
	r := &Run{Dir: path}
	if !st.IsDir() {
		r.Dir = filepath.Dir(path)
		if filepath.Base(path) != "summary.json" {
			r.MetricsPath = path
		}
	}
	if r.MetricsPath == "" {
		if r.MetricsPath, err = runMetricsPath(r.Dir); err != nil {
			return nil, err
		}
	}
	if r.Metrics, err = ReadMetrics(r.MetricsPath); err != nil {
		return nil, err
	}
	if len(r.Metrics) == 0 {
		return nil, fmt.Errorf("%s: no epochs", r.MetricsPath)
	}
	if r.Summary, r.Grid, err = readSummary(r.Dir); err != nil {
		return nil, err
	}
	return r, nil
}

// ReadSummary reads dir's summary.json, nil when there is none.
func ReadSummary(dir string) (*Result, error) {
	s, _, err := readSummary(dir)
	return s, err
}

// readSummary is ReadSummary with the grid parsed.
func readSummary(dir string) (*Result, grid.Shape, error) {
	summary := filepath.Join(dir, SummaryFile)
	data, err := os.ReadFile(summary)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, grid.Shape{}, nil
	case err != nil:
		return nil, grid.Shape{}, fmt.Errorf("reading run: %w", err)
	}
	// The grid is written as Shape.String (Result.Grid), and a diverged
	// run's final loss as null; these fields, shallower than Result's,
	// read them as a Shape and NaN. Keys match case-insensitively, so a
	// summary written before the keys were snake_case ("Train", "Val",
	// "Test") reads the same; one without a status was written only by a
	// completed run.
	var s struct {
		Result
		Grid      grid.Shape `json:"grid"`
		FinalLoss jsonNum    `json:"final_loss"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, grid.Shape{}, fmt.Errorf("%s: %v", summary, err)
	}
	s.Result.Grid, s.Result.FinalLoss = s.Grid.String(), float64(s.FinalLoss)
	if s.Result.Status == "" {
		s.Result.Status = StatusCompleted
	}
	return &s.Result, s.Grid, nil
}

// runMetricsPath is the metrics file of the run in dir: output.metrics of
// its config.toml (relative to dir, which was output.dir), or
// metrics.jsonl, the default, when the run has no config.toml.
func runMetricsPath(dir string) (string, error) {
	var c struct {
		Output struct {
			Metrics string `toml:"metrics"`
		} `toml:"output"`
	}
	path := filepath.Join(dir, "config.toml")
	if _, err := toml.DecodeFile(path, &c); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	switch m := c.Output.Metrics; {
	case m == "":
		return filepath.Join(dir, "metrics.jsonl"), nil
	case filepath.IsAbs(m):
		return m, nil
	default:
		return filepath.Join(dir, m), nil
	}
}
