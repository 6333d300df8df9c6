package inscribe

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// A session of thousands of rounds inscribes under a small descriptor limit:
// the batch that commits its round files must not hold a descriptor per
// file. Not parallel: the limit is the process's, and parallel tests wait
// until every sequential one has finished.
func TestManyRoundsFewDescriptors(t *testing.T) {
	const rounds = 3000
	var src bytes.Buffer
	parent := "null"
	for i := 1; i <= rounds; i++ {
		u, a := fmt.Sprintf(`"u%d"`, i), fmt.Sprintf(`"a%d"`, i)
		fmt.Fprintf(&src, `{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":"prompt %d"},"uuid":%s,"timestamp":"2026-01-01T00:00:%02d.000Z","sessionId":"s1"}`+"\n", parent, i, u, i%60)
		fmt.Fprintf(&src, `{"parentUuid":%s,"isSidechain":false,"message":{"id":"msg_%d","role":"assistant","model":"m","content":[{"type":"text","text":"reply %d"}]},"type":"assistant","uuid":%s,"timestamp":"2026-01-01T00:00:%02d.500Z","sessionId":"s1"}`+"\n", u, i, i, a, i%60)
		parent = a
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// What earlier tests left open, plus a margin far below one per round.
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	small := lim
	small.Cur = uint64(len(open)) + 200
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &small); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)

	r, doc, _ := inscribeOne(t, "s1.jsonl", src.Bytes())
	if r.Err != nil {
		t.Fatalf("inscribing %d rounds with %d descriptors: %v", rounds, small.Cur, r.Err)
	}
	if got := exportOf(t, r.Doc); !bytes.Equal(got, src.Bytes()) {
		t.Error("the round files do not give the transcript back")
	}
	if !bytes.Contains(doc, []byte(fmt.Sprintf("reply %d", rounds))) {
		t.Error("the document lacks the last round")
	}
}
