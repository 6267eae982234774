package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/slotd/slotd/node/keyspace"
)

// File opcodes, the bytes that may stand where a value type is expected.
const (
	opSlotInfo  = 0xf4 // Redis 7.4+: per-slot sizes, a hint
	opFunction2 = 0xf5
	opFunction  = 0xf6 // 7.0 release candidates only
	opModuleAux = 0xf7
	opIdle      = 0xf8
	opFreq      = 0xf9
	opAux       = 0xfa
	opResizeDB  = 0xfb
	opExpireMs  = 0xfc
	opExpireSec = 0xfd
	opSelectDB  = 0xfe
	opEOF       = 0xff
)

// MaxReadVersion is the newest RDB version Reader accepts: 7.2's 11, whose
// only new encodings (set listpacks, a stream revision) are either read or
// refused per key with ErrUnsupported.
const MaxReadVersion = 11

// Errors of whole-file reading.
var (
	// ErrChecksum reports a file whose CRC-64 trailer does not match.
	ErrChecksum = errors.New("rdb: wrong checksum")
	// ErrFunctions reports a file carrying function libraries while the
	// handler has no Function callback.
	ErrFunctions = errors.New("rdb: file contains function libraries, which slotd does not support")
)

// Record is one key of a file, as Reader reports it and Writer writes it.
type Record struct {
	DB  int
	Key []byte
	// Expire is the key's expiry time in unix milliseconds, 0 for none (as
	// in package keyspace). A file's expiry at or before the epoch reads
	// as 1: long past either way. Loading, redis-server drops keys already
	// expired unless it is a replica; the caller decides.
	Expire int64
	// Idle is the LRU idle time in seconds when HasIdle; Freq the LFU
	// counter when HasFreq.
	Idle    int64
	HasIdle bool
	Freq    uint8
	HasFreq bool
	Entry   *keyspace.Entry
}

// Handler receives what Reader finds. Only Key is required.
type Handler struct {
	// Key is called for each key. r and r.Key are reused after it returns;
	// r.Entry is the callee's.
	Key func(r *Record) error
	// Aux is called for each auxiliary field (redis-ver, ctime, repl-id...).
	Aux func(key, value []byte) error
	// ResizeDB gives the key counts announced for the current database.
	ResizeDB func(db int, keys, expires uint64) error
	// Function gets the code of each function library; without it a file
	// with functions fails with ErrFunctions.
	Function func(code []byte) error
	// Raw, when set, is called for each key instead of Key, with the value
	// not decoded: its type and body (which DecodeValue decodes) and the
	// body's offset in the stream. Only the body's framing has been
	// checked. r, r.Key and body are reused after it returns; r.Entry is
	// nil. A collection with no elements is passed on too (DecodeValue
	// then returns ErrEmptyKey).
	Raw func(r *Record, t byte, body []byte, off int64) error
	// ModuleAux is called for module auxiliary data; returning nil skips
	// the data. Without it such a file fails, as in redis-server without
	// the module.
	ModuleAux func(module string) error
}

// Reader reads an RDB file from a stream.
type Reader struct {
	src source
	// Version is the file's RDB version, known once reading began.
	Version int
	// EmptyKeys counts keys skipped because their collection was empty.
	EmptyKeys int
}

// NewReader returns a Reader of r. It reads through its own buffer; r
// need not be buffered.
func NewReader(r io.Reader) *Reader {
	return &Reader{src: source{r: r}}
}

// Parse reads a whole file held in b.
func Parse(b []byte, h Handler) error {
	rd := &Reader{src: source{buf: b}}
	return rd.Run(h)
}

// Run reads the file through its EOF opcode and checksum, calling h.
// Reading stops at the first error, which says at which byte offset.
func (rd *Reader) Run(h Handler) error {
	if err := rd.run(h); err != nil {
		_, off := rd.src.consumed()
		return fmt.Errorf("rdb: at offset %d: %w", off, err)
	}
	return nil
}

