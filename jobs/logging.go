package jobs

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"scalegnn/record"
)

// NewLogger returns the logger of world rank rank. Rank 0 logs at info level
// to stderr; the other ranks are silent, since under mpirun every rank
// shares the terminal and the ranks would only repeat rank 0. With verbose,
// every rank logs at debug level, each line tagged with its rank.
//
// The console format is for people: a short time, the level and the
// message (an evaluation is one compact line, ProgressLine). With json,
// every line is a JSON object for machines, its fields in full.
//
// Lines carry neither caller nor stack trace: the messages are meant for
// users, and an error ends the job with its own message.
func NewLogger(rank int, verbose, json bool) *zap.Logger {
	if rank != 0 && !verbose {
		return zap.NewNop()
	}
	return newLogger(zapcore.Lock(os.Stderr), rank, verbose, json)
}

func newLogger(w zapcore.WriteSyncer, rank int, verbose, json bool) *zap.Logger {
	var enc zapcore.Encoder
	if json {
		c := zap.NewProductionEncoderConfig()
		c.EncodeTime = zapcore.ISO8601TimeEncoder
		c.CallerKey = zapcore.OmitKey
		c.StacktraceKey = zapcore.OmitKey
		enc = zapcore.NewJSONEncoder(c)
	} else {
		c := zap.NewDevelopmentEncoderConfig()
		c.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05")
		c.CallerKey = zapcore.OmitKey
		c.StacktraceKey = zapcore.OmitKey
		c.ConsoleSeparator = "  "
		enc = zapcore.NewConsoleEncoder(c)
	}
	level := zapcore.InfoLevel
	if verbose {
		level = zapcore.DebugLevel
	}
	// zap.New adds neither caller nor stack traces unless asked to.
	l := zap.New(zapcore.NewCore(enc, w, level))
	if verbose {
		l = l.With(zap.Int("rank", rank))
	}
	return l
}

// ProgressLine is an evaluated epoch as one line a person reads: the epoch
// of epochs, the loss, the accuracies, the time per epoch (msPerEpoch, the
// mean over the epochs since the last line) and the time left at that
// pace, e.g.
//
//	epoch  40/200  loss 0.8123  acc train 0.914 val 0.774 test 0.792  23.1 ms/epoch  ETA 3.7s
func ProgressLine(m record.EpochMetrics, epochs int, secPerEpoch float64) string {
	w := len(strconv.Itoa(epochs))
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %*d/%d  loss %.4f", w, m.Epoch, epochs, m.Loss)
	if m.TrainAcc != nil && m.ValAcc != nil && m.TestAcc != nil {
		fmt.Fprintf(&b, "  acc train %.3f val %.3f test %.3f", *m.TrainAcc, *m.ValAcc, *m.TestAcc)
	}
	if ms := 1e3 * secPerEpoch; ms < 1000 {
		fmt.Fprintf(&b, "  %.1f ms/epoch", ms)
	} else {
		fmt.Fprintf(&b, "  %.2f s/epoch", secPerEpoch)
	}
	fmt.Fprintf(&b, "  ETA %s", roundDuration(float64(max(0, epochs-m.Epoch))*secPerEpoch))
	return b.String()
}

// roundDuration formats s seconds to a tenth of a second under a minute,
// to the second above.
func roundDuration(s float64) string {
	d := seconds(s)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// EpochFields returns the fields of a one-line epoch report: epoch, loss,
// the accuracies and validation loss when evaluated, the epoch time, and the SpMM, GEMM,
// communication and other time as max and mean over ranks (max − mean is
// the load imbalance).
func EpochFields(m record.EpochMetrics) []zap.Field {
	fs := []zap.Field{zap.Int("epoch", m.Epoch), zap.Float64("loss", m.Loss)}
	for _, a := range []struct {
		key string
		v   *float64
	}{{"train_acc", m.TrainAcc}, {"val_acc", m.ValAcc}, {"test_acc", m.TestAcc}, {"val_loss", m.ValLoss}} {
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
