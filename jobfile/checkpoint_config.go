package jobfile

import (
	"fmt"
	"path/filepath"
	"time"

	"scalegnn/internal/tomlx"
)

// CheckpointConfig is the job file's [checkpoint] table: when a run writes
// checkpoints (package checkpoint), where, and how many it keeps.
type CheckpointConfig struct {
	// Every writes a checkpoint after every Every epochs (0: none by
	// epoch count).
	Every int `toml:"every"`
	// Interval writes one at the first epoch end after this much wall
	// time since the last ("30m", "2h"; "": none by time). The ranks agree
	// on it, so a slow clock on one rank cannot split them.
	Interval string `toml:"interval"`
	// Dir holds the checkpoints; "" is output.dir/checkpoints.
	Dir string `toml:"dir"`
	// Keep is how many of the newest checkpoints stay (0: all).
	Keep int `toml:"keep"`
}

// Enabled reports whether the run writes checkpoints as it trains.
func (c CheckpointConfig) Enabled() bool { return c.Every > 0 || c.Interval != "" }

// validate checks the [checkpoint] keys.
func (c CheckpointConfig) validate(ck *tomlx.Checker) {
	ck.AtLeast("checkpoint.every", c.Every, 0)
	ck.AtLeast("checkpoint.keep", c.Keep, 0)
	if c.Interval != "" && ck.Err == nil {
		if d, err := time.ParseDuration(c.Interval); err != nil || d <= 0 {
			ck.Err = fmt.Errorf(`%s: checkpoint.interval = %q: expected a positive duration such as "30m" or "2h"`, ck.File, c.Interval)
		}
	}
}

// CheckpointDir returns where the run's checkpoints go.
func (c *Config) CheckpointDir() string {
	if c.Checkpoint.Dir != "" {
		return c.Checkpoint.Dir
	}
	return filepath.Join(c.Output.Dir, "checkpoints")
}

// ModelDir is where output.save_model writes the final model (a
// checkpoint directory of its own, which scalegnn predict -checkpoint
// takes).
func (c *Config) ModelDir() string { return filepath.Join(c.Output.Dir, "model") }
