package jobs

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"scalegnn/jobfile"
	"scalegnn/record"
)

// evalSeq is a synthetic run's evaluations: validation accuracy and loss.
type evalSeq [][2]float64

// gatSeq exercises every branch of the GAT paper's rule: both improve
// (kept), accuracy ties (reset, not kept), the loss alone improves
// (reset, not kept), neither (the counter grows).
var gatSeq = evalSeq{
	{0.50, 1.00}, // 0: first: kept
	{0.60, 0.90}, // 1: both: kept
	{0.60, 0.95}, // 2: accuracy ties its best: reset, not kept
	{0.55, 0.85}, // 3: loss alone: reset, not kept
	{0.50, 0.90}, // 4: neither: 1
	{0.60, 0.85}, // 5: both tie their best: kept
	{0.50, 1.00}, // 6: 1
	{0.59, 0.86}, // 7: 2
	{0.58, 0.99}, // 8: 3
	{0.70, 0.50}, // 9
}

// TestEarlyStopRule: which evaluation train.early_stop keeps and where
// train.patience stops, on synthetic (val acc, val loss) sequences.
func TestEarlyStopRule(t *testing.T) {
	for _, c := range []struct {
		name   string
		rule   string
		pat    int
		target float64
		seq    evalSeq
		kept   int // the last evaluation kept before the stop
		stopAt int // -1: none
		why    string
	}{
		{"val_loss_acc patience 3", jobfile.EarlyStopValLossAcc, 3, 0, gatSeq, 5, 8, record.StopPatience},
		{"val_loss_acc patience 4", jobfile.EarlyStopValLossAcc, 4, 0, gatSeq, 9, -1, ""},
		{"val_acc patience 3", jobfile.EarlyStopValAcc, 3, 0, gatSeq, 1, 4, record.StopPatience},
		{"val_acc patience 0", jobfile.EarlyStopValAcc, 0, 0, gatSeq, 9, -1, ""},
		{"val_loss_acc target", jobfile.EarlyStopValLossAcc, 3, 0.6, gatSeq, 1, 1, record.StopTargetAcc},
		{"ties in accuracy never stop", jobfile.EarlyStopValLossAcc, 2,
			0, evalSeq{{0.5, 1}, {0.5, 1.1}, {0.5, 1.2}, {0.5, 1.3}, {0.5, 1.4}}, 0, -1, ""},
		{"falling loss alone never stops", jobfile.EarlyStopValLossAcc, 2,
			0, evalSeq{{0.5, 1}, {0.4, 0.9}, {0.3, 0.8}, {0.2, 0.7}}, 0, -1, ""},
		{"val_acc: ties do not reset", jobfile.EarlyStopValAcc, 2,
			0, evalSeq{{0.5, 1}, {0.5, 0.5}, {0.5, 0.4}, {0.6, 0.3}}, 0, 2, record.StopPatience},
	} {
		r := newStopRule(jobfile.TrainConfig{Patience: c.pat, TargetAcc: c.target, EarlyStop: c.rule})
		kept, at, why := -1, -1, ""
		for i, e := range c.seq {
			keep, w := r.evaluate(e[0], e[1])
			if keep {
				kept = i
			}
			if w != "" {
				at, why = i, w
				break
			}
		}
		if kept != c.kept || at != c.stopAt || why != c.why {
			t.Errorf("%s: kept %d, stopped at %d (%q); want kept %d, stop at %d (%q)", c.name, kept, at, why, c.kept, c.stopAt, c.why)
		}
	}
}

// TestEarlyStopResumes: the rule's state survives a checkpoint's run
// progress (as JSON) at every point of the sequence: the resumed rule
// keeps and stops where the uninterrupted one does.
func TestEarlyStopResumes(t *testing.T) {
	cfg := jobfile.TrainConfig{Patience: 3, EarlyStop: jobfile.EarlyStopValLossAcc}
	type out struct {
		keep bool
		why  string
	}
	whole := newStopRule(cfg)
	var want []out
	for _, e := range gatSeq {
		k, w := whole.evaluate(e[0], e[1])
		want = append(want, out{k, w})
	}
	for cut := range gatSeq {
		r := newStopRule(cfg)
		for _, e := range gatSeq[:cut] {
			r.evaluate(e[0], e[1])
		}
		var p runProgress
		r.saveTo(&p)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q runProgress
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		resumed := newStopRule(cfg)
		resumed.loadFrom(q)
		for i := cut; i < len(gatSeq); i++ {
			k, w := resumed.evaluate(gatSeq[i][0], gatSeq[i][1])
			if (out{k, w}) != want[i] {
				t.Fatalf("resumed after %d evaluations: evaluation %d gives (%v, %q), uninterrupted (%v, %q)", cut, i, k, w, want[i].keep, want[i].why)
			}
		}
	}
}

// TestEarlyStopSummary: with "val_loss_acc", summary.json's best_epoch,
// best_val_acc and test_acc_at_best_val are the last evaluation where
// both the accuracy and the loss were at their best, and the run stops
// at train.patience; metrics.jsonl carries val_loss.
func TestEarlyStopSummary(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	j := outputJob(dir, func(c *jobfile.Config) {
		c.Train.Patience, c.Train.EarlyStop = 3, jobfile.EarlyStopValLossAcc
	})
	if err := j.OpenOutput(OutputOptions{}); err != nil {
		t.Fatal(err)
	}
	run, _ := j.beginRun()
	stopped := 0
	for i, e := range gatSeq {
		em := record.EpochMetrics{Epoch: i + 1, Loss: 1}
		em.SetAccuracies(1, e[0], float64(i)/100) // test accuracy names the epoch
		em.SetValLoss(e[1])
		stop, err := run.epochDone(em)
		if err != nil {
			t.Fatal(err)
		}
		if stop {
			stopped = i + 1
			break
		}
	}
	run.end(nil)
	r, err := record.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	if stopped != 9 || s.StopReason != record.StopPatience || s.BestEpoch != 6 || s.BestValAcc != 0.60 || s.TestAtBest != 0.05 {
		t.Fatalf("stopped after epoch %d; summary: stop %q, best epoch %d, best val %v, test at best %v; want 9, patience, 6, 0.6, 0.05",
			stopped, s.StopReason, s.BestEpoch, s.BestValAcc, s.TestAtBest)
	}
	if len(r.Metrics) != 9 || r.Metrics[5].ValLoss == nil || *r.Metrics[5].ValLoss != 0.85 {
		t.Fatalf("metrics: %d lines, epoch 6's val_loss %v", len(r.Metrics), r.Metrics[5].ValLoss)
	}
}
