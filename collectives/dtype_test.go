package collectives

import "testing"

func TestDTypeText(t *testing.T) {
	for _, c := range []struct {
		d     DType
		name  string
		bytes int
	}{{Float32, "float32", 4}, {BF16, "bf16", 2}} {
		b, _ := c.d.MarshalText()
		var got DType
		if string(b) != c.name || got.UnmarshalText(b) != nil || got != c.d || c.d.Bytes() != c.bytes {
			t.Errorf("%v: text %q, parsed %v, bytes %d", c.d, b, got, c.d.Bytes())
		}
	}
	var d DType
	if err := d.UnmarshalText([]byte("fp16")); err == nil || err.Error() != `communication dtype "fp16": expected one of "float32", "bf16"` {
		t.Errorf("fp16: %v", err)
	}
}
