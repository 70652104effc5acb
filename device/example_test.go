package device_test

import (
	"fmt"

	"scalegnn/device"
	"scalegnn/spmm"
)

// A GCN layer's local forward on a device, as gcn will run it: aggregate
// with the adjacency, transform with the weight, then RMSNorm fused with
// the ReLU. Z = [[1.5 0] [2 0.25] [2.5 0.5]] by hand; each row divided by
// its root mean square gives the output. Only Upload and Download cross
// between host and device.
func Example() {
	dev := device.NewNative(1)
	// Â: 3 vertices, a path 0-1-2 with self loops.
	a := spmm.FromCOO(3, 3, []int32{0, 0, 1, 1, 1, 2, 2}, []int32{0, 1, 0, 1, 2, 1, 2},
		[]float32{0.5, 0.5, 0.25, 0.5, 0.25, 0.5, 0.5})
	adj := dev.UploadCSR(a)

	x := device.Alloc[float32](dev, 3*2)
	device.Upload(dev, x, 0, []float32{1, 0, 0, 1, 1, 1})
	w := device.Alloc[float32](dev, 2*2)
	device.Upload(dev, w, 0, []float32{1, -1, 2, 1})
	scale := device.Alloc[float32](dev, 2)
	device.Upload(dev, scale, 0, []float32{1, 1})

	h := device.Matrix(device.Alloc[float32](dev, 6), 3, 2)
	z := device.Matrix(device.Alloc[float32](dev, 6), 3, 2)
	u := device.Matrix(device.Alloc[float32](dev, 6), 3, 2)
	ss, rms := device.Alloc[float32](dev, 3), device.Alloc[float32](dev, 3)

	dev.SpMM(h, adj, device.Matrix(x, 3, 2))                                 // H = Â·X
	dev.Gemm(spmm.NoTrans, spmm.NoTrans, 1, h, device.Matrix(w, 2, 2), 0, z) // Z = H·W
	dev.SumSquares(ss, z)                                                    // (all-reduced over P in gcn)
	dev.RMSNormApply(z, u, rms, z, ss, scale, device.RMSNorm{N: 2, Eps: 1e-6}, true)

	out := make([]float32, 6)
	device.DownloadMat(dev, out, z)
	fmt.Printf("%.3f\n", out)
	// Output:
	// [1.414 0.000 1.403 0.175 1.387 0.277]
}