func (rd *Reader) run(h Handler) error {
	s := &rd.src
	magic, err := s.take(9)
	if err != nil {
		return err
	}
	if string(magic[:5]) != "REDIS" {
		return corrupt("not an RDB file")
	}
	v, err := strconv.Atoi(string(magic[5:]))
	if err != nil || v < 1 || v > MaxReadVersion {
		return corrupt("can't handle RDB format version %q", magic[5:])
	}
	rd.Version = v
	var rec Record
	var keyBuf []byte
	for {
		t, err := s.byte()
		if err != nil {
			return err
		}
		switch t {
		case opEOF:
			if v < 5 {
				return nil
			}
			sum, _ := s.consumed()
			b, err := s.take(8)
			if err != nil {
				return err
			}
			if want := binary.LittleEndian.Uint64(b); want != 0 && want != sum {
				return ErrChecksum
			}
			return nil
		case opSelectDB:
			db, err := s.length()
			if err != nil {
				return err
			}
			rec.DB = db
		case opResizeDB:
			keys, err := s.length()
			if err != nil {
				return err
			}
			exp, err := s.length()
			if err != nil {
				return err
			}
			if h.ResizeDB != nil {
				if err := h.ResizeDB(rec.DB, uint64(keys), uint64(exp)); err != nil {
					return err
				}
			}
		case opSlotInfo:
			for i := 0; i < 3; i++ {
				if _, err := s.length(); err != nil {
					return err
				}
			}
		case opExpireMs:
			b, err := s.take(8)
			if err != nil {
				return err
			}
			rec.Expire = max(int64(binary.LittleEndian.Uint64(b)), 1)
		case opExpireSec:
			b, err := s.take(4)
			if err != nil {
				return err
			}
			rec.Expire = max(int64(int32(binary.LittleEndian.Uint32(b)))*1000, 1)
		case opIdle:
			idle, err := s.length()
			if err != nil {
				return err
			}
			rec.Idle, rec.HasIdle = int64(idle), true
		case opFreq:
			f, err := s.byte()
			if err != nil {
				return err
			}
			rec.Freq, rec.HasFreq = f, true
		case opAux:
			k, err := s.readString()
			if err != nil {
				return err
			}
			keyBuf = append(keyBuf[:0], k...)
			val, err := s.readString()
			if err != nil {
				return err
			}
			if h.Aux != nil {
				if err := h.Aux(keyBuf, val); err != nil {
					return err
				}
			}
		case opModuleAux:
			if err := rd.moduleAux(h); err != nil {
				return err
			}
		case opFunction2:
			code, err := s.readString()
			if err != nil {
				return err
			}
			if h.Function == nil {
				return ErrFunctions
			}
			if err := h.Function(code); err != nil {
				return err
			}
		case opFunction:
			return fmt.Errorf("%w: pre-release function format", ErrUnsupported)
		default:
			k, err := s.readString()
			if err != nil {
				return err
			}
			keyBuf = append(keyBuf[:0], k...)
			if h.Raw != nil {
				off := s.off + int64(s.pos)
				body, err := s.rawValue(t)
				if err != nil {
					return fmt.Errorf("key %q: %w", keyBuf, err)
				}
				rec.Key = keyBuf
				if err := h.Raw(&rec, t, body, off); err != nil {
					return err
				}
				rec = Record{DB: rec.DB}
				continue
			}
			e, err := s.readValue(t)
			switch {
			case err == ErrEmptyKey:
				rd.EmptyKeys++
			case err != nil:
				return fmt.Errorf("key %q: %w", keyBuf, err)
			default:
				rec.Key, rec.Entry = keyBuf, e
				if err := h.Key(&rec); err != nil {
					return err
				}
			}
			rec = Record{DB: rec.DB}
		}
	}
}

// moduleAux reads past a module's auxiliary data (after the opcode) if the
// handler allows; the data is a typed stream ending in a zero opcode.
func (rd *Reader) moduleAux(h Handler) error {
	s := &rd.src
	id, enc, err := s.readLen()
	if err != nil {
		return err
	}
	if enc {
		return corrupt("bad module id")
	}
	name := moduleName(id)
	if h.ModuleAux == nil {
		return fmt.Errorf("%w: auxiliary data of module %q", ErrUnsupported, name)
	}
	if err := h.ModuleAux(name); err != nil {
		return err
	}
	op, err := s.length()
	if err != nil {
		return err
	}
	if op != modOpUint {
		return corrupt("module %q: bad when opcode", name)
	}
	if _, err := s.length(); err != nil {
		return err
	}
	return s.skipModuleValue()
}

const (
	modOpEOF = iota
	modOpSint
	modOpUint
	modOpFloat
	modOpDouble
	modOpString
)

func (s *source) skipModuleValue() error {
	for {
		op, err := s.length()
		if err != nil {
			return err
		}
		switch op {
		case modOpEOF:
			return nil
		case modOpSint, modOpUint:
			_, err = s.length()
		case modOpFloat:
			_, err = s.take(4)
		case modOpDouble:
			_, err = s.take(8)
		case modOpString:
			_, err = s.readString()
		default:
			return corrupt("bad module opcode %d", op)
		}
		if err != nil {
			return err
		}
	}
}

// moduleName decodes the nine-character type name packed, six bits each,
// into the top 54 bits of a module id.
func moduleName(id uint64) string {
	const set = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var b [9]byte
	for j := range b {
		b[j] = set[id>>(64-6*(j+1))&63]
	}
	return string(b[:])
}

// Options tune a Writer.
type Options struct {
	// NoCompression turns LZF off (rdbcompression no).
	NoCompression bool
	// NoChecksum writes a zero trailer (rdbchecksum no).
	NoChecksum bool
}

// Writer writes an RDB file (version 10) to a stream. Calls after an
// error do nothing and return it.
type Writer struct {
	w    io.Writer
	opt  Options
	buf  []byte
	crc  uint64
	db   int
	err  error
	done bool
}

const writerFlush = 64 << 10

// NewWriter starts a file on w with the header.
func NewWriter(w io.Writer, opt Options) *Writer {
	wr := &Writer{w: w, opt: opt, db: -1, buf: make([]byte, 0, writerFlush+4096)}
	wr.buf = append(wr.buf, "REDIS0010"...)
	return wr
}

