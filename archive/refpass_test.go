package archive

import (
	"bytes"
	"hash/maphash"
	"testing"
)

// TestKeyedSum: the digest depends on the bytes and the seed only, not on how the bytes
// are cut into writes (the pass and the copy cut them differently), and changes when a byte
// changes or two blocks swap.
func TestKeyedSum(t *testing.T) {
	data := make([]byte, 3*keyedBlock+123)
	for i := range data {
		data[i] = byte(i*31 + i>>16)
	}
	seed := maphash.MakeSeed()
	sum := func(b []byte, cut int) uint64 {
		k := newKeyedSum(seed)
		for len(b) > 0 {
			n := min(cut, len(b))
			k.Write(b[:n])
			b = b[n:]
		}
		return k.Sum64()
	}
	want := sum(data, len(data))
	for _, cut := range []int{1, 7, 4096, keyedBlock - 1, keyedBlock, keyedBlock + 1, 1 << 20} {
		if got := sum(data, cut); got != want {
			t.Errorf("writes of %d: %x, want %x", cut, got, want)
		}
	}
	changed := bytes.Clone(data)
	changed[2*keyedBlock+5] ^= 1
	swapped := append(append(bytes.Clone(data[keyedBlock:2*keyedBlock]), data[:keyedBlock]...), data[2*keyedBlock:]...)
	for name, b := range map[string][]byte{"a byte changed": changed, "blocks swapped": swapped, "cut short": data[:len(data)-1]} {
		if sum(b, 4096) == want {
			t.Errorf("%s: same digest", name)
		}
	}
	other := newKeyedSum(maphash.MakeSeed())
	other.Write(data)
	if other.Sum64() == want {
		t.Error("another seed gives the same digest")
	}
}
