package node

import (
	"crypto/sha1"
	"encoding/binary"
	"math"
	"strconv"
	"unsafe"

	"github.com/slotd/slotd/node/keyspace"
	"github.com/slotd/slotd/slots"
)

// DEBUG DIGEST and DIGEST-VALUE give the same hex as redis-server for the
// same data, so that tests can compare a slotd node with a redis-server
// holding the same keys. The scheme:
//
//   - xor(d, data): d ^= SHA1(data); order-free, for unordered elements;
//   - mix(d, data): d = SHA1(d ^ SHA1(data)); order-dependent;
//   - a value's digest starts from its key's: mix(type as a big-endian
//     uint32), then strings mix their bytes, lists mix each element in
//     order, sets xor each member, hashes and sorted sets xor, per pair, a
//     fresh digest of mix(field or member) then mix(value or score as
//     printf's %.17g); a key with a TTL finally xors "!!expire!!";
//   - the dataset digest, per non-empty database in order, mixes the
//     database number (big-endian uint32) and xors in every key's digest
//     (mix(key name) continued with its value's).

func xorDigest(d *[20]byte, data []byte) {
	h := sha1.Sum(data)
	for i := range d {
		d[i] ^= h[i]
	}
}

func mixDigest(d *[20]byte, data []byte) {
	xorDigest(d, data)
	*d = sha1.Sum(d[:])
}

func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// digestTypes are redis-server's object type numbers.
var digestTypes = [...]uint32{
	keyspace.KindString: 0, keyspace.KindList: 1, keyspace.KindSet: 2, keyspace.KindZSet: 3, keyspace.KindHash: 4,
}

// formatG17 prints f as C's printf("%.17g") does.
func formatG17(buf []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(buf, "inf"...)
	case math.IsInf(f, -1):
		return append(buf, "-inf"...)
	case math.IsNaN(f):
		return append(buf, "nan"...)
	}
	return strconv.AppendFloat(buf, f, 'g', 17, 64)
}

// valueDigest continues d (the key's digest, or zeros for DIGEST-VALUE)
// with the value of e; ttl says whether the key has an expiry.
func valueDigest(d *[20]byte, e *keyspace.Entry, ttl bool) {
	var t [4]byte
	binary.BigEndian.PutUint32(t[:], digestTypes[e.Kind])
	mixDigest(d, t[:])
	switch e.Kind {
	case keyspace.KindString:
		mixDigest(d, e.Bytes())
	case keyspace.KindList:
		l := e.Obj().(*keyspace.List)
		if l.Len() > 0 {
			l.Range(0, l.Len()-1, func(s string) { mixDigest(d, strBytes(s)) })
		}
	case keyspace.KindSet:
		e.Obj().(*keyspace.Set).Each(func(m []byte) bool {
			xorDigest(d, m)
			return true
		})
	case keyspace.KindHash:
		e.Obj().(*keyspace.Hash).Each(func(f, v string) bool {
			var ed [20]byte
			mixDigest(&ed, strBytes(f))
			mixDigest(&ed, strBytes(v))
			xorDigest(d, ed[:])
			return true
		})
	case keyspace.KindZSet:
		var buf [32]byte
		for n := e.Obj().(*keyspace.ZSet).First(); n != nil; n = n.Next() {
			var ed [20]byte
			mixDigest(&ed, strBytes(n.Member))
			mixDigest(&ed, formatG17(buf[:0], n.Score))
			xorDigest(d, ed[:])
		}
	}
	if ttl {
		xorDigest(d, []byte("!!expire!!"))
	}
}

// keyDigest is one key's share of DEBUG DIGEST.
func keyDigest(key []byte, e *keyspace.Entry) [20]byte {
	var d [20]byte
	mixDigest(&d, key)
	valueDigest(&d, e, e.HasTTL())
	return d
}

// digest is DEBUG DIGEST over every database (forty zeros when all are
// empty). The caller holds every slot lock.
func (s *Server) digest() [20]byte {
	var final [20]byte
	for i := 0; i < s.ks.NumDBs(); i++ {
		db := s.ks.DB(i)
		if db.Len() == 0 {
			continue
		}
		var id [4]byte
		binary.BigEndian.PutUint32(id[:], uint32(i))
		mixDigest(&final, id[:])
		for slot := 0; slot < slots.Count; slot++ {
			db.ForEachInSlot(slot, func(k string, e *keyspace.Entry) bool {
				kd := keyDigest(strBytes(k), e)
				xorDigest(&final, kd[:])
				return true
			})
		}
	}
	return final
}
