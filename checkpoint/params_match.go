package checkpoint

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// matchParams checks that the manifest lists the model's parameters,
// want, in order and with their shapes, and otherwise says which differ:
// those only the model has, those only the checkpoint has, or the first
// whose shape or place differs.
func matchParams(dir string, man *Manifest, want []Param) error {
	if slices.Equal(man.Params, want) {
		return nil
	}
	where := filepath.Join(dir, ManifestFile)
	names := func(ps []Param) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	have, need := names(man.Params), names(want)
	var onlyModel, onlyCk []string
	for _, n := range need {
		if !slices.Contains(have, n) {
			onlyModel = append(onlyModel, n)
		}
	}
	for _, n := range have {
		if !slices.Contains(need, n) {
			onlyCk = append(onlyCk, n)
		}
	}
	if len(onlyModel)+len(onlyCk) > 0 {
		msg := fmt.Sprintf("checkpoint %s holds %d parameters, the model %d", where, len(man.Params), len(want))
		if len(onlyModel) > 0 {
			msg += "; the model's " + strings.Join(onlyModel, ", ") + " are not in the checkpoint"
		}
		if len(onlyCk) > 0 {
			msg += "; the checkpoint's " + strings.Join(onlyCk, ", ") + " are not in the model"
		}
		return fmt.Errorf("%s: it was written for another model (another [model] table, or a version of scalegnn whose layers had other parameters, such as GAT layers before their bias); resume with that job file and version, or train anew", msg)
	}
	for k, p := range want {
		if mp := man.Params[k]; mp != p {
			return fmt.Errorf("checkpoint %s: parameter %d is %s %dx%d, the model's is %s %dx%d", where, k, mp.Name, mp.Rows, mp.Cols, p.Name, p.Rows, p.Cols)
		}
	}
	return nil
}
