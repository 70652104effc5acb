package jobfile

import (
	"fmt"
	"slices"

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
		if i := slices.IndexFunc(g.Features, func(x float32) bool { return x < 0 }); i >= 0 {
			return nil, fmt.Errorf("dataset.normalize_features = true, but the %s features have negative values (vertex %d, feature %d: %g): row normalisation divides by a row's sum and is for non-negative features such as bag-of-words; set normalize_features = false", c.Source, i/g.F, i%g.F, g.Features[i])
		}
		dataset.RowNormalize(g)
	}
	return g, nil
}
