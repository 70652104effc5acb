package checkpoint

import (
	"strings"
	"testing"
)

// TestMatchParams: a checkpoint whose parameters are not the model's is
// refused with the names that differ (a GAT checkpoint from before the
// layers' bias, one of a deeper model), or the first parameter whose
// shape or place differs.
func TestMatchParams(t *testing.T) {
	p := func(name string, r, c int) Param { return Param{Name: name, Rows: r, Cols: c} }
	model := []Param{p("gcn0.weight", 5, 8), p("gcn0.att_src", 2, 4), p("gcn0.att_dst", 2, 4), p("gcn0.bias", 1, 8)}
	for _, tc := range []struct {
		name string
		ck   []Param
		want []string // nil: accepted
	}{
		{"same", model, nil},
		{"before the bias", model[:3], []string{"holds 3 parameters, the model 4", "the model's gcn0.bias are not in the checkpoint", "train anew"}},
		{"deeper", append(append([]Param(nil), model...), p("gcn1.weight", 8, 3)), []string{"the checkpoint's gcn1.weight are not in the model"}},
		{"other shape", []Param{model[0], model[1], model[2], p("gcn0.bias", 1, 9)}, []string{"parameter 3 is gcn0.bias 1x9, the model's is gcn0.bias 1x8"}},
		{"other order", []Param{model[0], model[2], model[1], model[3]}, []string{"parameter 1 is gcn0.att_dst 2x4, the model's is gcn0.att_src 2x4"}},
	} {
		err := matchParams("ck", &Manifest{Params: tc.ck}, model)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}
}
