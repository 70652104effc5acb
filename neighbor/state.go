package neighbor

import (
	"fmt"

	"scalegnn/device"
)

// ParamCount is the number of parameters (len(Params)); NumParams counts
// their scalars.
func (md *Model) ParamCount() int { return len(md.Params) }

// ParamShape returns parameter k's name and shape, as a checkpoint names
// it.
func (md *Model) ParamShape(k int) (name string, rows, cols int) {
	p := md.Params[k]
	return p.Name, p.Rows, p.Cols
}

// DownloadParam copies parameter k's weights and optimizer moments into
// w, m and v (Rows·Cols each), for a checkpoint.
func (md *Model) DownloadParam(k int, w, m, v []float32) {
	p := md.Params[k]
	device.Download(md.dev, w, p.W, 0)
	device.Download(md.dev, m, p.m, 0)
	device.Download(md.dev, v, p.v, 0)
}

// UploadParam sets parameter k's weights and optimizer moments from w, m
// and v, for a resume.
func (md *Model) UploadParam(k int, w, m, v []float32) {
	p := md.Params[k]
	device.Upload(md.dev, p.W, 0, w)
	device.Upload(md.dev, p.m, 0, m)
	device.Upload(md.dev, p.v, 0, v)
}

// SetOptimizerSteps sets the optimizer steps taken (Adam's bias
// correction continues from a checkpoint's).
func (md *Model) SetOptimizerSteps(t int) {
	if t < 0 {
		panic(fmt.Sprintf("neighbor: SetOptimizerSteps(%d)", t))
	}
	md.t = t
}
