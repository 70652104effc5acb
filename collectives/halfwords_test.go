package collectives

import (
	"slices"
	"testing"
)

// TestWordsMovesHalfwords: halfwords viewed as float32 words go through
// an all-gather bit for bit, signalling-NaN and subnormal words included,
// and Words refuses an odd length or a view off a word boundary.
func TestWordsMovesHalfwords(t *testing.T) {
	const ranks, n = 3, 6 // halfwords a rank
	// (0x0001, 0x7f80) is the word 0x7f800001, a signalling NaN; (1, 0)
	// the smallest subnormal.
	src := func(r int) []uint16 { return []uint16{0x0001, 0x7f80, 1, 0, uint16(r), 0xffff} }
	for r, err := range RunLocal(ranks, func(c Comm) error {
		all := make([]uint16, ranks*n)
		copy(all[c.Rank()*n:], src(c.Rank()))
		words := Words(all)
		counts := []int{n / 2, n / 2, n / 2}
		if err := c.AllGatherVF32(words, words[c.Rank()*n/2:(c.Rank()+1)*n/2], counts); err != nil {
			return err
		}
		for q := range ranks {
			if got := all[q*n : (q+1)*n]; !slices.Equal(got, src(q)) {
				t.Errorf("rank %d: rank %d's halfwords %#x, want %#x", c.Rank(), q, got, src(q))
			}
		}
		return nil
	}) {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	h := make([]uint16, 8)
	for name, f := range map[string]func(){"odd length": func() { Words(h[:3]) }, "off a word boundary": func() { Words(h[1:5]) }} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Words with %s did not panic", name)
				}
			}()
			f()
		}()
	}
	if Words(nil) != nil {
		t.Error("Words(nil) is not nil")
	}
}
