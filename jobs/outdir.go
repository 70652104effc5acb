package jobs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"scalegnn/jobfile"
	"scalegnn/record"
)

// OutputOptions says how a run uses its output directory (output.dir).
type OutputOptions struct {
	// Resume continues the run already in the directory from a checkpoint:
	// its files are kept, not refused (the checkpoint code sets it).
	Resume bool
	// JSON logs an evaluation as a JSON line of fields for machines
	// instead of the compact line a person reads (scalegnn -log json).
	JSON bool
	// Verbose adds the epoch's time split to the compact line (scalegnn -v).
	Verbose bool
}

// runFiles returns the files a run writes: config.toml, summary.json and
// its metrics file.
func runFiles(cfg *jobfile.Config) []string {
	return []string{
		filepath.Join(cfg.Output.Dir, "config.toml"),
		filepath.Join(cfg.Output.Dir, record.SummaryFile),
		cfg.MetricsPath(),
	}
}

// CheckOutputDir refuses an output.dir that holds another run's files
// (config.toml, summary.json or the metrics file), unless output.overwrite
// is set or the run resumes. It only reads, so it can run on rank 0 before
// setup, for every rank to agree on before any data is loaded.
func CheckOutputDir(cfg *jobfile.Config, opts OutputOptions) error {
	if st, err := os.Stat(cfg.Output.Dir); err == nil && !st.IsDir() {
		return fmt.Errorf("%s: output.dir = %q is a file: expected a directory (or a path to create one at)", cfg.Label(), cfg.Output.Dir)
	}
	if cfg.Output.Overwrite || opts.Resume {
		return nil
	}
	for _, f := range runFiles(cfg) {
		_, err := os.Lstat(f)
		switch {
		case err == nil:
			return fmt.Errorf("%s: output.dir = %q holds another run (%s exists): choose another output.dir, remove that run, or set output.overwrite = true",
				cfg.Label(), cfg.Output.Dir, filepath.Base(f))
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s: output.dir: %w", cfg.Label(), err)
		}
	}
	return nil
}

// createOutput starts a run's files on rank 0, once setup has succeeded on
// every rank: it checks the directory again, creates it, removes the
// previous run's files when overwriting (so that a rerun killed early does
// not leave the old summary beside its own metrics), and writes the job as
// it runs (defaults filled in) as config.toml and an empty metrics file.
//
// A resumed run (opts.Resume) keeps the directory's files and appends to
// its metrics file, whose lines after the checkpoint's epoch upTo are
// dropped (AppendMetrics).
func createOutput(cfg *jobfile.Config, opts OutputOptions, upTo int) (*record.MetricsWriter, error) {
	if err := CheckOutputDir(cfg, opts); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Output.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: output.dir: %w", cfg.Label(), err)
	}
	if cfg.Output.Overwrite && !opts.Resume {
		for _, f := range runFiles(cfg) {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("output.overwrite: %w", err)
			}
		}
	}
	if err := writeEffectiveConfig(cfg); err != nil {
		return nil, err
	}
	if opts.Resume {
		return record.AppendMetrics(cfg.MetricsPath(), upTo)
	}
	return record.CreateMetrics(cfg.MetricsPath())
}

// writeEffectiveConfig stores the job as it ran (defaults filled in) as
// config.toml in output.dir, atomically: a full disk leaves no truncated
// config.toml, and the error names the file.
func writeEffectiveConfig(cfg *jobfile.Config) error {
	return writeConfigWith(cfg, cfg.WriteTOML)
}

// writeConfigWith is writeEffectiveConfig with the encoder given, so that
// a test can fail the write half-way as a full disk does.
func writeConfigWith(cfg *jobfile.Config, write func(io.Writer) error) error {
	return record.WriteAtomic(filepath.Join(cfg.Output.Dir, "config.toml"), write)
}
