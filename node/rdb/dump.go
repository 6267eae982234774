package rdb

import (
	"encoding/binary"
	"errors"

	"github.com/slotd/slotd/node/keyspace"
)

// Version is the RDB format version slotd writes: redis-server 7.0's.
const Version = 10

// ErrDumpPayload is the error RESTORE replies with for a payload whose
// footer is missing, names a newer RDB version or fails the checksum; the
// text is redis-server's.
var ErrDumpPayload = errors.New("ERR DUMP payload version or checksum are wrong")

// ErrBadDataFormat is RESTORE's reply when the footer is good but the value
// does not decode; the text is redis-server's.
var ErrBadDataFormat = errors.New("ERR Bad data format")

// AppendDump appends the DUMP payload of e: the RDB object, the RDB
// version (2 bytes, little-endian) and the CRC-64 of all that (8 bytes,
// little-endian).
func AppendDump(dst []byte, e *keyspace.Entry) []byte {
	return appendDump(dst, e, true)
}

func appendDump(dst []byte, e *keyspace.Entry, compress bool) []byte {
	start := len(dst)
	dst = appendValue(dst, e, compress)
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, CRC64(0, dst[start:]))
}

// CheckDump verifies a DUMP payload's footer as redis-server does (at
// least 10 bytes, version at most 10, CRC-64 matching; rdbchecksum does not
// apply to DUMP) and returns the RDB object inside it.
func CheckDump(b []byte) ([]byte, error) {
	if len(b) < 10 {
		return nil, ErrDumpPayload
	}
	footer := b[len(b)-10:]
	if binary.LittleEndian.Uint16(footer) > Version {
		return nil, ErrDumpPayload
	}
	if CRC64(0, b[:len(b)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, ErrDumpPayload
	}
	return b[:len(b)-10], nil
}

// ParseDump decodes a DUMP payload: ErrDumpPayload for a bad footer,
// ErrBadDataFormat for a value that does not decode, including an empty
// collection. Bytes after the value are ignored, as redis-server does.
func ParseDump(b []byte) (*keyspace.Entry, error) {
	obj, err := CheckDump(b)
	if err != nil {
		return nil, err
	}
	e, _, err := ParseValue(obj)
	if err != nil {
		return nil, ErrBadDataFormat
	}
	return e, nil
}
