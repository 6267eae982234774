package node

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestClientBasics(t *testing.T) {
	tc := newTestServer(t)
	tc.expect(":"+itoa(tc.c.ID)+"|", "CLIENT", "ID")
	tc.expect("$-1|", "CLIENT", "GETNAME")
	tc.expect("-ERR Client names cannot contain spaces, newlines or special characters.|", "CLIENT", "SETNAME", "a b")
	tc.expect("+OK|", "CLIENT", "SETNAME", "conn1")
	tc.expect("$5|conn1|", "client", "getname")
	tc.expect("+OK|", "CLIENT", "SETNAME", "")
	tc.expect("$-1|", "CLIENT", "GETNAME")
	if got := tc.do("CLIENT", "SETNAME"); got != "-ERR wrong number of arguments for 'client|setname' command\r\n" {
		t.Fatalf("CLIENT SETNAME: %q", got)
	}
	tc.expect("-ERR wrong number of arguments for 'client' command|", "CLIENT")
	tc.expect("-ERR unknown subcommand 'nope'. Try CLIENT HELP.|", "CLIENT", "nope")
	tc.expect("+OK|", "CLIENT", "NO-EVICT", "on")
	tc.expect("+OK|", "CLIENT", "NO-EVICT", "OFF")
	tc.expect("-ERR syntax error|", "CLIENT", "NO-EVICT", "x")
	tc.expect("-ERR syntax error|", "CLIENT", "REPLY", "x")
	tc.expect(":-1|", "CLIENT", "GETREDIR")
	tc.expect("-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled|", "CLIENT", "CACHING", "yes")
	tc.expect("*6|$5|flags|*1|$3|off|$8|redirect|:-1|$8|prefixes|*0|", "CLIENT", "TRACKINGINFO")
	tc.expect("+OK|", "CLIENT", "TRACKING", "off")
	tc.expect("-ERR syntax error|", "CLIENT", "TRACKING", "x")
	tc.expect("-ERR value is not an integer or out of range|", "CLIENT", "UNBLOCK", "x")
	tc.expect("-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR|", "CLIENT", "UNBLOCK", "5", "x")
	tc.expect(":0|", "CLIENT", "UNBLOCK", "5", "timeout")
	tc.expect("-ERR timeout is not an integer or out of range|", "CLIENT", "PAUSE", "x")
	tc.expect("-ERR timeout is negative|", "CLIENT", "PAUSE", "-1")
	tc.expect("-ERR CLIENT PAUSE mode must be WRITE or ALL|", "CLIENT", "PAUSE", "10", "x")
	tc.expect("+OK|", "CLIENT", "SETINFO", "lib-name", "go-redis(,go1.26)")
	tc.expect("+OK|", "CLIENT", "SETINFO", "LIB-VER", "9.0.0")
	tc.expect("-ERR Unrecognized option 'x'|", "CLIENT", "SETINFO", "x", "y")
	tc.expect("-ERR CLIENT TRACKING is not supported by this server|", "CLIENT", "TRACKING", "on")
}

func TestClientKill(t *testing.T) {
	a := newTestServer(t)
	b := a.newClient()
	a.expect("-ERR No such client|", "CLIENT", "KILL", "1.2.3.4:5")
	a.expect("-ERR No such client|", "CLIENT", "KILL", "ID")
	a.expect(":0|", "CLIENT", "KILL", "ID", "999")
	a.expect("-ERR client-id should be greater than 0|", "CLIENT", "KILL", "ID", "x")
	a.expect("-ERR client-id should be greater than 0|", "CLIENT", "KILL", "ID", "-1")
	a.expect("-ERR Unknown client type 'x'|", "CLIENT", "KILL", "TYPE", "x")
	a.expect("-ERR syntax error|", "CLIENT", "KILL", "SKIPME", "x")
	a.expect("-ERR syntax error|", "CLIENT", "KILL", "foo", "bar")
	a.expect("-ERR syntax error|", "CLIENT", "KILL", "ID", "1", "TYPE")
	a.expect("-ERR No such user 'nobody'|", "CLIENT", "KILL", "USER", "nobody")
	a.expect(":0|", "CLIENT", "KILL", "ADDR", "1.2.3.4:5")
	a.expect(":0|", "CLIENT", "KILL", "TYPE", "master")
	a.expect(":1|", "CLIENT", "KILL", "ID", itoa(b.c.ID))
	if !b.c.killed.Load() {
		t.Fatal("CLIENT KILL ID did not close the client")
	}
	// SKIPME defaults to yes: the caller survives a filter that matches it.
	a.expect(":0|", "CLIENT", "KILL", "ID", itoa(a.c.ID))
	a.expect(":1|", "CLIENT", "KILL", "ID", itoa(a.c.ID), "SKIPME", "no")
	if a.c.Flags&ClientCloseAfterReply == 0 {
		t.Fatal("killing oneself must close after the reply")
	}
}

