package prepared

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"scalegnn/internal/tomlx"
	"scalegnn/npy"
	"scalegnn/permute"
)

// Format and Version identify a prepared dataset's meta.toml.
const (
	Format  = "scalegnn-prepared"
	Version = 1
)

// Feature dtypes of a prepared dataset (Options.FeatureDType,
// Meta.FeatureDType).
const (
	FeaturesFloat32 = "float32"
	FeaturesBF16    = "bf16"
)

// ParseFeatureDType checks a feature dtype's name ("" is float32) and
// returns it as meta.toml records it: "" for float32 (the key is left
// out, so a float32 dataset's meta.toml is what it was before bfloat16),
// FeaturesBF16 for bfloat16.
func ParseFeatureDType(s string) (string, error) {
	switch s {
	case "", FeaturesFloat32:
		return "", nil
	case FeaturesBF16:
		return FeaturesBF16, nil
	}
	return "", fmt.Errorf("feature dtype %q: expected %q or %q", s, FeaturesFloat32, FeaturesBF16)
}

// BF16Features reports that the feature blocks hold bfloat16.
func (m *Meta) BF16Features() bool { return m.FeatureDType == FeaturesBF16 }

// FeatureBytes is the bytes a stored feature takes in the feature blocks:
// 2 for bfloat16, 4 for float32.
func (m *Meta) FeatureBytes() int {
	if m.BF16Features() {
		return 2
	}
	return 4
}

// featureDescr is the .npy dtype of the feature blocks.
func (m *Meta) featureDescr() string {
	if m.BF16Features() {
		return npy.Uint16
	}
	return npy.Float32
}

// MetaFile is the name of the metadata file; it is written last, so a
// directory without it is not a finished dataset.
const MetaFile = "meta.toml"

// Meta is the content of meta.toml.
type Meta struct {
	Format  string `toml:"format"`
	Version int    `toml:"version"`
	Name    string `toml:"name"`
	// Nodes is N; NNZ the nonzeros of the normalised adjacency Â (self
	// loops included); Edges the directed entries of A before self loops
	// were added (for an undirected graph, twice the undirected edges).
	Nodes    int   `toml:"nodes"`
	NNZ      int64 `toml:"nnz"`
	Edges    int64 `toml:"edges"`
	Features int   `toml:"features"`
	// FeatureDType is the element type of the feature blocks: "bf16"
	// (bfloat16, stored as uint16) or "float32"; absent (every dataset
	// prepared before bfloat16 existed, and every float32 one since) means
	// float32. A scalegnn older than the key refuses a bf16 dataset's
	// meta.toml ("unknown key feature_dtype").
	FeatureDType string `toml:"feature_dtype,omitempty"`
	Classes      int    `toml:"classes"`
	// MultiLabel is always false in version 1 (single-label classes).
	MultiLabel bool `toml:"multilabel"`
	// Blocks is S: the adjacency is an S×S grid of CSR blocks, the features
	// S row blocks, cut as grid.Block(N, S, i).
	Blocks int `toml:"blocks"`
	// Symmetric says Â is symmetric (the source was symmetrised);
	// Weighted says the edges had weights (otherwise every edge is 1).
	Symmetric bool `toml:"symmetric"`
	Weighted  bool `toml:"weighted"`
	// Orientations is the number of adjacency grids stored: adj0 holds
	// Â[p1][:, p2]; adj1, stored only with double permutation of a
	// non-symmetric or weighted graph, holds Â[p2][:, p1]. Otherwise
	// Â[p2][:, p1] is read as the transpose of adj0.
	Orientations int `toml:"orientations"`
	// Train, Val and Test count the vertices of each split.
	Train int `toml:"train"`
	Val   int `toml:"val"`
	Test  int `toml:"test"`

	Permute PermuteMeta `toml:"permute"`
	Source  SourceMeta  `toml:"source"`
	// BlockNNZ[k][I][J] is the number of nonzeros of block (I, J) of
	// orientation k.
	BlockNNZ [][][]int64 `toml:"block_nnz"`
	// Files lists every other file of the dataset with its size and
	// SHA-256; readers verify what they read against it.
	Files []FileMeta `toml:"file"`
}

// PermuteMeta is the permutation applied at prepare time.
type PermuteMeta struct {
	// Scheme is written as "none", "single" or "double".
	Scheme permute.Scheme `toml:"scheme"`
	Seed   int64          `toml:"seed"`
}

// SourceMeta says where the dataset came from.
type SourceMeta struct {
	// Format is the input format given to prepare; Path its -in argument.
	Format string `toml:"format"`
	Path   string `toml:"path"`
	// SHA256 hashes the source: the input files (each file's name and
	// SHA-256, in a fixed order), or the generator's parameters.
	SHA256 string `toml:"sha256"`
	// Description lists the inputs or parameters in words.
	Description string `toml:"description"`
}

// FileMeta is one file of the dataset, its path relative to the directory.
type FileMeta struct {
	Path   string `toml:"path"`
	Bytes  int64  `toml:"bytes"`
	SHA256 string `toml:"sha256"`
}

// ReadMeta reads and checks dir/meta.toml: the format, the sizes and that
// the file list names every file the sizes call for.
func ReadMeta(dir string) (*Meta, error) {
	path := filepath.Join(dir, MetaFile)
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			if _, serr := os.Stat(dir); serr != nil {
				return nil, fmt.Errorf("prepared dataset %s: %w", dir, serr)
			}
			return nil, fmt.Errorf("%s: no such file: %s is not a prepared dataset (or its preparation did not finish); run scalegnn prepare", path, dir)
		}
		return nil, err
	}
	return parseMeta(path, data)
}

