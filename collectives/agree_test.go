package collectives

import (
	"errors"
	"fmt"
	"testing"
)

func TestAgreeError(t *testing.T) {
	bad := errors.New("bad block")
	for _, tc := range []struct {
		name    string
		failing map[int]bool
	}{
		{"none", nil},
		{"one", map[int]bool{2: true}},
		{"two", map[int]bool{0: true, 3: true}},
	} {
		got := make([]error, 4)
		for r, err := range RunLocal(4, func(c Comm) error {
			var err error
			if tc.failing[c.Rank()] {
				err = fmt.Errorf("rank %d: %w", c.Rank(), bad)
			}
			got[c.Rank()] = AgreeError(c, err)
			return nil
		}) {
			if err != nil {
				t.Fatalf("%s: rank %d: %v", tc.name, r, err)
			}
		}
		for r, err := range got {
			switch {
			case tc.failing[r] && !errors.Is(err, bad):
				t.Errorf("%s: failing rank %d got %v, want its own error", tc.name, r, err)
			case !tc.failing[r] && len(tc.failing) > 0 && err != ErrOtherRank:
				t.Errorf("%s: rank %d got %v, want ErrOtherRank", tc.name, r, err)
			case len(tc.failing) == 0 && err != nil:
				t.Errorf("%s: rank %d got %v, want nil", tc.name, r, err)
			}
		}
	}
}
