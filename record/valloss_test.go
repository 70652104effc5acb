package record

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// TestMetricsValLoss: an evaluated epoch's val_loss is written and read
// back; a line without it (an older file, or an epoch without
// evaluation) reads as nil; a non-finite one is written as null (read
// back as nil, as the accuracies).
func TestMetricsValLoss(t *testing.T) {
	m := EpochMetrics{Epoch: 3, Loss: 1.25, Steps: 1}
	m.SetAccuracies(0.9, 0.8, 0.7)
	m.SetValLoss(0.625)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back EpochMetrics
	if err := json.Unmarshal(b, &back); err != nil || back.ValLoss == nil || *back.ValLoss != 0.625 {
		t.Fatalf("%s read back: val_loss %v, %v", b, back.ValLoss, err)
	}
	old := `{"epoch":3,"loss":1.25,"train_acc":0.9,"val_acc":0.8,"test_acc":0.7,"epoch_s":0.1,"steps":1}`
	if err := json.Unmarshal([]byte(old), &back); err != nil || back.ValLoss != nil || back.ValAcc == nil {
		t.Fatalf("older line: val_loss %v, val_acc %v, %v", back.ValLoss, back.ValAcc, err)
	}
	m.SetValLoss(math.Inf(1))
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil || back.ValLoss != nil || !bytes.Contains(b, []byte(`"val_loss":null`)) {
		t.Fatalf("%s: non-finite val_loss read back as %v, %v", b, back.ValLoss, err)
	}
}