// parseMeta decodes and checks the content of a meta.toml; path labels
// the messages.
func parseMeta(path string, data []byte) (*Meta, error) {
	var m Meta
	if _, err := tomlx.Decode(path, data, &m, tomlx.Options{}); err != nil {
		return nil, err
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &m, nil
}

// check validates the sizes and the file list.
func (m *Meta) check() error {
	if m.Format != Format {
		return fmt.Errorf("format = %q: expected %q", m.Format, Format)
	}
	if m.Version != Version {
		return fmt.Errorf("version = %d: this scalegnn reads version %d", m.Version, Version)
	}
	switch {
	case m.Nodes < 1:
		return fmt.Errorf("nodes = %d: expected >= 1", m.Nodes)
	case m.Features < 1:
		return fmt.Errorf("features = %d: expected >= 1", m.Features)
	case m.Classes < 1:
		return fmt.Errorf("classes = %d: expected >= 1", m.Classes)
	case m.FeatureDType != "" && m.FeatureDType != FeaturesFloat32 && m.FeatureDType != FeaturesBF16:
		return fmt.Errorf("feature_dtype = %q: expected %q or %q (a dataset prepared by a newer scalegnn?)", m.FeatureDType, FeaturesFloat32, FeaturesBF16)
	case m.MultiLabel:
		return fmt.Errorf("multilabel = true: multi-label datasets are not supported")
	case m.Blocks < 1 || m.Blocks > m.Nodes || m.Blocks > MaxBlocks:
		return fmt.Errorf("blocks = %d: expected in [1, min(nodes, %d)]", m.Blocks, MaxBlocks)
	case m.NNZ < int64(m.Nodes):
		return fmt.Errorf("nnz = %d: expected >= nodes = %d (self loops)", m.NNZ, m.Nodes)
	}
	if want := orientations(m.Permute.Scheme, m.Symmetric, m.Weighted); m.Orientations != want {
		return fmt.Errorf("orientations = %d: expected %d for permute.scheme = %q, symmetric = %v, weighted = %v",
			m.Orientations, want, m.Permute.Scheme, m.Symmetric, m.Weighted)
	}
	if len(m.BlockNNZ) != m.Orientations {
		return fmt.Errorf("block_nnz has %d grids: expected %d", len(m.BlockNNZ), m.Orientations)
	}
	for k, g := range m.BlockNNZ {
		var sum int64
		if len(g) != m.Blocks {
			return fmt.Errorf("block_nnz[%d] has %d rows: expected %d", k, len(g), m.Blocks)
		}
		for i, row := range g {
			if len(row) != m.Blocks {
				return fmt.Errorf("block_nnz[%d][%d] has %d entries: expected %d", k, i, len(row), m.Blocks)
			}
			for _, x := range row {
				if x < 0 {
					return fmt.Errorf("block_nnz[%d][%d] has a negative count", k, i)
				}
				sum += x
			}
		}
		if sum != m.NNZ {
			return fmt.Errorf("block_nnz[%d] sums to %d: expected nnz = %d", k, sum, m.NNZ)
		}
	}
	listed := map[string]bool{}
	for _, f := range m.Files {
		if listed[f.Path] {
			return fmt.Errorf("file %s listed twice", f.Path)
		}
		listed[f.Path] = true
		if len(f.SHA256) != 64 || f.Bytes < 0 {
			return fmt.Errorf("file %s: expected bytes >= 0 and a 64-digit sha256", f.Path)
		}
	}
	for _, p := range m.expectedFiles() {
		if !listed[p] {
			return fmt.Errorf("no [[file]] entry for %s", p)
		}
	}
	return nil
}

// MaxBlocks bounds S: S² adjacency blocks of three files each.
const MaxBlocks = 256

// orientations is the number of adjacency grids a dataset stores.
func orientations(s permute.Scheme, symmetric, weighted bool) int {
	if s == permute.Double && (!symmetric || weighted) {
		return 2
	}
	return 1
}

// expectedFiles lists every data file a dataset of m's shape has.
func (m *Meta) expectedFiles() []string {
	fs := []string{orderFile(0), labelsFile, trainFile, valFile, testFile}
	if m.Permute.Scheme == permute.Double {
		fs = append(fs, orderFile(1))
	}
	for i := range m.Blocks {
		fs = append(fs, featureFile(i))
	}
	for k := range m.Orientations {
		for i := range m.Blocks {
			for j := range m.Blocks {
				b := blockFiles(k, i, j)
				fs = append(fs, b[:]...)
			}
		}
	}
	return fs
}

// File names inside a prepared dataset.
const (
	labelsFile = "labels.npy"
	trainFile  = "train.npy"
	valFile    = "val.npy"
	testFile   = "test.npy"
)

func orderFile(k int) string   { return fmt.Sprintf("order%d.npy", k) }
func featureFile(i int) string { return fmt.Sprintf("features/r%d.npy", i) }

// blockFiles returns the indptr, indices and data files of block (i, j) of
// orientation k.
func blockFiles(k, i, j int) [3]string {
	b := fmt.Sprintf("adj%d/r%dc%d", k, i, j)
	return [3]string{b + ".indptr.npy", b + ".indices.npy", b + ".data.npy"}
}

// encode renders m as TOML.
func (m *Meta) encode() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# scalegnn prepared dataset: see docs/prepared.md. Generated; do not edit.\n")
	if err := toml.NewEncoder(&buf).Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
