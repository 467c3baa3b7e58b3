package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

var (
	words = strings.Fields(`the a of to and in is for on with as by at from that this be are was it
		request response server client error warning timeout retry connect cache user session token
		config value table index query update insert delete select order item price total count
		backup archive file folder path read write open close sync commit abort status complete`)
	levels  = []string{"INFO", "INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN", "ERROR"}
	methods = []string{"GET", "GET", "GET", "POST", "PUT", "DELETE"}
	paths   = []string{"/api/v1/items", "/api/v1/users", "/api/v2/orders", "/health", "/static/app.js", "/login"}
	agents  = []string{"Mozilla/5.0 (X11; Linux x86_64)", "curl/8.5.0", "Go-http-client/1.1", "python-requests/2.31"}
	names   = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"}
	places  = []string{"DE", "FR", "US", "GB", "JP", "BR", "IN", "NL", "SE", "ES"}
)

// genLog writes access-log lines with increasing timestamps.
func genLog(w *bufio.Writer, r *rand.Rand, size int) {
	t := int64(1_780_000_000_000)
	for n := 0; n < size; {
		t += r.Int64N(50)
		line := fmt.Sprintf("%s.%03dZ %-5s [worker-%02d] %s %s/%d status=%d bytes=%d dur=%d.%dms ip=10.%d.%d.%d ua=%q req=%016x\n",
			timestamp(t/1000), t%1000, levels[r.IntN(len(levels))], r.IntN(16), methods[r.IntN(len(methods))],
			paths[r.IntN(len(paths))], r.IntN(100000), []int{200, 200, 200, 201, 304, 404, 500}[r.IntN(7)],
			r.IntN(100000), r.IntN(500), r.IntN(10), r.IntN(4), r.IntN(256), r.IntN(256),
			agents[r.IntN(len(agents))], r.Uint64()&0xffffffffff)
		n += len(line)
		w.WriteString(line)
	}
}

func timestamp(sec int64) string {
	// A fixed calendar is enough here: the point is the shape of the text.
	d, s := sec/86400, sec%86400
	return fmt.Sprintf("2026-%02d-%02dT%02d:%02d:%02d", 1+d%12, 1+d%28, s/3600, s/60%60, s%60)
}

func genCSV(w *bufio.Writer, r *rand.Rand, size int) {
	n, _ := w.WriteString("order_id,date,customer,country,product,quantity,unit_price,total\n")
	for id := 100000; n < size; id++ {
		q, p := 1+r.IntN(20), 100+r.IntN(99900)
		line := fmt.Sprintf("%d,2026-%02d-%02d,%s%d,%s,SKU-%05d,%d,%d.%02d,%d.%02d\n", id, 1+r.IntN(12), 1+r.IntN(28),
			names[r.IntN(len(names))], r.IntN(1000), places[r.IntN(len(places))], r.IntN(5000), q, p/100, p%100, q*p/100, q*p%100)
		n += len(line)
		w.WriteString(line)
	}
}

func genMetrics(w *bufio.Writer, r *rand.Rand, size int) {
	n, _ := w.WriteString("timestamp,host,cpu,mem_mb,disk_read_kb,disk_write_kb,net_rx_kb,net_tx_kb\n")
	t, cpu := 1_780_000_000, 30.0
	for n < size {
		t += 10
		cpu = min(100, max(0, cpu+r.NormFloat64()*3))
		line := fmt.Sprintf("%d,host-%02d,%.2f,%d,%d,%d,%d,%d\n", t, r.IntN(40), cpu, 2000+r.IntN(6000),
			r.IntN(5000), r.IntN(8000), r.IntN(20000), r.IntN(20000))
		n += len(line)
		w.WriteString(line)
	}
}

func genUsers(w *bufio.Writer, r *rand.Rand, size int) {
	n, _ := w.WriteString("id,name,email,country,created,plan,active\n")
	for id := 1; n < size; id++ {
		name := names[r.IntN(len(names))] + fmt.Sprint(r.IntN(100000))
		line := fmt.Sprintf("%d,%s,%s@example.com,%s,2025-%02d-%02d,%s,%t\n", id, name, name, places[r.IntN(len(places))],
			1+r.IntN(12), 1+r.IntN(28), []string{"free", "pro", "team"}[r.IntN(3)], r.IntN(4) > 0)
		n += len(line)
		w.WriteString(line)
	}
}

// genBinary writes something shaped like an executable: runs of instruction-like byte
// sequences drawn from a small vocabulary, tables of slowly changing integers, and strings.
func genBinary(w *bufio.Writer, r *rand.Rand, size int) {
	ops := make([][]byte, 400)
	for i := range ops {
		ops[i] = make([]byte, 2+r.IntN(6))
		for j := range ops[i] {
			ops[i][j] = byte(r.IntN(256))
		}
	}
	var b [8]byte
	for n := 0; n < size; {
		switch k := r.IntN(10); {
		case k < 6: // code: common ops with random immediates
			for range 2000 {
				op := ops[int(r.ExpFloat64()*40)%len(ops)]
				w.Write(op)
				n += len(op)
				if r.IntN(3) == 0 {
					binary.LittleEndian.PutUint32(b[:], uint32(r.IntN(1<<16)))
					w.Write(b[:4])
					n += 4
				}
			}
		case k < 9: // data: a table of increasing offsets
			v := r.Uint32()
			for range 1000 {
				v += uint32(r.IntN(300))
				binary.LittleEndian.PutUint32(b[:], v)
				w.Write(b[:4])
				n += 4
			}
		default: // strings
			for range 300 {
				s := words[r.IntN(len(words))] + "." + words[r.IntN(len(words))] + "\x00"
				w.WriteString(s)
				n += len(s)
			}
		}
	}
}

func genRandom(w *bufio.Writer, r *rand.Rand, size int) {
	var b [8]byte
	for n := 0; n < size; n += 8 {
		binary.LittleEndian.PutUint64(b[:], r.Uint64())
		w.Write(b[:])
	}
}

// smallFiles makes n files of 100 bytes to 4 KiB: text, config and JSON, 100 to a folder.
func smallFiles(dir string, n int) error {
	r := rand.New(rand.NewPCG(99, 42))
	buf := make([]byte, 4096)
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		data := buf[:100+r.IntN(3996)]
		ext := ".txt"
		switch i % 3 {
		case 0:
			fillText(data, r)
		case 1:
			fillConfig(data, r)
			ext = ".conf"
		default:
			fillJSON(data, r)
			ext = ".json"
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d%s", i, ext)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func fillText(b []byte, r *rand.Rand) {
	fill(b, func() string {
		if r.IntN(12) == 0 {
			return ".\n"
		}
		return words[r.IntN(len(words))] + " "
	})
}

func fillConfig(b []byte, r *rand.Rand) {
	fill(b, func() string {
		return fmt.Sprintf("%s_%s = %d\n", words[r.IntN(len(words))], words[r.IntN(len(words))], r.IntN(10000))
	})
}

func fillJSON(b []byte, r *rand.Rand) {
	fill(b, func() string {
		return fmt.Sprintf("{\"id\": %d, \"user\": %q, \"status\": %q},\n", r.IntN(1e6), names[r.IntN(len(names))], words[r.IntN(len(words))])
	})
}

// fill fills b with pieces, cutting the last one to fit.
func fill(b []byte, piece func() string) {
	for n := 0; n < len(b); {
		n += copy(b[n:], piece())
	}
}
