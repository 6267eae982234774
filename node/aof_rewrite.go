package node

import (
	"bufio"
	"io"
	"strconv"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/rdb"
)

// aofItemsPerCmd is how many elements one command of a command-form base
// carries, as in redis-server's rewrite.
const aofItemsPerCmd = 64

// writeCommandSnapshot writes the keyspace as commands (the base file when
// aof-use-rdb-preamble is no): a point-in-time snapshot, read back as it
// is produced and turned into SELECT, SET, RPUSH, SADD, ZADD, HMSET and
// PEXPIREAT commands. atStart is writeSnapshot's.
func (s *Server) writeCommandSnapshot(w io.Writer, atStart func()) error {
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := s.writeSnapshot(pw, atStart)
		pw.CloseWithError(err)
		errc <- err
	}()
	bw := bufio.NewWriterSize(w, 64<<10)
	db := -1
	var buf []byte
	err := rdb.NewReader(pr).Run(rdb.Handler{Key: func(r *rdb.Record) error {
		buf = buf[:0]
		if r.DB != db {
			buf = appendSelect(buf, r.DB)
			db = r.DB
		}
		buf = appendEntryCommands(buf, r.Key, r.Entry)
		if r.Expire != 0 {
			buf = appendCommand(buf, pexpireatArg, r.Key, FormatInt(r.Expire))
		}
		_, err := bw.Write(buf)
		return err
	}})
	pr.CloseWithError(err)
	if werr := <-errc; err == nil {
		err = werr
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// appendEntryCommands appends the commands that rebuild e under key.
func appendEntryCommands(b, key []byte, e *keyspace.Entry) []byte {
	var args [][]byte
	batch := func(cmd []byte) {
		args = append(args[:0], cmd, key)
	}
	flush := func() {
		if len(args) > 2 {
			b = appendCommand(b, args...)
			args = args[:2]
		}
	}
	switch e.Kind {
	case keyspace.KindString:
		b = appendCommand(b, setArg, key, e.Bytes())
	case keyspace.KindList:
		l := e.Obj().(*keyspace.List)
		batch([]byte("RPUSH"))
		l.Range(0, l.Len()-1, func(v string) {
			args = append(args, []byte(v))
			if len(args) == 2+aofItemsPerCmd {
				flush()
			}
		})
		flush()
	case keyspace.KindSet:
		batch([]byte("SADD"))
		e.Obj().(*keyspace.Set).Each(func(m []byte) bool {
			args = append(args, append([]byte(nil), m...))
			if len(args) == 2+aofItemsPerCmd {
				flush()
			}
			return true
		})
		flush()
	case keyspace.KindHash:
		batch([]byte("HMSET"))
		e.Obj().(*keyspace.Hash).Each(func(f, v string) bool {
			args = append(args, []byte(f), []byte(v))
			if len(args) >= 2+2*aofItemsPerCmd {
				flush()
			}
			return true
		})
		flush()
	case keyspace.KindZSet:
		batch([]byte("ZADD"))
		for n := e.Obj().(*keyspace.ZSet).First(); n != nil; n = n.Next() {
			args = append(args, formatScore(n.Score), []byte(n.Member))
			if len(args) >= 2+2*aofItemsPerCmd {
				flush()
			}
		}
		flush()
	}
	return b
}

// formatScore writes a score so that parsing it back gives the same
// float64 ("%.17g" in redis-server's rewrite).
func formatScore(f float64) []byte {
	switch {
	case f > 1.7976931348623157e308:
		return []byte("inf")
	case f < -1.7976931348623157e308:
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, f, 'g', 17, 64)
}
