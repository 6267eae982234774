package node

import (
	"errors"
	"strings"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/node/rdb"
)

// DUMP and RESTORE carry one value in redis-server's payload format (the
// RDB encoding of the value, the RDB version and a CRC-64), so that keys
// move between slotd and redis-server in both directions. MIGRATE sends
// the same payloads (cmd_migrate.go).

const (
	errBusyKey      = "BUSYKEY Target key name already exists."
	errBadTTL       = "ERR Invalid TTL value, must be >= 0"
	errBadIdleTime  = "ERR Invalid IDLETIME value, must be >= 0"
	errBadFreq      = "ERR Invalid FREQ value, must be >= 0 and <= 255"
	errDumpPayload  = "ERR DUMP payload version or checksum are wrong"
	errBadDumpValue = "ERR Bad data format"
)

func registerDump(t Table) {
	t.Add(metaCommand("dump", cmdDump))
	t.Add(metaCommand("restore", cmdRestore))
	t.Add(metaCommand("restore-asking", cmdRestore))
	m := metaCommand("migrate", cmdMigrate)
	m.Keys = migrateKeys
	t.Add(m)
}

func cmdDump(x *Ctx) {
	e := x.Read(x.Args[1])
	if e == nil {
		x.W.Null()
		return
	}
	x.W.Bulk(rdb.AppendDump(nil, e))
}

// cmdRestore is RESTORE and RESTORE-ASKING, checking in redis-server's
// order: options, then an existing key (without REPLACE), then the TTL,
// then the payload's footer, then its value.
func cmdRestore(x *Ctx) {
	replace, absTTL := false, false
	var idle, freq int64 = -1, -1
	for j := 4; j < len(x.Args); j++ {
		more := len(x.Args) - j - 1
		opt := x.Args[j]
		switch {
		case strings.EqualFold(string(opt), "replace"):
			replace = true
		case strings.EqualFold(string(opt), "absttl"):
			absTTL = true
		case strings.EqualFold(string(opt), "idletime") && more >= 1 && freq == -1:
			v, ok := x.Int(j + 1)
			if !ok {
				return
			}
			if v < 0 {
				x.W.Error(errBadIdleTime)
				return
			}
			idle = v
			j++
		case strings.EqualFold(string(opt), "freq") && more >= 1 && idle == -1:
			v, ok := x.Int(j + 1)
			if !ok {
				return
			}
			if v < 0 || v > 255 {
				x.W.Error(errBadFreq)
				return
			}
			freq = v
			j++
		default:
			x.W.Error(ErrSyntax)
			return
		}
	}
	key := x.Args[1]
	if !replace && x.Write(key) != nil {
		x.W.Error(errBusyKey)
		return
	}
	ttl, ok := x.Int(2)
	if !ok {
		return
	}
	if ttl < 0 {
		x.W.Error(errBadTTL)
		return
	}
	e, err := rdb.ParseDump(x.Args[3])
	if err != nil {
		if errors.Is(err, rdb.ErrDumpPayload) {
			x.W.Error(errDumpPayload)
		} else {
			x.W.Error(errBadDumpValue)
		}
		return
	}
	deleted := false
	if replace {
		deleted = x.Del(key)
	}
	if ttl > 0 && !absTTL {
		ttl += x.Now
	}
	if ttl > 0 && x.timePassed(ttl) {
		// Already expired: the key is gone (it was deleted above when it
		// existed), and the reply is still OK. Replicas and the AOF get
		// the deletion.
		if deleted {
			x.Propagate(delArg, key)
		} else {
			x.NoPropagate()
		}
		x.W.OK()
		return
	}
	x.PutWithExpire(key, e, ttl)
	x.S.setAccess(e, freq, idle)
	if ttl > 0 && !absTTL {
		// A relative TTL is propagated as the absolute time it came to,
		// with ABSTTL, as redis-server does.
		args := make([][]byte, 0, len(x.Args)+1)
		args = append(args, x.Args...)
		args[2] = FormatInt(ttl)
		x.Propagate(append(args, absttlArg)...)
	}
	x.W.OK()
}

var absttlArg = []byte("ABSTTL")

// setAccess applies RESTORE's FREQ (under an LFU policy) or IDLETIME
// (otherwise) to a new entry; the other option is ignored, as
// redis-server does.
func (s *Server) setAccess(e *keyspace.Entry, freq, idle int64) {
	if s.policy().lfu() {
		if freq >= 0 {
			e.Access = lfuMinutes()<<8 | uint32(freq)
		}
		return
	}
	if idle < 0 {
		return
	}
	clock := int64(s.lruClock())
	abs := clock - idle
	if abs < 0 {
		// The clock wraps: the best is a time half a turn away, so that
		// the key looks idle for long.
		abs = (clock + lruMask/2) % lruMask
	}
	e.Access = uint32(abs)
}
