//go:build cgo

package device

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"scalegnn/device/internal/cuda"
)

// The kernels are CUDA C embedded in the binary and compiled at start by
// NVRTC for the GPU present, then cached on disk. The choice over PTX
// built by nvcc and committed: one source of truth, no generated file to
// keep in step with it (nor a check that it is), no nvcc needed anywhere
// (NVRTC ships with the runtime libraries every CUDA machine has), and
// machine code for the exact GPU rather than PTX JIT-compiled for it
// anyway. The cost, about a second on first use per GPU architecture and
// NVRTC version, is paid once: the cubin is cached under a name that
// hashes the source, the options, the architecture and NVRTC's version.
//
//go:embed cuda_kernels.cu
var kernelSource string

// kernelOptions keep the device's float arithmetic Go's: no contraction
// into fused multiply-adds, IEEE division and square root, denormals
// kept.
var kernelOptions = []string{"--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "-std=c++17"}

// kernelNames lists every kernel cuda_kernels.cu defines, in the order of
// the kern enumeration.
var kernelNames = [...]string{
	kFill: "k_fill", kCopy: "k_copy", kAdd: "k_add", kScale: "k_scale", kReLU: "k_relu",
	kReLUBackward: "k_relu_backward", kReLURecord: "k_relu_record", kReLUBackwardBits: "k_relu_backward_bits",
	kDropout: "k_dropout", kDropoutRecord: "k_dropout_record", kApplyMask: "k_apply_mask",
	kSumSquares: "k_sum_squares", kRMSNormApply: "k_rmsnorm_apply", kRMSNormGScale: "k_rmsnorm_gscale",
	kRMSNormDot: "k_rmsnorm_dot", kRMSNormFinish: "k_rmsnorm_finish", kRowMax: "k_row_max",
	kSoftmaxSums: "k_softmax_sums", kSoftmaxGrad: "k_softmax_grad", kLossTerms: "k_loss_terms", kSum2: "k_sum2",
	kArgMax: "k_argmax", kArgMaxSettle: "k_argmax_settle", kCountHits: "k_count_hits", kOptim: "k_optim",
	kPackBF16: "k_pack_bf16", kUnpackBF16: "k_unpack_bf16", kGatherRows: "k_gather_rows",
	kScatterAddRows: "k_scatter_add_rows", kGatherI32: "k_gather_i32", kGatherU8: "k_gather_u8",
	kHeadDot: "k_head_dot", kHeadDotBackward: "k_head_dot_backward", kHeadDotGradPart: "k_head_dot_grad_part",
	kHeadDotGradSum: "k_head_dot_grad_sum", kGATScores: "k_gat_scores", kGATExpSum: "k_gat_exp_sum",
	kGATNormalize: "k_gat_normalize", kSpMMHeads: "k_spmm_heads", kSDDMMHeads: "k_sddmm_heads", kGATRowDot: "k_gat_row_dot",
	kGATLogitGrad: "k_gat_logit_grad", kEdgeSums: "k_edge_sums", kELU: "k_elu", kELUBackward: "k_elu_backward",
	kHeadMean: "k_head_mean", kHeadMeanBackward: "k_head_mean_backward",
	kGATScoresW: "k_gat_scores_w", kGATExpSumW: "k_gat_exp_sum_w", kGATRowDotW: "k_gat_row_dot_w",
	kGATLogitGradW: "k_gat_logit_grad_w", kEdgeSumsW: "k_edge_sums_w",
	kPackBF16Mat: "k_pack_bf16_mat", kUnpackBF16Mat: "k_unpack_bf16_mat", kFillBF16: "k_fill_bf16",
	kReLUBackwardBitsBF16: "k_relu_backward_bits_bf16", kGatherRowsBF16: "k_gather_rows_bf16",
}

type kern int

const (
	kFill kern = iota
	kCopy
	kAdd
	kScale
	kReLU
	kReLUBackward
	kReLURecord
	kReLUBackwardBits
	kDropout
	kDropoutRecord
	kApplyMask
	kSumSquares
	kRMSNormApply
	kRMSNormGScale
	kRMSNormDot
	kRMSNormFinish
	kRowMax
	kSoftmaxSums
	kSoftmaxGrad
	kLossTerms
	kSum2
	kArgMax
	kArgMaxSettle
	kCountHits
	kOptim
	kPackBF16
	kUnpackBF16
	kGatherRows
	kScatterAddRows
	kGatherI32
	kGatherU8
	kHeadDot
	kHeadDotBackward
	kHeadDotGradPart
	kHeadDotGradSum
	kGATScores
	kGATExpSum
	kGATNormalize
	kSpMMHeads
	kSDDMMHeads
	kGATRowDot
	kGATLogitGrad
	kEdgeSums
	kELU
	kELUBackward
	kHeadMean
	kHeadMeanBackward
	kGATScoresW
	kGATExpSumW
	kGATRowDotW
	kGATLogitGradW
	kEdgeSumsW
	kPackBF16Mat
	kUnpackBF16Mat
	kFillBF16
	kReLUBackwardBitsBF16
	kGatherRowsBF16
	numKernels
)

// kernelImage returns the cubin for compute capability major.minor, from
// the cache or compiled (and then cached); how says which, for the log.
func kernelImage(major, minor int, cacheDir string) (image []byte, how string, err error) {
	arch := fmt.Sprintf("sm_%d%d", major, minor)
	vmaj, vmin := cuda.NVRTCVersion()
	opts := append([]string{"--gpu-architecture=" + arch}, kernelOptions...)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00nvrtc %d.%d\x00", kernelSource, strings.Join(opts, " "), vmaj, vmin)
	key := hex.EncodeToString(h.Sum(nil))[:24]
	path := ""
	if dir, err := kernelCacheDir(cacheDir); err == nil {
		path = filepath.Join(dir, "kernels-"+arch+"-"+key+".cubin")
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return b, "cached " + path, nil
		}
	}
	image, log, err := cuda.Compile(kernelSource, "cuda_kernels.cu", opts, true)
	if err != nil {
		return nil, "", fmt.Errorf("compiling the CUDA kernels for %s with NVRTC %d.%d: %w\n%s", arch, vmaj, vmin, err, log)
	}
	how = fmt.Sprintf("compiled by NVRTC %d.%d for %s", vmaj, vmin, arch)
	if path != "" {
		// Write the cache atomically: ranks on one node compile at once.
		tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
		if os.WriteFile(tmp, image, 0o644) == nil && os.Rename(tmp, path) == nil {
			how += ", cached in " + path
		} else {
			os.Remove(tmp)
		}
	}
	return image, how, nil
}

// kernelCacheDir is dir, or the user cache directory's scalegnn/cuda.
func kernelCacheDir(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "scalegnn", "cuda")
	}
	return dir, os.MkdirAll(dir, 0o755)
}
