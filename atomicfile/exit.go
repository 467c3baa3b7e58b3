package atomicfile

import (
	"os"
	"sync"

	"backup/eintr"
)

// exitTemps are the files a process must not leave behind even when it ends at once,
// without unwinding (a second SIGINT): a database's staged snapshot, which an encrypted
// run keeps in $TMPDIR in plaintext (see docs/encryption.md).
var exitTemps struct {
	sync.Mutex
	paths map[string]bool
}

// CreateTempRemovedAtExit is eintr.CreateTemp, its file registered for RemoveExitTemps
// (with the names made of its own and each of suffixes: files made beside it) until forget
// is called, once they are removed or handed on unlinked. The file is made under the
// registry's lock, so that a forced exit never falls between the two.
func CreateTempRemovedAtExit(dir, pattern string, suffixes ...string) (f *os.File, forget func(), err error) {
	exitTemps.Lock()
	defer exitTemps.Unlock()
	f, err = eintr.CreateTemp(dir, pattern)
	if err != nil {
		return nil, nil, err
	}
	paths := []string{f.Name()}
	for _, s := range suffixes {
		paths = append(paths, f.Name()+s)
	}
	if exitTemps.paths == nil {
		exitTemps.paths = map[string]bool{}
	}
	for _, p := range paths {
		exitTemps.paths[p] = true
	}
	return f, func() {
		exitTemps.Lock()
		defer exitTemps.Unlock()
		for _, p := range paths {
			delete(exitTemps.paths, p)
		}
	}, nil
}

// RemoveExitTemps removes what CreateTempRemovedAtExit registered: the last thing a process that
// ends at once does. The registry stays locked, so that nothing is registered after.
func RemoveExitTemps() {
	exitTemps.Lock()
	for p := range exitTemps.paths {
		eintr.Remove(p)
	}
}
