package dataset

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// OpenText opens a text file for the streaming parsers, decompressing it
// when it starts with the gzip magic bytes (whatever its name). Close the
// result when done.
func OpenText(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("dataset: %s: not a valid gzip file: %w", path, err)
		}
		return readCloser{z, func() error { z.Close(); return f.Close() }}, nil
	}
	return readCloser{br, f.Close}, nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// batchSize is the number of edges or rows a streaming parser hands to its
// callback at a time.
const batchSize = 1 << 16
