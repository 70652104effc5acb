package perfmodel

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"scalegnn/collectives"
)

// DiskCost times reads from the file system a prepared dataset lives on:
// out-of-core isolated training (grappa.out_of_core) reads each partition's
// blocks as it loads it.
type DiskCost struct {
	// ReadBandwidth is what one rank reads per second from files not in
	// the page cache while every rank of the node reads its own; 0 takes
	// DefaultDiskReadBandwidth.
	ReadBandwidth float64 `toml:"read_bytes_per_s,omitempty"`
}

// DefaultDiskReadBandwidth is the cold read of a 512 MiB file in 1 MiB
// pieces on the development machine's virtual disk (0.71 GB/s on
// 2026-11-27, with the pages dropped by posix_fadvise first).
const DefaultDiskReadBandwidth = 0.7e9

// ReadTime is the seconds to read bytes cold.
func (d DiskCost) ReadTime(bytes float64) float64 {
	bw := d.ReadBandwidth
	if bw <= 0 {
		bw = DefaultDiskReadBandwidth
	}
	return bytes / bw
}

// disk measures DiskCost: every rank writes a file of its own in
// o.DiskDir, flushes it and drops its pages, then all read theirs at once
// in 1 MiB pieces; the bandwidth is a rank's bytes over the slowest rank's
// time, the median of the repetitions.
func (c *calibrator) disk(m *Machine) error {
	size := 256 << 20
	if c.o.Quick {
		size = 32 << 20
	}
	dir := c.o.DiskDir
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf(".scalegnn-calibrate-disk-%d-*", c.world.Rank()))
	if err != nil {
		return fmt.Errorf("perfmodel: calibrating the disk in %s: %w (set -disk-dir to a writable directory on the datasets' file system)", dir, err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*131 + 7)
	}
	for off := 0; off < size; off += len(buf) {
		if _, err := f.Write(buf); err != nil {
			return fmt.Errorf("perfmodel: calibrating the disk: writing %s: %w", f.Name(), err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("perfmodel: calibrating the disk: %w", err)
	}
	var times []float64
	for range max(1, c.reps/2) {
		if err := dropPages(f); err != nil {
			return fmt.Errorf("perfmodel: calibrating the disk: dropping the cached pages of %s: %w", f.Name(), err)
		}
		if err := c.world.Barrier(); err != nil {
			return err
		}
		t0 := time.Now()
		for off := int64(0); off < int64(size); off += int64(len(buf)) {
			if _, err := f.ReadAt(buf, off); err != nil {
				return fmt.Errorf("perfmodel: calibrating the disk: reading %s: %w", f.Name(), err)
			}
		}
		t := []float64{time.Since(t0).Seconds()}
		if err := c.world.AllReduceF64(t, collectives.Max); err != nil {
			return err
		}
		times = append(times, t[0])
	}
	slices.Sort(times)
	t := times[len(times)/2]
	m.Disk.ReadBandwidth = float64(size) / t
	fmt.Fprintf(c.log, "disk: %.2f GB/s cold read per rank (%d MiB each, %d ranks, %s)\n", m.Disk.ReadBandwidth/1e9, size>>20, c.world.Size(), filepath.Clean(dir))
	if math.IsInf(m.Disk.ReadBandwidth, 0) || m.Disk.ReadBandwidth <= 0 {
		m.Disk.ReadBandwidth = 0
	}
	return nil
}
