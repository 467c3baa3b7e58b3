package main

import (
	"backup/archive"
	"backup/format"
	"backup/report"
)

// problemEvent is a --json-lines "problem" line of verify and restore: an entry and what is
// wrong with it; kind says which list of the result it is in (restore: refused, damaged or
// failed; verify: problem). It spells out archive.Problem's fields rather than embed it:
// the embedded type's MarshalJSON would write the whole event, and kind with it gone.
type problemEvent struct {
	Kind     string `json:"kind"`
	Entry    string `json:"entry"`
	EntryB64 string `json:"entry_b64,omitempty"`
	Reason   string `json:"reason"`
}

// newProblemEvent is p as a line of kind, its entry with a base64 twin when not UTF-8.
func newProblemEvent(kind string, p archive.Problem) problemEvent {
	e := problemEvent{Kind: kind, Reason: p.Reason}
	e.Entry, e.EntryB64 = format.JSONText(p.Entry)
	return e
}

// emitProblems sends one "problem" event per problem, the lists in the order given. The
// engine reports these in its result, in archive order, so they come just before it.
func emitProblems(e *report.Events, lists ...problemList) {
	for _, l := range lists {
		for _, p := range l.problems {
			e.Emit("problem", newProblemEvent(l.kind, p))
		}
	}
}

// problemList is one list of problems of a result, named by kind.
type problemList struct {
	kind     string
	problems []archive.Problem
}

// endRestoreEvents ends restore's --json-lines stream (nil events: none): a "problem" line
// per entry refused, damaged or not written, then the result.
func endRestoreEvents(e *report.Events, res *restoreJSON) error {
	emitProblems(e, problemList{"refused", res.Refused}, problemList{"damaged", res.Damaged}, problemList{"failed", res.Failed})
	return e.Result(res)
}
