package node

import (
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/node/config"
)

// connLimits are the per-connection limits read on the connection path,
// cached from the configuration so that the read loop never takes the
// configuration lock.
type connLimits struct {
	queryBuf   int64         // client-query-buffer-limit
	obufHard   int64         // normal class hard limit, 0: none
	obufSoft   int64         // normal class soft limit, 0: none
	obufSecs   time.Duration // normal class soft limit duration
	idle       time.Duration // timeout, 0: none
	obufLimits bool          // a normal-class limit is set
}

// applyLimits refreshes the cached connection limits.
func (s *Server) applyLimits() {
	l := &connLimits{
		queryBuf: s.Cfg.Int("client-query-buffer-limit"),
		idle:     time.Duration(s.Cfg.Int("timeout")) * time.Second,
	}
	if l.queryBuf <= 0 {
		l.queryBuf = 1 << 30
	}
	if hard, soft, secs, ok := outputLimitClass(s.Cfg.Str("client-output-buffer-limit"), "normal"); ok {
		l.obufHard, l.obufSoft, l.obufSecs = hard, soft, time.Duration(secs)*time.Second
	}
	l.obufLimits = l.obufHard > 0 || l.obufSoft > 0
	s.limits.Store(l)
}

// outputLimitClass finds a class's hard, soft and seconds values in a
// client-output-buffer-limit value ("normal 0 0 0 replica 256mb 64mb 60 ...").
func outputLimitClass(v, class string) (hard, soft, secs int64, ok bool) {
	f := strings.Fields(v)
	for i := 0; i+3 < len(f); i += 4 {
		c := strings.ToLower(f[i])
		if c == "replica" {
			c = "slave"
		}
		if c != class {
			continue
		}
		h, err1 := config.ParseMemory(f[i+1])
		sf, err2 := config.ParseMemory(f[i+2])
		sec, err3 := strconv.ParseInt(f[i+3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return 0, 0, 0, false
		}
		hard, soft, secs, ok = h, sf, sec, true
	}
	return
}

// overOutputHard reports whether the replies waiting for c exceed the hard
// output buffer limit; the client is then closed without its replies, as
// redis-server does, instead of growing the buffer further.
func (l *connLimits) overOutputHard(c *Client) bool {
	return l.obufHard > 0 && int64(len(c.out.B)) > l.obufHard
}

// writeDeadline is the deadline for writing n bytes of replies: a client
// that stays above the soft limit for longer than its seconds is closed.
func (l *connLimits) writeDeadline(n int) time.Time {
	if l.obufSoft <= 0 || int64(n) <= l.obufSoft {
		return time.Time{}
	}
	d := l.obufSecs
	if d < time.Second {
		// redis-server counts whole seconds: a 0-second soft limit still
		// closes the client only when it stays over the limit.
		d = time.Second
	}
	return time.Now().Add(d)
}
