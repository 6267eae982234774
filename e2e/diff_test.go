package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// maxReported bounds the mismatches printed per script; the rest are counted.
const maxReported = 40

// replyTimeout is how long one reply may take (slotd may run with -race).
const replyTimeout = 10 * time.Second

// TestDiff sends every script of testdata/diff to redis-server and to slotd
// and compares the replies byte for byte. With SLOTD_E2E_TARGET=redis it
// compares two redis-servers instead, which checks that a script is
// deterministic before slotd is blamed.
func TestDiff(t *testing.T) {
	files, err := filepath.Glob("testdata/diff/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/diff: %v", err)
	}
	ref := startRedis(t)
	peer := startTarget(t)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			steps, err := parseScriptFile(f)
			if err != nil {
				t.Fatal(err)
			}
			runScript(t, f, steps, ref, peer)
		})
	}
}

// side is one server's end of the comparison: its connections (scripts
// switch with @conn) and the current one.
type side struct {
	srv   *server
	conns map[int]*sideConn
	cur   *sideConn
}

type sideConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// use makes connection n current, dialing it the first time.
func (s *side) use(n int) error {
	if s.conns == nil {
		s.conns = map[int]*sideConn{}
	}
	if c := s.conns[n]; c != nil {
		s.cur = c
		return nil
	}
	c, err := net.DialTimeout("tcp", s.srv.Addr(), 5*time.Second)
	if err != nil {
		return err
	}
	s.cur = &sideConn{conn: c, r: bufio.NewReaderSize(c, 64<<10)}
	s.conns[n] = s.cur
	return nil
}

func (s *side) close() {
	for n, c := range s.conns {
		c.conn.Close()
		delete(s.conns, n)
	}
	s.cur = nil
}

func (s *side) send(b []byte) error {
	s.cur.conn.SetWriteDeadline(time.Now().Add(replyTimeout))
	_, err := s.cur.conn.Write(b)
	return err
}

func (s *side) read() (*reply, error) {
	s.cur.conn.SetReadDeadline(time.Now().Add(replyTimeout))
	return readReply(s.cur.r)
}

// roundTrip sends b and reads n replies, concatenating their raw bytes into
// one reply when n > 1.
func (s *side) roundTrip(b []byte, n int) (*reply, error) {
	if err := s.send(b); err != nil {
		return nil, err
	}
	if n == 1 {
		return s.read()
	}
	all := &reply{Type: '*'}
	var raw []byte
	for i := 0; i < n; i++ {
		rp, err := s.read()
		if err != nil {
			return nil, err
		}
		raw = append(raw, rp.Raw...)
		all.Elems = append(all.Elems, rp)
	}
	all.Raw = raw
	return all, nil
}

func runScript(t *testing.T, file string, steps []step, refSrv, peerSrv *server) {
	ref, peer := &side{srv: refSrv}, &side{srv: peerSrv}
	useConn := func(n int) {
		for _, s := range []*side{ref, peer} {
			if err := s.use(n); err != nil {
				t.Fatalf("connect %s: %v\n%s output:\n%s", s.srv.Name, err, s.srv.Name, tail(s.srv.Output(), 4000))
			}
		}
	}
	connect := func() {
		ref.close()
		peer.close()
		useConn(1)
	}
	connect()
	defer ref.close()
	defer peer.close()
	// Each script starts from empty databases on fresh connections.
	for _, s := range []*side{ref, peer} {
		rp, err := s.roundTrip(encodeCommand(nil, []string{"FLUSHALL"}), 1)
		if err != nil || string(rp.Raw) != "+OK\r\n" {
			t.Fatalf("FLUSHALL on %s: %v %q", s.srv.Name, err, rawOf(rp))
		}
	}
	mismatches, ioErrors := 0, 0
	for _, st := range steps {
		switch st.Kind {
		case stepSleep:
			time.Sleep(st.Sleep)
			continue
		case stepReconnect:
			connect()
			continue
		case stepConn:
			useConn(st.Conn)
			continue
		}
		var msg []byte
		n := 1
		if st.Kind == stepRaw {
			msg, n = st.Raw, st.NRaw
		} else {
			msg = encodeCommand(nil, st.Args)
		}
		a, errA := ref.roundTrip(msg, n)
		b, errB := peer.roundTrip(msg, n)
		if errA != nil || errB != nil {
			mismatches++
			t.Errorf("%s:%d: %s\n  %s: %v %q\n  %s: %v %q\n  (reconnecting both)",
				file, st.Line, st.Text, refSrv.Name, errA, rawOf(a), peerSrv.Name, errB, rawOf(b))
			// A server that hangs or crashes would make every later line
			// wait for the timeout: give up on this script.
			if ioErrors++; ioErrors == 3 {
				t.Fatalf("%s: 3 connection errors, script abandoned", file)
			}
			connect()
			continue
		}
		if st.Ignore != "" {
			continue
		}
		if !sameReply(&st, a, b) {
			mismatches++
			if mismatches <= maxReported {
				t.Errorf("%s:%d: %s\n  %-12s %s\n  %-12s %s", file, st.Line, st.Text,
					refSrv.Name+":", showRaw(a.Raw), peerSrv.Name+":", showRaw(b.Raw))
			}
		}
	}
	if mismatches > maxReported {
		t.Errorf("%s: %d mismatches in all, %d not shown", file, mismatches, mismatches-maxReported)
	}
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func rawOf(rp *reply) []byte {
	if rp == nil {
		return nil
	}
	return rp.Raw
}

// showRaw quotes a reply for the failure message, cutting very long ones.
func showRaw(b []byte) string {
	const max = 600
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return strconv.Quote(string(b))
}

// sameReply applies the step's modifiers to both replies and compares.
func sameReply(st *step, a, b *reply) bool {
	if st.HasApprox && a.Type == ':' && b.Type == ':' {
		x, err1 := strconv.ParseInt(string(a.Line), 10, 64)
		y, err2 := strconv.ParseInt(string(b.Line), 10, 64)
		if err1 == nil && err2 == nil {
			d := x - y
			return d >= -st.Approx && d <= st.Approx
		}
	}
	if !st.HasSorting && len(st.Masks) == 0 {
		return bytes.Equal(a.Raw, b.Raw)
	}
	norm := func(rp *reply) []byte {
		for _, m := range st.Masks {
			rp.mask(m)
		}
		if st.HasSorting {
			rp.sortElems(st.SortDepth, st.SortPairs)
		}
		return rp.encode(nil)
	}
	return bytes.Equal(norm(a), norm(b))
}
