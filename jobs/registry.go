package jobs

import (
	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/jobfile"
	"scalegnn/method"
)

// registration is one training method's setup: what builds this rank's
// Method from the job's source. The check of the keys it reads is
// jobfile's (methodChecks), its prediction perfmodel's (PerfChoices lists
// the methods a job can run as).
type registration struct {
	setup func(s setup) (Method, error)
}

// registry is every training method. A new one is its own package and
// one entry here (docs/architecture.md).
var registry = map[method.Method]registration{
	method.Plexus3D:    {setup: setupPlexus},
	method.ScaleGNN4D:  {setup: setupPlexus},
	method.Neighbor:    {setup: setupNeighbor},
	method.Isolated:    {setup: setupIsolated},
	method.CAGNET15D:   {setup: setupCAGNET},
	method.CAGNETBatch: {setup: setupCAGNETMiniBatch},
}

// setup is what a method's setup is given: the job, its grid (and an
// isolated job's evaluation grid, split with it), the dataset source, the
// model configuration from the source's sizes, and the rank's world,
// device and logger.
type setup struct {
	cfg      *jobfile.Config
	g        *grid.Grid
	evalGrid *grid.Grid
	// evalComm is an isolated job's layer-wise evaluation's communicator
	// (the world's ranks, counted apart from training).
	evalComm collectives.Comm
	src      gcn.Source
	mcfg     gcn.Config
	world    collectives.Comm
	dev      device.Device
	log      *zap.Logger
}
