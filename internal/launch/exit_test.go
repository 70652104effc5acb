package launch

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestExitCodesDocumented: the exit codes are distinct and are the
// numbers docs/usage.md promises users and scripts.
func TestExitCodesDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../docs/usage.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	i := strings.Index(text, "Exit codes: ")
	if i < 0 {
		t.Fatal(`docs/usage.md has no "Exit codes: " paragraph`)
	}
	para := text[i:]
	if j := strings.Index(para, "### "); j > 0 {
		para = para[:j]
	}
	seen := map[ExitCode]string{}
	for _, c := range []struct {
		code   ExitCode
		name   string
		readme string
	}{
		{ExitOK, "ExitOK", "0 done"},
		{ExitFailed, "ExitFailed", "1 an error"},
		{ExitUsage, "ExitUsage", "2 a usage error"},
		{ExitInternal, "ExitInternal", "3 an internal error"},
		{ExitDiverged, "ExitDiverged", "4 the loss diverged"},
		{ExitInterrupted, "ExitInterrupted", "5 a signal"},
		{ExitStalled, "ExitStalled", "6 a rank stalled"},
	} {
		if other, ok := seen[c.code]; ok {
			t.Errorf("%s and %s are both %d", other, c.name, c.code)
		}
		seen[c.code] = c.name
		if !strings.HasPrefix(c.readme, strconv.Itoa(int(c.code))+" ") {
			t.Fatalf("table: %s = %d, README phrase %q", c.name, c.code, c.readme)
		}
		if !strings.Contains(para, c.readme) {
			t.Errorf("%s = %d: docs/usage.md's exit codes do not say %q:\n%s", c.name, c.code, c.readme, para)
		}
	}
}
