package cpu

import "fmt"

// BLASAdvice returns one line for the log when OpenBLAS runs its generic
// kernels (core "Prescott", chosen when it does not recognise the CPU) on
// a CPU with AVX2 or AVX-512, which the library's Haswell and SkylakeX
// kernels use: what to set, and how. It returns "" otherwise. On the
// development machine (an AVX-512 Xeon OpenBLAS 0.3.21 calls Prescott) a
// 262144×128×128 sgemm took 576 ms generic against about 140 ms with
// OPENBLAS_CORETYPE=SkylakeX. The library reads the variable while it is
// loaded, before any Go code runs, so the process cannot fix it itself.
func BLASAdvice() string {
	if BLASCore() != "Prescott" {
		return ""
	}
	core := ""
	for _, x := range supportedISAs() {
		switch x {
		case isaAVX2:
			core = "Haswell"
		case isaAVX512:
			core = "SkylakeX"
		}
	}
	if core == "" {
		return ""
	}
	return fmt.Sprintf("OpenBLAS did not recognise this CPU and runs its generic kernels (core Prescott; sgemm about 4x slower on an AVX-512 Xeon): set OPENBLAS_CORETYPE=%s in every rank's environment (mpirun -x OPENBLAS_CORETYPE=%s; exported before srun)", core, core)
}