var clientLineRE = regexp.MustCompile(`^id=\d+ addr=\S+ laddr=\S+ fd=-?\d+ name=\S* age=\d+ idle=\d+ flags=\w+ db=\d+ sub=0 psub=0 ssub=0 multi=-?\d+ qbuf=\d+ qbuf-free=\d+ argv-mem=\d+ multi-mem=\d+ rbs=\d+ rbp=\d+ obl=\d+ oll=0 omem=0 tot-mem=\d+ events=r cmd=\S+ user=default redir=-1 resp=[23]$`)

func TestClientList(t *testing.T) {
	a := newTestServer(t)
	b := a.newClient()
	b.expect("+OK|", "CLIENT", "SETNAME", "bee")
	b.expect("+OK|", "SELECT", "3")
	b.expect("+OK|", "MULTI")
	b.expect("+QUEUED|", "PING")
	out := parseReply(t, a.do("CLIENT", "LIST")).str
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("CLIENT LIST: %q", out)
	}
	for _, l := range lines {
		if !clientLineRE.MatchString(l) {
			t.Errorf("bad CLIENT LIST line %q", l)
		}
	}
	if !strings.Contains(lines[0], " cmd=client|list ") || !strings.Contains(lines[0], " argv-mem=10 ") {
		t.Errorf("caller line %q", lines[0])
	}
	if !strings.Contains(lines[1], " name=bee ") || !strings.Contains(lines[1], " db=3 ") ||
		!strings.Contains(lines[1], " flags=x ") || !strings.Contains(lines[1], " multi=1 ") || !strings.Contains(lines[1], " cmd=ping ") {
		t.Errorf("other client's line %q", lines[1])
	}
	one := parseReply(t, a.do("CLIENT", "LIST", "ID", itoa(b.c.ID), "99999")).str
	if strings.Count(one, "\n") != 1 || !strings.HasPrefix(one, "id="+itoa(b.c.ID)+" ") {
		t.Errorf("CLIENT LIST ID: %q", one)
	}
	a.expect("$0||", "CLIENT", "LIST", "TYPE", "master")
	a.expect("-ERR Unknown client type 'x'|", "CLIENT", "LIST", "TYPE", "x")
	a.expect("-ERR Invalid client ID|", "CLIENT", "LIST", "ID", "x")
	a.expect("-ERR syntax error|", "CLIENT", "LIST", "TYPE", "normal", "ID", "1")
	a.expect("-ERR syntax error|", "CLIENT", "LIST", "x")
	n := parseReply(t, a.do("CLIENT", "LIST", "TYPE", "normal")).str
	if strings.Count(n, "\n") != 2 {
		t.Errorf("CLIENT LIST TYPE normal: %q", n)
	}
	a.do("HELLO", "3")
	info := a.do("CLIENT", "INFO")
	if !strings.HasPrefix(info, "=") || !strings.Contains(info, "txt:id=") || !strings.HasSuffix(info, " resp=3\n\r\n") {
		t.Errorf("CLIENT INFO in RESP3: %q", info)
	}
}

// TestClientListFieldsMatchRedis checks the field names and their order
// against redis-server's CLIENT INFO.
func TestClientListFieldsMatchRedis(t *testing.T) {
	ref := startRedis(t).dial(t)
	want := fieldNames(parseReply(t, ref.do(t, "CLIENT", "INFO")).str)
	tc := newTestServer(t)
	got := fieldNames(parseReply(t, tc.do("CLIENT", "INFO")).str)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("CLIENT INFO fields:\n got  %v\n want %v", got, want)
	}
}

func fieldNames(line string) []string {
	var out []string
	for _, f := range strings.Fields(line) {
		k, _, _ := strings.Cut(f, "=")
		out = append(out, k)
	}
	return out
}

func TestClientReply(t *testing.T) {
	tc := newTestServer(t)
	tc.expect("", "CLIENT", "REPLY", "OFF")
	tc.expect("", "SET", "k", "v")
	tc.expect("", "GET", "k")
	tc.expect("", "NOPE")
	tc.expect("+OK|", "CLIENT", "REPLY", "ON")
	tc.expect("", "CLIENT", "REPLY", "SKIP")
	tc.expect("", "GET", "k")
	tc.expect("$1|v|", "GET", "k")
	tc.expect("", "CLIENT", "REPLY", "SKIP")
	tc.expect("+OK|", "CLIENT", "REPLY", "ON")
	tc.expect("+PONG|", "PING")
}

