package report

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// EventsSchema names the version of the --json-lines stream: the event types and their
// fields. A change to an existing field's meaning needs a new version; new types and fields
// do not.
const EventsSchema = "backup.events/v1"

// Events writes --json-lines: one JSON object per line, each with a "type" field first, as
// things happen. Its methods are safe for concurrent use (the walk, the archive's writer and
// the progress poller all emit); a nil *Events writes nothing.
type Events struct {
	mu  sync.Mutex
	w   io.Writer
	err error // the first write error; later events are dropped
}

// NewEvents returns an Events writing to w, and writes the stream's first line:
// {"type":"start","schema":EventsSchema,"command":command}.
func NewEvents(w io.Writer, command string) *Events {
	e := &Events{w: w}
	e.Emit("start", struct {
		Schema  string `json:"schema"`
		Command string `json:"command"`
	}{EventsSchema, command})
	return e
}

// Emit writes one line: v's JSON object (v must encode as an object) with "type": typ put
// in front of its fields.
func (e *Events) Emit(typ string, v any) {
	if e == nil {
		return
	}
	body, err := json.Marshal(v)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return
	}
	if err != nil {
		e.err = err
		return
	}
	var line bytes.Buffer
	line.WriteString(`{"type":`)
	t, _ := json.Marshal(typ)
	line.Write(t)
	if rest := bytes.TrimPrefix(body, []byte("{")); len(rest) > 1 {
		line.WriteByte(',')
		line.Write(rest)
	} else {
		line.WriteByte('}')
	}
	line.WriteByte('\n')
	_, e.err = e.w.Write(line.Bytes())
}

// Result writes the last line, {"type":"result","result":v}, and returns the first error
// any line met: a stream cut short must fail the command, as --json does.
func (e *Events) Result(v any) error {
	if e == nil {
		return nil
	}
	e.Emit("result", struct {
		Result any `json:"result"`
	}{v})
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}
