// Package report is told by every stage what became of each path. It decides the status of
// a run, renders the receipt (JSON) and the one-line human summary, and drives the progress
// bar on a terminal.
//
// It implements the engine's hooks; the engine (walker, skiprules, archive) never imports it.
package report
