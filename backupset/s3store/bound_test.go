package s3store

import (
	"net/http"
	"testing"
)

// TestAnswerSize: the bound allows for the range asked for, whatever the answer announces
// (a server announcing a terabyte does not buy itself a day per GiB), else for what the
// answer announces, else for unknownAnswer.
func TestAnswerSize(t *testing.T) {
	for _, tt := range []struct {
		rng      string
		announce int64
		want     int64
	}{
		{"bytes=0-1048575", 1 << 40, 1 << 20},
		{"bytes=5-5", 1, 1},
		{"", 25, 25},
		{"", -1, unknownAnswer},
		{"bytes=9-3", 7, 7}, // not a range this package asks for
		{"items=0-9", 7, 7},
	} {
		r, _ := http.NewRequest(http.MethodGet, "http://s3.test/b/k", nil)
		if tt.rng != "" {
			r.Header.Set("Range", tt.rng)
		}
		if got := answerSize(r, &http.Response{ContentLength: tt.announce}); got != tt.want {
			t.Errorf("Range %q, Content-Length %d: allows %d bytes, want %d", tt.rng, tt.announce, got, tt.want)
		}
	}
}
