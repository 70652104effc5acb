package checkpoint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"scalegnn/gcn"
)

// ManifestFile is the name of a checkpoint's manifest, written last.
const ManifestFile = "manifest.json"

// ConfigFile is the name of the job file stored in a checkpoint.
const ConfigFile = "config.toml"

// format is the manifest's layout version.
const format = 1

// Manifest describes a checkpoint.
type Manifest struct {
	Format int `json:"format"`
	// Step is the number of optimizer steps taken (the next step's
	// counter: sampling and dropout are functions of it); Epoch the last
	// epoch completed, and EpochSteps the steps of epoch Epoch+1 already
	// taken, with their summed loss (a run stopped by a signal mid-epoch).
	Step         int     `json:"step"`
	Epoch        int     `json:"epoch"`
	EpochSteps   int     `json:"epoch_steps"`
	EpochLossSum float64 `json:"epoch_loss_sum"`
	// EpochLossSums is every rank's summed loss of those steps, by world
	// rank (replicas train different batches); EpochLossSum is their mean.
	EpochLossSums []float64 `json:"epoch_loss_sums,omitempty"`
	OptimizerStep int       `json:"optimizer_t"` // Adam's bias-correction t
	Dataset       Dataset   `json:"dataset"`
	Model         Model     `json:"model"`
	Grid          string    `json:"grid"` // where it was written (any grid reads it)
	// Run is the caller's bookkeeping (best validation accuracy and the
	// like), stored as it is given.
	Run    json.RawMessage   `json:"run,omitempty"`
	Params []Param           `json:"params"`
	SHA256 map[string]string `json:"sha256"`
}

// Dataset is the fingerprint of the dataset a checkpoint was trained on.
type Dataset struct {
	N           int64  `json:"n"`
	NNZ         int64  `json:"nnz"`
	Features    string `json:"features_hash"`
	Labels      string `json:"labels_hash"`
	Permutation string `json:"permutation"`
	PermSeed    int64  `json:"permutation_seed"`
}

// DatasetOf makes the manifest's form of a fingerprint.
func DatasetOf(f gcn.Fingerprint, permutation string, seed int64) Dataset {
	return Dataset{N: f.N, NNZ: f.NNZ, Features: fmt.Sprintf("%016x", f.Features), Labels: fmt.Sprintf("%016x", f.Labels),
		Permutation: permutation, PermSeed: seed}
}

// Model is the shape of the model a checkpoint holds.
type Model struct {
	Features        int  `json:"features"`
	Hidden          int  `json:"hidden"`
	Classes         int  `json:"classes"`
	Layers          int  `json:"layers"`
	InputProjection bool `json:"input_projection"`
	OutputHead      bool `json:"output_head"`
	Norm            bool `json:"norm"`
	Residual        bool `json:"residual"`
	// Layer is the graph layer ("gcn", "sage", "gat"); a manifest written
	// before SAGE existed has none and holds a GCN.
	Layer gcn.Layer `json:"layer"`
	// Heads and OutputHeads are a GAT model's attention heads (absent for
	// other layers).
	Heads       int `json:"heads,omitempty"`
	OutputHeads int `json:"output_heads,omitempty"`
}

// ModelOf returns the shape of a model configuration.
func ModelOf(c gcn.Config) Model {
	// Heads 0 means 1 (gcn.Config); other layers have none.
	heads, outHeads := max(c.Heads, 1), max(c.OutputHeads, 1)
	if c.Layer != gcn.GATLayer {
		heads, outHeads = 0, 0
	}
	return Model{Features: c.Features, Hidden: c.Hidden, Classes: c.Classes, Layers: c.Layers,
		InputProjection: c.InputProjection, OutputHead: c.OutputHead, Norm: c.Norm, Residual: c.Residual, Layer: c.Layer,
		Heads: heads, OutputHeads: outHeads}
}

// Param is one parameter matrix's name and global shape.
type Param struct {
	Name string `json:"name"`
	Rows int    `json:"rows"`
	Cols int    `json:"cols"`
}

// files returns the three files of a parameter: weights and moments.
func (p Param) files() [3]string {
	return [3]string{p.Name + ".npy", p.Name + ".m.npy", p.Name + ".v.npy"}
}

// ReadManifest reads and parses dir's manifest (not the files it lists:
// Verify checks those).
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w (not a complete checkpoint)", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %v", path, err)
	}
	if m.Format != format {
		return nil, fmt.Errorf("checkpoint %s: format %d, expected %d", path, m.Format, format)
	}
	if len(m.Params) == 0 || m.SHA256 == nil {
		return nil, fmt.Errorf("checkpoint %s: no params or sha256 listed", path)
	}
	return &m, nil
}

// CheckCompatible refuses a checkpoint of another dataset or model than
// the job's, with one line naming the manifest and the first difference.
func (m *Manifest) CheckCompatible(dir string, ds Dataset, model Model) error {
	path := filepath.Join(dir, ManifestFile)
	if m.Dataset != ds {
		return fmt.Errorf("checkpoint %s: another dataset: checkpoint %s, job %s", path, describeDataset(m.Dataset), describeDataset(ds))
	}
	if m.Model != model {
		return fmt.Errorf("checkpoint %s: another model: checkpoint %+v, job %+v (a resume may change train.epochs, not the model)", path, m.Model, model)
	}
	return nil
}

func describeDataset(d Dataset) string {
	return fmt.Sprintf("(n=%d nnz=%d features %s labels %s permutation %s seed %d)", d.N, d.NNZ, d.Features, d.Labels, d.Permutation, d.PermSeed)
}