func (w *Writer) flush() {
	if w.err != nil || len(w.buf) == 0 {
		return
	}
	if !w.opt.NoChecksum {
		w.crc = CRC64(w.crc, w.buf)
	}
	_, w.err = w.w.Write(w.buf)
	w.buf = w.buf[:0]
}

func (w *Writer) maybeFlush() error {
	if len(w.buf) >= writerFlush {
		w.flush()
	}
	return w.err
}

// Aux writes an auxiliary field.
func (w *Writer) Aux(key, value string) error {
	w.buf = append(w.buf, opAux)
	w.buf = appendString(w.buf, key, false)
	w.buf = appendString(w.buf, value, false)
	return w.maybeFlush()
}

// AuxInt writes an auxiliary field whose value is an integer.
func (w *Writer) AuxInt(key string, v int64) error {
	var nb [20]byte
	return w.Aux(key, string(strconv.AppendInt(nb[:0], v, 10)))
}

// Info is the standard auxiliary fields redis-server 7.0 writes.
type Info struct {
	RedisVer string // e.g. "7.0.15"
	CTime    int64  // unix seconds
	UsedMem  int64
	// Replication fields, written when ReplID is set (a full sync, or a
	// node that has a replication history).
	ReplStreamDB int
	ReplID       string
	ReplOffset   int64
	AOFBase      bool // the file is an AOF base
}

// Header writes the standard auxiliary fields in redis-server's order.
func (w *Writer) Header(in Info) error {
	w.Aux("redis-ver", in.RedisVer)
	w.AuxInt("redis-bits", 64)
	w.AuxInt("ctime", in.CTime)
	w.AuxInt("used-mem", in.UsedMem)
	if in.ReplID != "" {
		w.AuxInt("repl-stream-db", int64(in.ReplStreamDB))
		w.Aux("repl-id", in.ReplID)
		w.AuxInt("repl-offset", in.ReplOffset)
	}
	aof := int64(0)
	if in.AOFBase {
		aof = 1
	}
	return w.AuxInt("aof-base", aof)
}

// Function writes a function library's code.
func (w *Writer) Function(code string) error {
	w.buf = append(w.buf, opFunction2)
	w.buf = appendString(w.buf, code, !w.opt.NoCompression)
	return w.maybeFlush()
}

// SelectDB starts database db and announces its key and expiry counts.
func (w *Writer) SelectDB(db int, keys, expires uint64) error {
	w.buf = append(w.buf, opSelectDB)
	w.buf = appendLen(w.buf, uint64(db))
	w.buf = append(w.buf, opResizeDB)
	w.buf = appendLen(w.buf, keys)
	w.buf = appendLen(w.buf, expires)
	w.db = db
	return w.maybeFlush()
}

// Key writes one key. A record of another database than the current one
// selects it first (without counts).
func (w *Writer) Key(r *Record) error {
	if r.DB != w.db {
		w.buf = append(w.buf, opSelectDB)
		w.buf = appendLen(w.buf, uint64(r.DB))
		w.db = r.DB
	}
	w.buf = AppendRecord(w.buf, r, w.opt)
	return w.maybeFlush()
}

// AppendRecord appends one key's records (expiry, LRU idle time, LFU
// counter, type, name and value) as Key writes them, without selecting its
// database. Snapshots encode keys ahead of writing them this way and hand
// the bytes to Records.
func AppendRecord(dst []byte, r *Record, opt Options) []byte {
	if r.Expire != 0 {
		dst = append(dst, opExpireMs)
		dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Expire))
	}
	if r.HasIdle {
		dst = append(dst, opIdle)
		dst = appendLen(dst, uint64(max(r.Idle, 0)))
	}
	if r.HasFreq {
		dst = append(dst, opFreq, r.Freq)
	}
	c := !opt.NoCompression
	dst = append(dst, valueType(r.Entry))
	dst = appendString(dst, r.Key, c)
	return appendBody(dst, r.Entry, c)
}

// Records writes keys encoded by AppendRecord (with the Options of this
// Writer) into the current database.
func (w *Writer) Records(b []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf)+len(b) > writerFlush {
		w.flush()
		if len(b) >= writerFlush {
			if !w.opt.NoChecksum {
				w.crc = CRC64(w.crc, b)
			}
			if w.err == nil {
				_, w.err = w.w.Write(b)
			}
			return w.err
		}
	}
	w.buf = append(w.buf, b...)
	return w.maybeFlush()
}

// Close ends the file (EOF opcode and checksum) and flushes it. It does not
// close the underlying writer.
func (w *Writer) Close() error {
	if w.done {
		return w.err
	}
	w.done = true
	w.buf = append(w.buf, opEOF)
	w.flush()
	var t [8]byte
	if !w.opt.NoChecksum {
		binary.LittleEndian.PutUint64(t[:], w.crc)
	}
	w.buf = append(w.buf, t[:]...)
	if w.err == nil {
		_, w.err = w.w.Write(w.buf)
	}
	w.buf = w.buf[:0]
	return w.err
}
