package prepared

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"scalegnn/dataset"
)

// Input is a source dataset that Prepare streams to disk. Prepare calls
// Header first, then Vertices, Edges and Features once each, in that
// order.
type Input interface {
	// Header returns the sizes and the provenance of the dataset.
	Header() InputHeader
	// Vertices returns the labels (-1: unlabeled) and the split masks, in
	// vertex order: O(N) memory.
	Vertices() (labels []int32, train, val, test []bool, err error)
	// Edges hands the edges to emit in batches, as original vertex ids in
	// [0, N); ws is nil for an unweighted graph. The slices may be reused
	// after emit returns.
	Edges(emit func(us, vs []int32, ws []float32) error) error
	// Features hands the feature rows to emit in vertex order, in batches
	// of whole rows starting at vertex v0.
	Features(emit func(v0 int, rows []float32) error) error
}

// InputHeader describes an Input.
type InputHeader struct {
	Name string
	// N vertices, F features, Classes classes.
	N, F, Classes int
	// Weighted: Edges passes weights. Symmetric: every edge is already
	// listed in both directions, so symmetrising adds nothing.
	Weighted, Symmetric bool
	Source              SourceMeta
}

// GraphInput is an Input over a graph held in memory (a Planetoid
// directory, a built-in dataset, a generated graph). Its adjacency is
// symmetric and unweighted, as every dataset.Graph's.
type GraphInput struct {
	G      *dataset.Graph
	Format string // source format, e.g. "planetoid"
	Path   string // source path or name
}

func (in *GraphInput) Header() InputHeader {
	g := in.G
	return InputHeader{
		Name: g.Name, N: g.N, F: g.F, Classes: g.Classes, Symmetric: true,
		Source: SourceMeta{Format: in.Format, Path: in.Path, SHA256: graphSHA256(g),
			Description: fmt.Sprintf("%s: %d vertices, %d undirected edges, %d features, %d classes (sha256 of the parsed graph)",
				g.Name, g.N, g.NumEdges(), g.F, g.Classes)},
	}
}

func (in *GraphInput) Vertices() ([]int32, []bool, []bool, []bool, error) {
	g := in.G
	return g.Labels, g.Train, g.Val, g.Test, nil
}

func (in *GraphInput) Edges(emit func(us, vs []int32, ws []float32) error) error {
	a := in.G.Adj
	us, vs := make([]int32, 0, 1<<16), make([]int32, 0, 1<<16)
	for i := 0; i < a.Rows; i++ {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			us, vs = append(us, int32(i)), append(vs, a.ColIdx[p])
			if len(us) == cap(us) {
				if err := emit(us, vs, nil); err != nil {
					return err
				}
				us, vs = us[:0], vs[:0]
			}
		}
	}
	if len(us) > 0 {
		return emit(us, vs, nil)
	}
	return nil
}

func (in *GraphInput) Features(emit func(v0 int, rows []float32) error) error {
	g := in.G
	step := max(1, (1<<20)/max(1, g.F))
	for v := 0; v < g.N; v += step {
		if err := emit(v, g.Features[v*g.F:min(g.N, v+step)*g.F]); err != nil {
			return err
		}
	}
	return nil
}

// graphSHA256 hashes a graph's content: sizes, adjacency, features,
// labels and masks.
func graphSHA256(g *dataset.Graph) string {
	h := sha256.New()
	w := func(vs ...any) {
		for _, v := range vs {
			binary.Write(h, binary.LittleEndian, v)
		}
	}
	w(int64(g.N), int64(g.F), int64(g.Classes), g.Adj.RowPtr, g.Adj.ColIdx, g.Adj.Val, g.Features, g.Labels, g.Train, g.Val, g.Test)
	return hex.EncodeToString(h.Sum(nil))
}

// RMATInput streams a generated R-MAT graph (dataset.RMAT) without holding
// it: the same graph, bit for bit, as the in-memory generator.
type RMATInput struct {
	Cfg    dataset.RMATConfig
	labels []int32
}

func (in *RMATInput) Header() InputHeader {
	c := in.Cfg
	desc := fmt.Sprintf("rmat scale=%d edge_factor=%d a=%g b=%g c=%g d=%g classes=%d features=%d noise=%g split=%g/%g/%g seed=%d",
		c.Scale, c.EdgeFactor, c.A, c.B, c.C, c.D, c.Classes, c.Features, c.NoiseStd, c.TrainFrac, c.ValFrac, c.TestFrac, c.Seed)
	sum := sha256.Sum256([]byte(desc))
	return InputHeader{
		Name: "rmat", N: 1 << c.Scale, F: c.Features, Classes: c.Classes,
		Source: SourceMeta{Format: "rmat", SHA256: hex.EncodeToString(sum[:]), Description: desc + " (sha256 of this description)"},
	}
}

func (in *RMATInput) Vertices() ([]int32, []bool, []bool, []bool, error) {
	l, tr, va, te, err := dataset.RMATVertices(in.Cfg)
	in.labels = l
	return l, tr, va, te, err
}

func (in *RMATInput) Edges(emit func(us, vs []int32, ws []float32) error) error {
	return dataset.RMATEdges(in.Cfg, func(us, vs []int32) error { return emit(us, vs, nil) })
}

func (in *RMATInput) Features(emit func(v0 int, rows []float32) error) error {
	if in.labels == nil {
		panic("prepared: RMATInput.Features before Vertices")
	}
	return dataset.RMATFeatures(in.Cfg, in.labels, emit)
}

// hashFiles returns the SHA-256 over the base names and SHA-256s of the
// given files, in order, and a description listing them.
func hashFiles(paths ...string) (string, string, error) {
	all := sha256.New()
	var names []string
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return "", "", fmt.Errorf("prepare: %w", err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", "", fmt.Errorf("prepare: reading %s: %w", p, err)
		}
		fmt.Fprintf(all, "%s %x\n", filepath.Base(p), h.Sum(nil))
		names = append(names, filepath.Base(p))
	}
	return hex.EncodeToString(all.Sum(nil)), "files " + strings.Join(names, ", ") + " (sha256 over each name and its sha256)", nil
}

// checkFinite reports the first non-finite feature value in rows.
func checkFinite(rows []float32, f, v0 int, name string) error {
	for k, x := range rows {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%s: feature %d of vertex %d is %g: expected a finite number", name, k%f, v0+k/f, x)
		}
	}
	return nil
}
