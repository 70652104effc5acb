// Command checkpreds checks the files of scalegnn predict against a run
// (scripts/resume.sh runs it on the predictions of 8 ranks):
//
//	go run ./scripts/checkpreds -config job.toml -run RUN_DIR -preds p8.npy -ref p1.npy [-emb e8.npy -emb-ref e1.npy]
//
// The probabilities (-preds) must be N × classes, and their argmax over the
// test split must give exactly the run's final test accuracy; -preds and
// -emb (N × hidden) must hold row v for vertex v, checked against the same
// checkpoint's predictions on one rank (-ref, -emb-ref): every entry within
// 1e-5 of the largest, which another grid's summation order keeps and a
// row in the wrong place does not. It prints one line and exits 1 on a
// failure.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"

	"scalegnn/jobfile"
	"scalegnn/npy"
	"scalegnn/record"
)

func main() {
	config := flag.String("config", "", "the job file of the run")
	run := flag.String("run", "", "the run's output directory (summary.json)")
	preds := flag.String("preds", "", "class probabilities to check")
	ref := flag.String("ref", "", "the same checkpoint's probabilities on one rank")
	emb := flag.String("emb", "", "embeddings to check (optional)")
	embRef := flag.String("emb-ref", "", "the same checkpoint's embeddings on one rank")
	flag.Parse()
	if err := check(*config, *run, *preds, *ref, *emb, *embRef); err != nil {
		fmt.Fprintln(os.Stderr, "checkpreds:", err)
		os.Exit(1)
	}
}

func check(config, run, preds, ref, emb, embRef string) error {
	cfg, err := jobfile.LoadConfig(config)
	if err != nil {
		return err
	}
	g, err := jobfile.LoadGraph(cfg.Dataset)
	if err != nil {
		return err
	}
	r, err := record.ReadRun(run)
	if err != nil {
		return err
	}
	p, err := read(preds, g.N, g.Classes)
	if err != nil {
		return err
	}
	hits, n := 0, 0
	for v := range g.N {
		if !g.Test[v] {
			continue
		}
		row := p[v*g.Classes : (v+1)*g.Classes]
		n++
		if int32(slices.Index(row, slices.Max(row))) == g.Labels[v] {
			hits++
		}
	}
	acc := float64(hits) / float64(n)
	if acc != r.Summary.Final.Test {
		return fmt.Errorf("%s: argmax over the %d test vertices: accuracy %v, the run's test accuracy %v (%s)", preds, n, acc, r.Summary.Final.Test, run)
	}
	d, err := sameRows(p, ref, g.N, g.Classes)
	if err != nil {
		return fmt.Errorf("%s against %s: %w", preds, ref, err)
	}
	line := fmt.Sprintf("%s: %dx%d, test accuracy %v = the run's; rows equal 1 rank's within %.2g", preds, g.N, g.Classes, acc, d)
	if emb != "" {
		e, err := read(emb, g.N, cfg.Model.Hidden)
		if err != nil {
			return err
		}
		d, err := sameRows(e, embRef, g.N, cfg.Model.Hidden)
		if err != nil {
			return fmt.Errorf("%s against %s: %w", emb, embRef, err)
		}
		line += fmt.Sprintf("; %s: %dx%d, rows equal 1 rank's within %.2g", emb, g.N, cfg.Model.Hidden, d)
	}
	fmt.Println("checkpreds:", line)
	return nil
}

// read reads path, an n × cols float32 .npy.
func read(path string, n, cols int) ([]float32, error) {
	f, err := npy.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Descr != npy.Float32 || !slices.Equal(f.Shape, []int{n, cols}) {
		return nil, fmt.Errorf("%s: dtype %s shape %v, expected %s [%d %d]", path, f.Descr, f.Shape, npy.Float32, n, cols)
	}
	return f.ReadAllFloat32()
}

// sameRows compares x with the n × cols array in path entry by entry and
// returns the largest difference relative to path's largest entry, an
// error above 1e-5.
func sameRows(x []float32, path string, n, cols int) (float64, error) {
	y, err := read(path, n, cols)
	if err != nil {
		return 0, err
	}
	scale := 0.0
	for _, v := range y {
		scale = max(scale, math.Abs(float64(v)))
	}
	worst := 0.0
	for i := range y {
		d := math.Abs(float64(x[i]-y[i])) / scale
		if !(d <= 1e-5) {
			return d, fmt.Errorf("vertex %d column %d: %v, on 1 rank %v", i/cols, i%cols, x[i], y[i])
		}
		worst = max(worst, d)
	}
	return worst, nil
}
