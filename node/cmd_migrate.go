package node

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/rdb"
)

// MIGRATE moves keys to another node as RESTORE (RESTORE-ASKING in
// cluster mode) commands, pipelined on one connection, and deletes each
// key here only once the target acknowledged it.
//
// Locking: the dispatcher holds the slot lock of the keys (one slot in
// cluster mode) for the whole call, network wait included, so that no
// write can slip in between a key's serialisation and its deletion.
// Commands on other slots keep running; redis-server blocks everything
// during a MIGRATE. Connections to targets are cached like redis-server's
// (closed after 10 s unused, at most 64), but a connection is taken out
// of the cache while a MIGRATE uses it, so that MIGRATEs of different
// slots to the same target run in parallel on separate connections.

const (
	migrateCacheTTL   = 10 * time.Second
	migrateCacheItems = 64
	migrateChunk      = 64 * 1024

	errMigrateKeysArg = "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
	errMigrateConnect = "IOERR error or timeout connecting to the client"
)

// migrateConn is one connection to a MIGRATE target.
type migrateConn struct {
	conn    net.Conn
	r       *bufio.Reader
	lastDB  int64 // -1: unknown, SELECT needed
	lastUse time.Time
}

// migrateCache holds idle connections by "host:port" as the client gave
// them.
type migrateCache struct {
	mu     sync.Mutex
	idle   map[string][]*migrateConn
	n      int
	closed bool
}

// get takes an idle connection to name out of the cache, or dials one.
func (m *migrateCache) get(name, host, port string, timeout time.Duration) (*migrateConn, error) {
	m.mu.Lock()
	if l := m.idle[name]; len(l) > 0 {
		mc := l[len(l)-1]
		m.idle[name] = l[:len(l)-1]
		if len(m.idle[name]) == 0 {
			delete(m.idle, name)
		}
		m.n--
		m.mu.Unlock()
		return mc, nil
	}
	m.mu.Unlock()
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &migrateConn{conn: c, r: bufio.NewReader(c), lastDB: -1}, nil
}

// put returns a healthy connection to the cache; when the cache is full an
// idle connection is dropped to make room, as redis-server drops a random
// one.
func (m *migrateCache) put(name string, mc *migrateConn) {
	mc.lastUse = time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		mc.conn.Close()
		return
	}
	if m.idle == nil {
		m.idle = map[string][]*migrateConn{}
	}
	if m.n >= migrateCacheItems {
		for k, l := range m.idle {
			l[0].conn.Close()
			if len(l) == 1 {
				delete(m.idle, k)
			} else {
				m.idle[k] = l[1:]
			}
			m.n--
			break
		}
	}
	m.idle[name] = append(m.idle[name], mc)
	m.n++
}

// closeIdle closes the connections unused for migrateCacheTTL.
func (m *migrateCache) closeIdle(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, l := range m.idle {
		keep := l[:0]
		for _, mc := range l {
			if now.Sub(mc.lastUse) > migrateCacheTTL {
				mc.conn.Close()
				m.n--
			} else {
				keep = append(keep, mc)
			}
		}
		if len(keep) == 0 {
			delete(m.idle, k)
		} else {
			m.idle[k] = keep
		}
	}
}

// closeAll closes every cached connection; later puts close theirs.
func (m *migrateCache) closeAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, l := range m.idle {
		for _, mc := range l {
			mc.conn.Close()
		}
	}
	m.idle, m.n = nil, 0
}

// size is the number of idle cached connections.
func (m *migrateCache) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// migrateKeys finds MIGRATE's keys: the key argument, or with the KEYS
// option every argument after it (none when the key argument is not empty,
// which the command then refuses).
func migrateKeys(args [][]byte) []int {
	first, num := 3, 1
	for i := 6; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.EqualFold(string(a), "keys"):
			if len(args[3]) > 0 {
				return nil
			}
			first, num = i+1, len(args)-i-1
			i = len(args)
		case strings.EqualFold(string(a), "auth"):
			i++
		case strings.EqualFold(string(a), "auth2"):
			i += 2
		}
	}
	pos := make([]int, 0, num)
	for i := first; i < first+num && i < len(args); i++ {
		pos = append(pos, i)
	}
	return pos
}

// migrateKey is one key being sent.
type migrateKey struct {
	key []byte
	e   *keyspace.Entry
}

