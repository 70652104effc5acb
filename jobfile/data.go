package jobfile

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
		g, err = dataset.SBM(c.SBMConfig())
	case SourceRMAT:
		g, err = dataset.RMAT(c.RMATConfig())
	case SourcePrepared:
		return nil, fmt.Errorf("dataset.source = %q: a prepared dataset is read shard by shard, not as a whole graph (for its balance use scalegnn dataset info %s)", c.Source, c.Path)
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