func TestClientPause(t *testing.T) {
	a := newTestServer(t)
	b := a.newClient()
	a.expect("+OK|", "SET", "k", "1")
	a.expect("+OK|", "CLIENT", "PAUSE", "100000", "WRITE")
	// Reads go on in WRITE mode.
	b.expect("$1|1|", "GET", "k")
	done := make(chan string)
	go func() { done <- b.do("SET", "k", "2") }()
	select {
	case r := <-done:
		t.Fatalf("write ran during CLIENT PAUSE WRITE: %q", r)
	case <-time.After(100 * time.Millisecond):
	}
	// a's reply buffer is separate from b's; UNPAUSE is not a write.
	a.expect("+OK|", "CLIENT", "UNPAUSE")
	select {
	case r := <-done:
		if r != "+OK\r\n" {
			t.Fatalf("held SET replied %q", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("held SET did not run after CLIENT UNPAUSE")
	}
	// A pause ends by itself when its time is up.
	a.expect("+OK|", "CLIENT", "PAUSE", "50")
	start := time.Now()
	b.expect("+PONG|", "PING")
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("PING was not held by CLIENT PAUSE ALL (%v)", d)
	}
}

// TestClientListConcurrent runs CLIENT LIST and CLIENT KILL over TCP while
// other clients change their state (run it with -race).
func TestClientListConcurrent(t *testing.T) {
	_, addr := startTCP(t)
	busy := make([]*tcpClient, 3)
	for i := range busy {
		busy[i] = dialTCP(t, addr)
		// A round trip first: the server has registered the client once it
		// answers, so every later CLIENT LIST must show it.
		busy[i].send("PING\r\n")
		if r := busy[i].reply(); r != "+PONG\r\n" {
			t.Fatalf("PING: %q", r)
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	for _, b := range busy {
		go func(b *tcpClient) {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				b.c.Write([]byte("SELECT 2\r\nMULTI\r\nPING\r\nDISCARD\r\nHELLO 3\r\nHELLO 2\r\nCLIENT SETNAME x\r\nSELECT 0\r\n"))
				b.c.SetReadDeadline(time.Now().Add(5 * time.Second))
				for i := 0; i < 8; i++ {
					if _, err := readValue(b.r, nil); err != nil {
						return
					}
				}
			}
		}(b)
	}
	a := dialTCP(t, addr)
	for i := 0; i < 50; i++ {
		a.send("CLIENT LIST\r\n")
		r := a.reply()
		if strings.Count(r, "\n") < 4+1 {
			t.Fatalf("CLIENT LIST: %q", r)
		}
	}
	close(stop)
	for range busy {
		<-done
	}
	// Kill one by id; its connection must close.
	victim := busy[0]
	victim.send("CLIENT ID\r\n")
	vid := strings.TrimSuffix(strings.TrimPrefix(victim.reply(), ":"), "\r\n")
	a.expectReply("CLIENT KILL ID "+vid+"\r\n", ":1\r\n")
	victim.expectClosed(2 * time.Second)
	a.expectReply("CLIENT KILL ADDR "+victim.c.LocalAddr().String()+"\r\n", ":0\r\n")
	// Old form on a live client replies +OK.
	other := busy[1]
	a.expectReply("CLIENT KILL "+other.c.LocalAddr().String()+"\r\n", "+OK\r\n")
	other.expectClosed(2 * time.Second)
}

func TestClientReplyOverTCP(t *testing.T) {
	_, addr := startTCP(t)
	a := dialTCP(t, addr)
	// The same pipeline gives these bytes on redis-server 7.0.15.
	a.send("CLIENT REPLY OFF\r\nSET k v\r\nGET k\r\nCLIENT REPLY SKIP\r\nCLIENT REPLY ON\r\nGET k\r\n" +
		"CLIENT REPLY SKIP\r\nGET k\r\nCLIENT REPLY x\r\nPING\r\n")
	for _, want := range []string{"+OK\r\n", "$1\r\nv\r\n", "-ERR syntax error\r\n", "+PONG\r\n"} {
		if got := a.reply(); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestClientListLastCommand(t *testing.T) {
	a := newTestServer(t)
	b := a.newClient()
	cmdOf := func() string {
		out := parseReply(t, a.do("CLIENT", "LIST", "ID", itoa(b.c.ID))).str
		_, rest, _ := strings.Cut(out, " cmd=")
		v, _, _ := strings.Cut(rest, " ")
		return v
	}
	if got := cmdOf(); got != "NULL" {
		t.Fatalf("new client: cmd=%s", got)
	}
	b.do("GET")
	if got := cmdOf(); got != "get" {
		t.Fatalf("after an arity error: cmd=%s", got)
	}
	b.do("CONFIGX")
	if got := cmdOf(); got != "NULL" {
		t.Fatalf("after an unknown command: cmd=%s", got)
	}
	b.do("CLIENT", "ID")
	if got := cmdOf(); got != "client|id" {
		t.Fatalf("after CLIENT ID: cmd=%s", got)
	}
}
