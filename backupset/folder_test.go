package backupset_test

import (
	"testing"

	"backup/backupset"
	"backup/backupset/storetest"
)

func TestFolderStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) backupset.Store { return backupset.Folder{Dir: t.TempDir()} })
}
