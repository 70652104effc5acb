package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/internal/launch"
	"scalegnn/jobs"
	"scalegnn/npy"
)

// runInference is scalegnn predict -config job.toml -checkpoint DIR
// [-out preds.npy] [-embeddings LAYER]: distributed full-graph inference
// with a checkpoint's model, on the job's grid (any grid: checkpoints are
// independent of it). It writes the class probabilities (N × classes) or
// hidden layer LAYER's output (N × its width) as float32 .npy, row v the
// dataset's vertex v; each block's one writer writes its rows straight
// into the file, nothing is gathered.
func runInference(args []string, stderr io.Writer) launch.ExitCode {
	fs := flag.NewFlagSet("scalegnn predict", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "job file (TOML): the dataset, model and grid")
	ckpt := fs.String("checkpoint", "", "checkpoint directory, a directory of checkpoints (its newest good one), or latest")
	out := fs.String("out", "", "output .npy (default output.dir/predictions.npy, or embeddings-LAYER.npy)")
	emb := fs.Int("embeddings", -1, "write hidden layer LAYER's output (0-based) instead of the class probabilities")
	if err := fs.Parse(args); err != nil {
		return launch.ExitUsage
	}
	embSet := false // -embeddings given: a layer from 0 up, checked against the model below
	fs.Visit(func(f *flag.Flag) { embSet = embSet || f.Name == "embeddings" })
	if *config == "" || *ckpt == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scalegnn predict: need -config job.toml and -checkpoint DIR\n%s", usage)
		return launch.ExitUsage
	}
	return launch.WithMPI(stderr, func(world collectives.Comm, agree func(error) error) error {
		rank := world.Rank()
		log := jobs.NewLogger(rank, false, false)
		defer log.Sync()
		info, cfg, err := launch.LoadJob(world, *config, nil, log)
		if err == nil && embSet {
			if last := gcn.LastHidden(gcn.Config{Layers: cfg.Model.Layers, OutputHead: cfg.Model.OutputHead}); *emb < 0 || *emb > last {
				err = fmt.Errorf("scalegnn predict: -embeddings %d: model.layers = %d (output_head = %v) has hidden layers 0 to %d", *emb, cfg.Model.Layers, cfg.Model.OutputHead, last)
			}
		}
		if err := agree(err); err != nil {
			return err
		}
		path := *out
		if path == "" {
			path = filepath.Join(cfg.Output.Dir, "predictions.npy")
			if *emb >= 0 {
				path = filepath.Join(cfg.Output.Dir, fmt.Sprintf("embeddings-%d.npy", *emb))
			}
		}
		rd, err := launch.OpenDevice(launch.JobDevice(cfg, launch.RankThreads(cfg.Runtime.Threads, info)), rank, info, log)
		if err := agree(err); err != nil {
			return err
		}
		rd.Measure() // every rank's device is open
		if err := agree(rd.CheckMemory(cfg, rank, info)); err != nil {
			return err
		}
		var job *jobs.Job
		err = rd.Guard(cfg, rank, info, func() (err error) {
			job, err = jobs.Setup(cfg, world, rd.Dev, log)
			return err
		})
		if err := agree(err); err != nil {
			return err
		}
		dir, err := jobs.ResolveCheckpoint(world, cfg, *ckpt, log)
		if err == nil {
			_, err = job.LoadCheckpoint(dir)
		}
		if err := agree(err); err != nil {
			return err
		}
		var b gcn.Block
		if err := rd.Guard(cfg, rank, info, func() error {
			if *emb >= 0 {
				b, err = job.Embeddings(*emb)
			} else {
				b, err = job.Probabilities()
			}
			return nil
		}); err != nil {
			// Out of GPU memory within the pass, where the other ranks
			// may wait in a collective: launch.WithMPI reports it and aborts.
			return err
		}
		if err := agree(err); err != nil {
			return err
		}
		n := job.Vertices()
		if err := agree(writeRows(world, path, n, b)); err != nil {
			return err
		}
		if rank == 0 {
			what := "class probabilities"
			if *emb >= 0 {
				what = fmt.Sprintf("layer %d embeddings", *emb)
			}
			log.Info("predictions written", zap.String("what", what), zap.String("checkpoint", dir),
				zap.String("file", path), zap.String("shape", fmt.Sprintf("%dx%d", n, b.Cols)))
		}
		return nil
	})
}

// writeRows writes an N × b.Cols float32 .npy at path from every rank's
// block, collectively: rank 0 writes the header and sizes a temporary
// file, each block's writer writes its rows at their vertices' offsets and
// syncs, and rank 0 renames the file into place once all have.
func writeRows(world collectives.Comm, path string, n int, b gcn.Block) error {
	tmp := path + ".tmp"
	h := npy.HeaderBytes(npy.Float32, n, b.Cols)
	var err error
	if world.Rank() == 0 {
		err = createSized(tmp, h, int64(len(h))+4*int64(n)*int64(b.Cols))
	}
	if err := collectives.AgreeError(world, err); err != nil {
		return err
	}
	if b.Owner {
		err = fillRows(tmp, int64(len(h)), b)
	}
	if err := collectives.AgreeError(world, err); err != nil {
		return err
	}
	if world.Rank() == 0 {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

func createSized(path string, header []byte, size int64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(header)
	if err == nil {
		err = f.Truncate(size)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func fillRows(path string, off int64, b gcn.Block) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	w := b.C1 - b.C0
	row := make([]byte, 4*w)
	for i, v := range b.Vertices {
		for j, x := range b.Data[i*w : (i+1)*w] {
			putF32(row[4*j:], x)
		}
		if _, err = f.WriteAt(row, off+4*(int64(v)*int64(b.Cols)+int64(b.C0))); err != nil {
			break
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// putF32 stores x little-endian, as the .npy dtype "<f4" says.
func putF32(b []byte, x float32) {
	u := math.Float32bits(x)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}
