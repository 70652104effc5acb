package jobs

import (
	"fmt"

	"scalegnn/dataset"
)

// LoadGraph reads or generates the job's graph and applies the feature
// preprocessing the job asks for. The adjacency is returned raw (no self
// loops, not normalised).
func LoadGraph(c DatasetConfig) (*dataset.Graph, error) {
	var g *dataset.Graph
	var err error
	switch c.Source {
	case SourceCora, SourceCiteseer:
		g, err = dataset.Builtin(c.Source)
	case SourcePlanetoid:
		g, err = dataset.LoadPlanetoidDir(c.Path)
	case SourceSBM:
		s := c.SBM
		g, err = dataset.SBM(dataset.SBMConfig{
			N: s.Nodes, Classes: s.Classes, AvgDegree: s.AvgDegree, Homophily: s.Homophily,
			Features: s.Features, NoiseStd: s.FeatureNoise,
			TrainFrac: s.TrainFraction, ValFrac: s.ValFraction, TestFrac: s.TestFraction,
			Seed: uint64(c.Seed),
		})
	case SourceRMAT:
		r := c.RMAT
		g, err = dataset.RMAT(dataset.RMATConfig{
			Scale: r.Scale, EdgeFactor: r.EdgeFactor, A: r.A, B: r.B, C: r.C, D: 1 - r.A - r.B - r.C,
			Classes: r.Classes, Features: r.Features, NoiseStd: 1,
			TrainFrac: r.TrainFraction, ValFrac: r.ValFraction, TestFrac: r.TestFraction,
			Seed: uint64(c.Seed),
		})
	default:
		return nil, fmt.Errorf("dataset.source %q: expected cora, citeseer, planetoid, sbm or rmat", c.Source)
	}
	if err != nil {
		return nil, err
	}
	if c.NormalizeFeatures {
		dataset.RowNormalize(g)
	}
	return g, nil
}
