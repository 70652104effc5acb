package enum

import (
	"errors"
	"testing"
)

type color int

var colorNames = []string{"red", "green"}

func TestParse(t *testing.T) {
	for i, n := range colorNames {
		got, err := Parse[color]("color", n, colorNames)
		if err != nil || got != color(i) {
			t.Errorf("Parse(%q) = %v, %v; want %d", n, got, err, i)
		}
		if s := Name("color", got, colorNames); s != n {
			t.Errorf("Name(%d) = %q, want %q", got, s, n)
		}
	}
	_, err := Parse[color]("color", "blue", colorNames)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse(blue) = %v, want an *Error", err)
	}
	if want := `color "blue": expected one of "red", "green"`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if s := Name("color", color(5), colorNames); s != "color(5)" {
		t.Errorf("Name(5) = %q", s)
	}
}