func cmdMigrate(x *Ctx) {
	copyOnly, replace := false, false
	var user, pass []byte
	auth := false
	firstKey, numKeys := 3, 1
	for j := 6; j < len(x.Args); j++ {
		more := len(x.Args) - 1 - j
		opt := string(x.Args[j])
		switch {
		case strings.EqualFold(opt, "copy"):
			copyOnly = true
		case strings.EqualFold(opt, "replace"):
			replace = true
		case strings.EqualFold(opt, "auth"):
			if more < 1 {
				x.W.Error(ErrSyntax)
				return
			}
			j++
			pass, auth = x.Args[j], true
		case strings.EqualFold(opt, "auth2"):
			if more < 2 {
				x.W.Error(ErrSyntax)
				return
			}
			user, pass, auth = x.Args[j+1], x.Args[j+2], true
			j += 2
		case strings.EqualFold(opt, "keys"):
			if len(x.Args[3]) != 0 {
				x.W.Error(errMigrateKeysArg)
				return
			}
			firstKey, numKeys = j+1, len(x.Args)-j-1
			j = len(x.Args)
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	timeoutMs, ok := x.Int(5)
	if !ok {
		return
	}
	db, ok := x.Int(4)
	if !ok {
		return
	}
	if timeoutMs <= 0 {
		timeoutMs = 1000
	}
	timeout := time.Duration(timeoutMs) * time.Millisecond

	var keys []migrateKey
	for j := firstKey; j < firstKey+numKeys; j++ {
		if e := x.Read(x.Args[j]); e != nil {
			keys = append(keys, migrateKey{x.Args[j], e})
		}
	}
	if len(keys) == 0 {
		x.W.Simple("NOKEY")
		return
	}

	host, port := string(x.Args[1]), string(x.Args[2])
	name := host + ":" + port
	cache := &x.S.mig
	restore := "RESTORE"
	if x.S.cl != nil {
		restore = "RESTORE-ASKING"
	}
	mayRetry := true
	for {
		mc, err := cache.get(name, host, port, timeout)
		if err != nil {
			// redis-server connects without blocking and only sees a
			// refused connection when it writes: it retries once, then
			// answers with the write error. Only a connect that times
			// out is reported as such.
			if !isTimeout(err) && mayRetry {
				mayRetry = false
				continue
			}
			if !isTimeout(err) {
				x.W.Error(migrateIOErr(true))
				return
			}
			x.W.Error(errMigrateConnect)
			return
		}
		// Build the pipeline: AUTH, SELECT when the connection's database
		// is not the target one, then a RESTORE per key still alive.
		var buf []byte
		if auth {
			if user != nil {
				buf = appendCommand(buf, []byte("AUTH"), user, pass)
			} else {
				buf = appendCommand(buf, []byte("AUTH"), pass)
			}
		}
		sel := mc.lastDB != db
		if sel {
			buf = appendCommand(buf, []byte("SELECT"), strconv.AppendInt(nil, db, 10))
		}
		now := time.Now().UnixMilli()
		sent := keys[:0:0]
		var payload []byte
		for _, k := range keys {
			var ttl int64
			if at := x.Expire(k.key, k.e); at > 0 {
				ttl = at - now
				if ttl < 0 {
					continue
				}
				if ttl < 1 {
					ttl = 1
				}
			}
			payload = rdb.AppendDump(payload[:0], k.e)
			args := [][]byte{[]byte(restore), k.key, strconv.AppendInt(nil, ttl, 10), payload}
			if replace {
				args = append(args, []byte("REPLACE"))
			}
			buf = appendCommand(buf, args...)
			sent = append(sent, k)
		}

		writeErr := false
		var ioErr error
		for pos := 0; pos < len(buf) && ioErr == nil; {
			end := min(pos+migrateChunk, len(buf))
			mc.conn.SetWriteDeadline(time.Now().Add(timeout))
			var n int
			n, ioErr = mc.conn.Write(buf[pos:end])
			pos += n
		}
		if ioErr != nil {
			writeErr = true
		}
		var authReply, selReply string
		if ioErr == nil && auth {
			authReply, ioErr = mc.readLine(timeout)
		}
		if ioErr == nil && sel {
			selReply, ioErr = mc.readLine(timeout)
		}
		if ioErr != nil {
			// Nothing was processed: close and, once, retry on a new
			// connection (a cached one may have been closed by the peer).
			mc.conn.Close()
			if mayRetry && !isTimeout(ioErr) {
				mayRetry = false
				continue
			}
			x.W.Error(migrateIOErr(writeErr))
			return
		}
		targetErr := false
		socketErr := false
		var j int
		dels := [][]byte{delArg}
		for j = 0; j < len(sent); j++ {
			line, err := mc.readLine(timeout)
			if err != nil {
				socketErr, ioErr = true, err
				break
			}
			if (auth && strings.HasPrefix(authReply, "-")) || (sel && strings.HasPrefix(selReply, "-")) ||
				strings.HasPrefix(line, "-") {
				if !targetErr {
					mc.lastDB = -1
					msg := line
					if auth && strings.HasPrefix(authReply, "-") {
						msg = authReply
					} else if sel && strings.HasPrefix(selReply, "-") {
						msg = selReply
					}
					targetErr = true
					x.W.Error("ERR Target instance replied with error: " + msg[1:])
				}
				continue
			}
			if !copyOnly && x.Del(sent[j].key) {
				dels = append(dels, sent[j].key)
			}
		}
		if len(dels) > 1 {
			// Replicas and the AOF delete what moved; they do not migrate.
			x.Propagate(dels...)
		} else {
			x.NoPropagate()
		}
		if !targetErr && socketErr && j == 0 && mayRetry && !isTimeout(ioErr) {
			mc.conn.Close()
			mayRetry = false
			continue
		}
		if socketErr {
			mc.conn.Close()
			if !targetErr {
				x.W.Error(migrateIOErr(false))
			}
			return
		}
		if !targetErr {
			mc.lastDB = db
			x.W.OK()
		}
		cache.put(name, mc)
		return
	}
}

func migrateIOErr(writing bool) string {
	if writing {
		return "IOERR error or timeout writing to target instance"
	}
	return "IOERR error or timeout reading to target instance"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// readLine reads one reply line without its CRLF.
func (mc *migrateConn) readLine(timeout time.Duration) (string, error) {
	mc.conn.SetReadDeadline(time.Now().Add(timeout))
	line, err := mc.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", errors.New("empty reply line")
	}
	return line, nil
}
