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

// CheckOutputDir refuses an output.dir that a live job holds (its lock,
// record.TakeLock), or that holds another run's files (config.toml,
// summary.json or the metrics file) unless output.overwrite is set, the
// run resumes, or that run trained no epoch and ended (replaceableRun). It
// only reads, so it can run on rank 0 before setup, for every rank to
// agree on before any data is loaded.
func CheckOutputDir(cfg *jobfile.Config, opts OutputOptions) error {
	if st, err := os.Stat(cfg.Output.Dir); err == nil && !st.IsDir() {
		return fmt.Errorf("%s: output.dir = %q is a file: expected a directory (or a path to create one at)", cfg.Label(), cfg.Output.Dir)
	}
	if err := record.CheckNotLocked(cfg.Output.Dir); err != nil {
		return fmt.Errorf("%s: %w", cfg.Label(), err)
	}
	if cfg.Output.Overwrite || opts.Resume || replaceableRun(cfg) != "" {
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

// replaceableRun says why the run in output.dir may be replaced without
// output.overwrite, or "" when it may not: it recorded no epoch (no
// metrics line, epochs_run 0, no checkpoint to resume) and has ended —
// failed, stalled or diverged before its first epoch, stopped without a
// checkpoint, or killed before it could say (EndedAbnormally) — so that a
// failed start does not block its rerun. A directory without config.toml
// and summary.json holds no run ("").
func replaceableRun(cfg *jobfile.Config) string {
	dir := cfg.Output.Dir
	if _, err := os.Lstat(filepath.Join(dir, "config.toml")); err != nil {
		if _, err := os.Lstat(filepath.Join(dir, record.SummaryFile)); err != nil {
			return ""
		}
	}
	ms, err := record.ReadMetrics(cfg.MetricsPath())
	if len(ms) > 0 || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
		return ""
	}
	s, err := record.ReadSummary(dir)
	switch {
	case err != nil || (s != nil && (s.EpochsRun > 0 || s.Checkpoint != "")):
		return ""
	case s == nil:
		return "" // not a run this version started: it writes summary.json first
	case s.Status == record.StatusRunning:
		if record.EndedAbnormally(dir, s) == "" {
			return ""
		}
		return "it was killed before its first epoch"
	case s.Status == record.StatusCompleted:
		return ""
	}
	return fmt.Sprintf("it ended %s before its first epoch", s.Status)
}

// output is what createOutput opened on rank 0: the metrics file,
// output.dir's lock, and the lines to log about what it found there.
type output struct {
	metrics *record.MetricsWriter
	lock    *record.Lock
	notes   []string
}

// createOutput starts a run's files on rank 0, once setup has succeeded on
// every rank: it checks the directory again, creates it, takes its lock
// for the run, removes the previous run's files when overwriting or
// replacing a run that never trained (so that a rerun killed early does
// not leave the old summary beside its own metrics), and writes res as
// summary.json, then the job as it runs (defaults filled in) as
// config.toml and an empty metrics file. summary.json comes first, so
// that a failure after it leaves a run that says it failed (or, killed,
// EndedAbnormally) with no epoch, which its rerun replaces.
//
// A resumed run (opts.Resume) keeps the directory's files and appends to
// its metrics file, whose lines after the checkpoint's epoch upTo are
// dropped (AppendMetrics) and trained again, as a note says. A resume
// never drops lines silently: one line says how many, of which epochs.
// A run that ended without recording how (killed) is named in a note too.
func createOutput(cfg *jobfile.Config, opts OutputOptions, upTo int, res *record.Result) (out output, err error) {
	if err := CheckOutputDir(cfg, opts); err != nil {
		return out, err
	}
	dir := cfg.Output.Dir
	replace := ""
	if !opts.Resume && !cfg.Output.Overwrite {
		replace = replaceableRun(cfg)
	}
	if replace != "" {
		out.notes = append(out.notes, fmt.Sprintf("output.dir = %q holds a run that never trained (%s): replacing it", dir, replace))
	}
	if opts.Resume {
		prev, _ := record.ReadSummary(dir)
		if msg := record.EndedAbnormally(dir, prev); msg != "" {
			out.notes = append(out.notes, msg+"; resuming it")
		}
		n, first, last, err := record.MetricsAfter(cfg.MetricsPath(), upTo)
		if err != nil {
			return out, err
		}
		if n > 0 {
			out.notes = append(out.notes, fmt.Sprintf("resuming after epoch %d drops the %s of epochs %d-%d from %s; they are trained again",
				upTo, plural(n, "metrics line"), first, last, cfg.MetricsPath()))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, fmt.Errorf("%s: output.dir: %w", cfg.Label(), err)
	}
	if out.lock, err = record.TakeLock(dir); err != nil {
		return out, fmt.Errorf("%s: %w", cfg.Label(), err)
	}
	if out.lock.Stale != "" {
		out.notes = append(out.notes, fmt.Sprintf("taking over output.dir's lock from the job that held it (%s), which ended without releasing it", out.lock.Stale))
	}
	defer func() {
		if err != nil {
			out.lock.Release()
		}
	}()
	if (cfg.Output.Overwrite || replace != "") && !opts.Resume {
		for _, f := range runFiles(cfg) {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return out, fmt.Errorf("output.overwrite: %w", err)
			}
		}
	}
	if err := record.WriteSummary(dir, res); err != nil {
		return out, err
	}
	defer func() {
		if err != nil {
			failed := *res
			failed.Status, failed.Message = record.StatusFailed, err.Error()
			record.WriteSummary(dir, &failed)
		}
	}()
	if err := writeEffectiveConfig(cfg); err != nil {
		return out, err
	}
	if opts.Resume {
		out.metrics, err = record.AppendMetrics(cfg.MetricsPath(), upTo)
	} else {
		out.metrics, err = record.CreateMetrics(cfg.MetricsPath())
	}
	return out, err
}

// plural is "1 line" or "n lines".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
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
