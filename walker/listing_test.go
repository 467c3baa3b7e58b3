package walker

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestAttackNameListedTwice: a name deleted and made again while its directory is listed
// can be listed twice, when the new entry lands where the listing has not come to yet
// (ext4 without dir_index, whose new entries take the first free slot or go last; btrfs,
// which lists by an index that grows). The walk visited the name twice, and the archive's
// writer then failed the whole run: on an ext4 image made with mkfs.ext4 -O ^dir_index, a
// folder of 3,000 files, f0001 deleted, its slot taken by g0001 and f0001 made again while
// strace held the listing after its first getdents64, made create exit 1 with
// 'entry "app/big/f0001" after "app/big/f0001": entries must come in walk order, each name
// once', no archive written. Correct: each name is visited once, as the file it is now.
func TestAttackNameListedTwice(t *testing.T) {
	for _, n := range []int{aheadFrom / 2, 3 * aheadFrom} { // without and with stat-ahead
		root := t.TempDir()
		names := manyNames(t, root, n)
		twice := names[1]
		listed := false
		list := func(f *os.File, n int) ([]string, error) {
			got, err := f.Readdirnames(n)
			if filepath.Base(f.Name()) == "d" && !listed {
				listed = true
				got = append(got, twice) // made again beyond the listing's place
			}
			return got, err
		}
		visits := map[string]int{}
		w := Walker{readdirnames: list, Visit: func(e Entry) error {
			visits[e.Name]++
			return nil
		}}
		if err := w.Walk(context.Background(), root, "r"); err != nil {
			t.Fatal(err)
		}
		if len(visits) != n+2 {
			t.Errorf("%d names: visited %d paths, want %d", n, len(visits), n+2)
		}
		for name, k := range visits {
			if k != 1 {
				t.Errorf("%d names: %s visited %d times, want once", n, name, k)
			}
		}
	}
}
