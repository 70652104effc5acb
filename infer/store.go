package infer

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// store keeps a layer's output block by block between layers: in memory,
// or in files of dir (one per block and layer, removed when the layer
// after has read them), so that a rank's memory holds one layer's
// transformed input and not its activations.
type store struct {
	dir  string
	rank int
	mem  map[[2]int][]float32 // (layer, block) → rows
}

func (s *store) path(k, l int) string {
	return filepath.Join(s.dir, fmt.Sprintf("infer-r%d-l%d-b%d.f32", s.rank, l, k))
}

// put keeps x as block k's input to layer l.
func (s *store) put(k, l int, x []float32) error {
	if s.dir == "" {
		s.mem[[2]int{l, k}] = x
		return nil
	}
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(s.path(k, l), b, 0o600); err != nil {
		return fmt.Errorf("infer: keeping layer %d's input between layers: %w (set the inference directory to one with room, or keep it in memory)", l, err)
	}
	return nil
}

// get returns block k's input to layer l.
func (s *store) get(k, l int) ([]float32, error) {
	if s.dir == "" {
		x, ok := s.mem[[2]int{l, k}]
		if !ok {
			panic(fmt.Sprintf("infer: block %d of layer %d's input was never kept", k, l))
		}
		return x, nil
	}
	b, err := os.ReadFile(s.path(k, l))
	if err != nil {
		return nil, fmt.Errorf("infer: reading layer %d's input back: %w", l, err)
	}
	x := make([]float32, len(b)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return x, nil
}

// drop forgets layer l's input once layer l is done.
func (s *store) drop(l int) {
	for key := range s.mem {
		if key[0] == l {
			delete(s.mem, key)
		}
	}
	if s.dir != "" {
		files, _ := filepath.Glob(filepath.Join(s.dir, fmt.Sprintf("infer-r%d-l%d-b*.f32", s.rank, l)))
		for _, f := range files {
			os.Remove(f)
		}
	}
}

// clear forgets everything kept.
func (s *store) clear() error {
	clear(s.mem)
	if s.dir == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(s.dir, fmt.Sprintf("infer-r%d-l*-b*.f32", s.rank)))
	for _, f := range files {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
