package report

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"backup/format"
)

func TestEvents(t *testing.T) {
	var b strings.Builder
	e := NewEvents(&b, "create")
	e.Emit("skipped", format.Skipped{Path: "app/s", Kind: "socket"})
	e.Emit("warning", format.Warning{Path: "app/x", Op: "open", Error: "permission denied", Lost: true})
	e.Emit("empty", struct{}{})
	if err := e.Result(map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	want := `{"type":"start","schema":"backup.events/v1","command":"create"}
{"type":"skipped","path":"app/s","kind":"socket"}
{"type":"warning","path":"app/x","op":"open","error":"permission denied","lost":true}
{"type":"empty"}
{"type":"result","result":{"n":1}}
`
	if got := b.String(); got != want {
		t.Errorf("stream:\n%s\nwant:\n%s", got, want)
	}
	for line := range strings.Lines(b.String()) {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("line %q: %v", line, err)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("closed pipe") }

func TestEventsWriteError(t *testing.T) {
	e := NewEvents(failWriter{}, "verify")
	if err := e.Result(1); err == nil || err.Error() != "closed pipe" {
		t.Errorf("Result after a failed write: %v, want the write's error", err)
	}
	var nilEvents *Events
	nilEvents.Emit("x", 1)
	if err := nilEvents.Result(1); err != nil {
		t.Errorf("nil Events: %v", err)
	}
}
