package jobs

import (
	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/method"
)

// registration is one training method in the one place that names what
// it needs: the check of the job-file keys it reads (run by
// Config.Validate after the keys every method shares) and its setup.
// The performance model's prediction of each method is perfmodel's
// (PerfChoices lists the methods a job can run as).
type registration struct {
	// check validates the method's own keys; file names the job file.
	check func(file string, c *Config) error
	// setup builds this rank's method from the job's source.
	setup func(s setup) (Method, error)
}

// registry is every training method. A new one is its own package and
// one entry here (docs/architecture.md).
var registry = map[method.Method]registration{
	method.Plexus3D:    {check: checkFullGraph, setup: setupPlexus},
	method.ScaleGNN4D:  {check: checkMiniBatch, setup: setupPlexus},
	method.Neighbor:    {check: checkNeighbor, setup: setupNeighbor},
	method.Isolated:    {check: checkIsolated, setup: setupIsolated},
	method.CAGNET15D:   {check: checkAlgorithm, setup: setupCAGNET},
	method.CAGNETBatch: {check: checkAlgorithm, setup: setupCAGNETMiniBatch},
}

// setup is what a method's setup is given: the job, its grid (and an
// isolated job's evaluation grid, split with it), the dataset source, the
// model configuration from the source's sizes, and the rank's world,
// device and logger.
type setup struct {
	cfg      *Config
	g        *grid.Grid
	evalGrid *grid.Grid
	src      gcn.Source
	mcfg     gcn.Config
	world    collectives.Comm
	dev      device.Device
	log      *zap.Logger
}

// Method is the training method the job file names.
func (c *Config) Method() method.Method { return method.Of(c.Train.Mode, c.Train.Algorithm) }
