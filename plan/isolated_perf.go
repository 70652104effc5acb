package plan

import (
	"scalegnn/gcn"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
)

// isolatedPerfJob is the [grappa] part of the job for the performance
// model; the training set's size comes from the neighbor part, which
// counts it for every mode but full-graph. A job of another mode is listed
// as its isolated alternative with [grappa]'s defaults and whole
// partitions.
func isolatedPerfJob(cfg *jobfile.Config, train int) perfmodel.IsolatedJob {
	gr := cfg.Grappa
	iso := perfmodel.IsolatedJob{Partitions: gr.Partitions, Chunks: gr.Chunks, Halo: gr.Partition == "halo", EpochsPerSuperEpoch: gr.EpochsPerSuperEpoch, TrainVertices: train,
		EvalShape: gr.EvalShape(), OutOfCore: gr.OutOfCore && cfg.Train.Mode == gcn.Isolated,
		Layerwise: gr.Layerwise() && cfg.Train.Mode == gcn.Isolated, EvalFiles: gr.EvalDir != ""}
	if cfg.Train.Mode == gcn.Isolated {
		iso.BatchSize, iso.StepsPerEpoch = cfg.Train.BatchSize, cfg.Train.StepsPerEpoch
	}
	return iso
}
