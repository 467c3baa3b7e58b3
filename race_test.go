//go:build race

package main

// raceEnabled says whether the tests run under the race detector; the binary the end-to-end
// tests run is then built with it too.
const raceEnabled = true
