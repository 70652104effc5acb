package collectives

import "scalegnn/spmm"

// bfloat16 keeps the sign, the 8 exponent bits and the top 7 mantissa bits
// of a float32: the same range, 3 significant decimal digits, half the
// bytes. The 3D-PMM partial sums travel in it when a job asks for bf16
// communication (ScaleGNN §V-B).

// ToBF16 rounds f to the nearest bfloat16, ties to even (spmm.ToBF16,
// where the rule is written once for the devices, the kernels and the
// collectives).
func ToBF16(f float32) uint16 { return spmm.ToBF16(f) }

// FromBF16 widens a bfloat16 to float32 exactly.
func FromBF16(h uint16) float32 { return spmm.FromBF16(h) }

// AddBF16 is the reduction of a bfloat16 all-reduce: the float32 sum of
// two bfloat16 values, rounded to bfloat16. The MPI binding's C callback
// computes exactly this.
func AddBF16(a, b uint16) uint16 { return ToBF16(FromBF16(a) + FromBF16(b)) }

// RoundBF16 rounds every element of buf to bfloat16 in place.
func RoundBF16(buf []float32) {
	for i, v := range buf {
		buf[i] = FromBF16(ToBF16(v))
	}
}

// EncodeBF16 rounds src into dst; len(dst) must be at least len(src).
func EncodeBF16(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = ToBF16(v)
	}
}

// DecodeBF16 widens src into dst; len(dst) must be at least len(src).
func DecodeBF16(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = FromBF16(h)
	}
}
