package archive

import (
	"bytes"
	"encoding/binary"
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
	if got := blockwise(seed, data); got != want {
		t.Errorf("streamed %x, block by block %x", want, got)
	}
	other := newKeyedSum(maphash.MakeSeed())
	other.Write(data)
	if other.Sum64() == want {
		t.Error("another seed gives the same digest")
	}
}

// blockwise is keyedSum's definition, computed block by block with maphash.Bytes.
func blockwise(seed maphash.Seed, data []byte) uint64 {
	var sum uint64
	for len(data) > 0 {
		b := data[:min(keyedBlock, len(data))]
		data = data[len(b):]
		var pair [16]byte
		binary.LittleEndian.PutUint64(pair[:], sum)
		binary.LittleEndian.PutUint64(pair[8:], maphash.Bytes(seed, b))
		sum = maphash.Bytes(seed, pair[:])
	}
	return sum
}

// TestKeyedSumAllocates: an entry's digest allocates the digest and nothing per byte: a
// buffer of a block per entry was most of what a reusing run allocated.
func TestKeyedSumAllocates(t *testing.T) {
	data := make([]byte, 2*keyedBlock+100)
	seed := maphash.MakeSeed()
	allocs := testing.AllocsPerRun(20, func() {
		k := newKeyedSum(seed)
		for b := data; len(b) > 0; b = b[min(4096, len(b)):] {
			k.Write(b[:min(4096, len(b))])
		}
		k.Sum64()
	})
	if allocs > 1 {
		t.Errorf("%v allocations per digest, want at most 1", allocs)
	}
}
