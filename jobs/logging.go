package jobs

import (
	"math"
	"os"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// NewLogger returns the logger of world rank rank. Rank 0 logs at info level
// in a human-readable console format to stderr; the other ranks are silent,
// since under mpirun every rank shares the terminal and the ranks would only
// repeat rank 0. With verbose, every rank logs at debug level, each line
// tagged with its rank.
//
// Lines carry an ISO 8601 time but neither caller nor stack trace: the
// messages are meant for users, and an error ends the job with its own
// message.
func NewLogger(rank int, verbose bool) *zap.Logger {
	if rank != 0 && !verbose {
		return zap.NewNop()
	}
	return newLogger(zapcore.Lock(os.Stderr), rank, verbose)
}

func newLogger(w zapcore.WriteSyncer, rank int, verbose bool) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	enc.CallerKey = zapcore.OmitKey
	enc.StacktraceKey = zapcore.OmitKey
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	// zap.New adds neither caller nor stack traces unless asked to.
	l := zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), w, level))
	if verbose {
		l = l.With(zap.Int("rank", rank))
	}
	return l
}

// EpochFields returns the fields of a one-line epoch report: epoch, loss,
// the accuracies when evaluated, the epoch time, and the SpMM, GEMM,
// communication and other time as max and mean over ranks (max − mean is
// the load imbalance).
func EpochFields(m EpochMetrics) []zap.Field {
	fs := []zap.Field{zap.Int("epoch", m.Epoch), zap.Float64("loss", m.Loss)}
	for _, a := range []struct {
		key string
		v   *float64
	}{{"train_acc", m.TrainAcc}, {"val_acc", m.ValAcc}, {"test_acc", m.TestAcc}} {
		if a.v != nil {
			fs = append(fs, zap.Float64(a.key, *a.v))
		}
	}
	if m.Steps > 1 {
		fs = append(fs, zap.Int("steps", m.Steps))
	}
	fs = append(fs,
		zap.Duration("time", seconds(m.EpochSec)),
		zap.Duration("spmm_max", seconds(m.SpMMSecMax)),
		zap.Duration("spmm_mean", seconds(m.SpMMSecMean)),
		zap.Duration("gemm_max", seconds(m.GEMMSecMax)),
		zap.Duration("gemm_mean", seconds(m.GEMMSecMean)),
		zap.Duration("comm_max", seconds(m.CommSecMax)),
		zap.Duration("comm_mean", seconds(m.CommSecMean)),
		zap.Duration("other_max", seconds(m.OtherSecMax)),
		zap.Duration("other_mean", seconds(m.OtherSecMean)),
	)
	// Mini-batch and data-parallel parts only when they happened.
	if m.SampleSecMax > 0 {
		fs = append(fs, zap.Duration("sample_wait_max", seconds(m.SampleWaitSecMax)),
			zap.Duration("sample_build_mean", seconds(m.SampleSecMean)))
	}
	if m.DPSecMax > 0 {
		fs = append(fs, zap.Duration("dp_max", seconds(m.DPSecMax)), zap.Duration("dp_mean", seconds(m.DPSecMean)))
	}
	if m.EvalSec > 0 {
		fs = append(fs, zap.Duration("eval", seconds(m.EvalSec)))
	}
	return fs
}

// seconds converts to a Duration rounded to microseconds, enough for a
// human and short to print.
func seconds(s float64) time.Duration {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return 0
	}
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond)
}
