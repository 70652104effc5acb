package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ParseError reports malformed dataset text: the file, the 1-based line
// (0 when the problem concerns the whole file) and what was expected.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// maxLineBytes bounds one text line. Feature lines are the longest (a few
// kilobytes for bag-of-words rows); the bound only keeps a corrupt file
// without newlines from being read into memory whole.
const maxLineBytes = 64 << 20

// lineReader yields the non-blank lines of a text file and keeps the line
// number for error messages.
type lineReader struct {
	sc   *bufio.Scanner
	src  *errReader
	file string
	line int
}

func newLineReader(r io.Reader, file string) *lineReader {
	src := &errReader{r: r}
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	return &lineReader{sc: sc, src: src, file: file}
}

// errReader remembers the first read error other than io.EOF. The scanner
// hands out the partial last line of a truncated stream before reporting
// the error, so a parse error on that line must defer to the read error.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// next returns the next non-blank line without its line ending (LF or
// CRLF), or false at the end of the input or on a read error (see err).
func (lr *lineReader) next() (string, bool) {
	for lr.sc.Scan() {
		lr.line++
		s := strings.TrimSuffix(lr.sc.Text(), "\r")
		if strings.TrimSpace(s) != "" {
			return s, true
		}
	}
	return "", false
}

// err reports a read error (including a truncated or corrupt gzip stream)
// at the line where it happened, or nil at a clean end of input.
func (lr *lineReader) err() error {
	err := lr.sc.Err()
	if err == nil {
		return nil
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return errAt(lr.file, lr.line+1, "line longer than %d bytes", maxLineBytes)
	}
	return lr.readError(err, lr.line+1)
}

// readError reports a failed read at (about) the given line. It is not a
// ParseError at that line: the text there is not what is wrong.
func (lr *lineReader) readError(err error, line int) *ParseError {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errAt(lr.file, 0, "file is truncated at line %d: %v", line, err)
	}
	return errAt(lr.file, 0, "reading line %d: %v", line, err)
}

// errorf returns a ParseError at the current line, unless reading the
// file has failed: then the line is likely the torn last one, and the read
// error is the better message.
func (lr *lineReader) errorf(format string, args ...any) *ParseError {
	if lr.src.err != nil {
		return lr.readError(lr.src.err, lr.line)
	}
	return errAt(lr.file, lr.line, format, args...)
}

// errAt returns a ParseError at the given line (0: the whole file).
func errAt(file string, line int, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// quote renders a line for an error message, shortened so that a long
// feature row does not flood the terminal.
func quote(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
