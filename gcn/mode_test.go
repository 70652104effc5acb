package gcn

import "testing"

func TestModeNormText(t *testing.T) {
	for _, m := range []Mode{FullGraph, MiniBatch} {
		b, _ := m.MarshalText()
		var got Mode
		if err := got.UnmarshalText(b); err != nil || got != m {
			t.Errorf("mode %v: text %q, back %v, %v", m, b, got, err)
		}
	}
	for _, n := range []Norm{NoNorm, RMSNorm} {
		b, _ := n.MarshalText()
		var got Norm
		if err := got.UnmarshalText(b); err != nil || got != n {
			t.Errorf("norm %v: text %q, back %v, %v", n, b, got, err)
		}
	}
	if b, _ := MiniBatch.MarshalText(); string(b) != "minibatch" {
		t.Errorf("MiniBatch text %q", b)
	}
	if b, _ := RMSNorm.MarshalText(); string(b) != "rms" {
		t.Errorf("RMSNorm text %q", b)
	}
	var m Mode
	if err := m.UnmarshalText([]byte("full")); err == nil || err.Error() != `training mode "full": expected one of "fullgraph", "minibatch", "neighbor", "isolated"` {
		t.Errorf("full: %v", err)
	}
	var n Norm
	if err := n.UnmarshalText([]byte("layer")); err == nil || err.Error() != `norm "layer": expected one of "none", "rms"` {
		t.Errorf("layer: %v", err)
	}
}
