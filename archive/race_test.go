//go:build race

package archive

// raceEnabled says whether the tests run with the race detector, under which the zip64 tests
// would take many minutes; make test-long runs them again without it.
const raceEnabled = true
