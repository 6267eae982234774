package gossip

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/slotd/slotd/slots"
)

// Wire constants; doc.go describes the layout.
const (
	// Magic starts every frame.
	Magic = "SLBM"
	// Version is the frame format this package writes and reads.
	Version = 1
	// MaxFrameSize bounds one frame; a larger length field is rejected
	// before anything is buffered.
	MaxFrameSize = 32 << 20
	// MaxEpoch is the largest current or config epoch a frame (or
	// nodes.conf) may carry: the largest CLUSTER SET-CONFIG-EPOCH takes, as
	// redis-server reads it as a signed 64-bit number. A peer that claims
	// more is refused, so no node's epoch can be pushed to where the next
	// election would wrap it around to zero.
	MaxEpoch = 1<<63 - 1

	frameHeaderLen = len(Magic) + 1 + 1 + 4
	slotsRanges    = 0
	slotsRaw       = 1
)

// Codec errors. A frame that fails to parse is dropped and counted by the
// caller; none of them is fatal for the node.
var (
	// ErrShort means b holds less than one whole frame; a stream reader waits for more.
	ErrShort = errors.New("gossip: short frame")
	// ErrMagic means the bytes are not a slotd bus frame.
	ErrMagic = errors.New("gossip: bad magic")
	// ErrVersion means the frame was written by an incompatible format version.
	ErrVersion = errors.New("gossip: unsupported version")
	// ErrTooLarge means the length field exceeds MaxFrameSize.
	ErrTooLarge = errors.New("gossip: frame too large")
	// ErrMalformed means the frame is complete but its content is invalid.
	ErrMalformed = errors.New("gossip: malformed frame")
)

// AppendMessage appends m as one frame to dst. Node ids in m must be valid
// (ValidID) or empty where the format allows "none"; an invalid sender id is
// written as 40 zeros. Times and offsets below zero are written as zero.
func AppendMessage(dst []byte, m Message) []byte {
	start := len(dst)
	dst = append(dst, Magic...)
	dst = append(dst, Version, byte(m.Type()), 0, 0, 0, 0)
	h := m.Hdr()
	dst = appendStr8(dst, h.Cluster)
	dst = appendID(dst, h.Sender)
	dst = binary.AppendUvarint(dst, h.CurrentEpoch)
	dst = binary.AppendUvarint(dst, h.ConfigEpoch)
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Flags&flagsWire))
	if h.Master != "" {
		dst = append(dst, 1)
		dst = appendID(dst, h.Master)
	} else {
		dst = append(dst, 0)
	}
	dst = binary.AppendVarint(dst, h.ReplOffset)
	dst = appendStr8(dst, h.IP)
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Port))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.CPort))
	dst = appendStr8(dst, h.Hostname)
	dst = append(dst, byte(h.State&1), h.MFlags&mflagsAll)
	dst = AppendSlots(dst, &h.Slots)
	switch m := m.(type) {
	case *Ping:
		dst = appendGossip(dst, m.Gossip)
	case *Pong:
		dst = appendGossip(dst, m.Gossip)
	case *Meet:
		dst = appendGossip(dst, m.Gossip)
	case *Fail:
		dst = appendID(dst, m.ID)
	case *Update:
		dst = appendID(dst, m.ID)
		dst = binary.AppendUvarint(dst, m.ConfigEpoch)
		dst = AppendSlots(dst, &m.Slots)
	case *Publish:
		dst = binary.AppendUvarint(dst, uint64(len(m.Channel)))
		dst = append(dst, m.Channel...)
		dst = binary.AppendUvarint(dst, uint64(len(m.Message)))
		dst = append(dst, m.Message...)
	}
	binary.BigEndian.PutUint32(dst[start+len(Magic)+2:], uint32(len(dst)-start))
	return dst
}

// FrameLen reports the length of the frame at the start of b once its fixed
// prefix is there, so a stream reader knows how much to read. It returns
// ErrShort while fewer than 10 bytes are available.
func FrameLen(b []byte) (int, error) {
	if len(b) < frameHeaderLen {
		return 0, ErrShort
	}
	if string(b[:len(Magic)]) != Magic {
		return 0, ErrMagic
	}
	if b[len(Magic)] != Version {
		return 0, ErrVersion
	}
	n := binary.BigEndian.Uint32(b[len(Magic)+2:])
	if n > MaxFrameSize {
		return 0, ErrTooLarge
	}
	if int(n) < frameHeaderLen {
		return 0, fmt.Errorf("%w: length %d", ErrMalformed, n)
	}
	return int(n), nil
}

// ParseMessage reads the frame at the start of b and returns the message and
// the bytes after it. Every encoding has exactly one accepted form, so a
// parsed message appends back to the same bytes.
func ParseMessage(b []byte) (Message, []byte, error) {
	n, err := FrameLen(b)
	if err != nil {
		return nil, b, err
	}
	if len(b) < n {
		return nil, b, ErrShort
	}
	t := Type(b[len(Magic)+1])
	r := reader{b: b[frameHeaderLen:n]}
	var h Header
	h.Cluster = r.str8()
	h.Sender = r.id()
	h.CurrentEpoch = r.epoch()
	h.ConfigEpoch = r.epoch()
	h.Flags = Flags(r.u16())
	if h.Flags&^flagsWire != 0 {
		r.fail("flags")
	}
	switch r.byte1() {
	case 0:
	case 1:
		h.Master = r.id()
	default:
		r.fail("master marker")
	}
	h.ReplOffset = r.varint()
	h.IP = r.str8()
	h.Port = int(r.u16())
	h.CPort = int(r.u16())
	h.Hostname = r.str8()
	st := r.byte1()
	if st > 1 {
		r.fail("state")
	}
	h.State = ClusterStatus(st)
	h.MFlags = r.byte1()
	if h.MFlags&^mflagsAll != 0 {
		r.fail("mflags")
	}
	r.slots(&h.Slots)
	var m Message
	switch t {
	case TypePing:
		m = &Ping{Header: h, Gossip: r.gossip()}
	case TypePong:
		m = &Pong{Header: h, Gossip: r.gossip()}
	case TypeMeet:
		m = &Meet{Header: h, Gossip: r.gossip()}
	case TypeFail:
		m = &Fail{Header: h, ID: r.id()}
	case TypeUpdate:
		u := &Update{Header: h, ID: r.id(), ConfigEpoch: r.epoch()}
		r.slots(&u.Slots)
		m = u
	case TypePublish:
		p := &Publish{Header: h}
		p.Channel = r.bytes()
		p.Message = r.bytes()
		m = p
	case TypeFailoverAuthRequest:
		m = &FailoverAuthRequest{Header: h}
	case TypeFailoverAuthAck:
		m = &FailoverAuthAck{Header: h}
	case TypeMFStart:
		m = &MFStart{Header: h}
	default:
		return nil, b, fmt.Errorf("%w: type %d", ErrMalformed, t)
	}
	if r.err == "" && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	if r.err != "" {
		return nil, b, fmt.Errorf("%w: %s: %s", ErrMalformed, t, r.err)
	}
	return m, b[n:], nil
}

// AppendSlots appends a slot set: a run-length list of ranges, or the raw
// bitmap when that is smaller (only for sets of many scattered slots).
func AppendSlots(dst []byte, bm *slots.Bitmap) []byte {
	if rangesLen(bm) > len(bm) {
		dst = append(dst, slotsRaw)
		return append(dst, bm[:]...)
	}
	dst = append(dst, slotsRanges)
	rs := slotRanges(bm)
	dst = binary.AppendUvarint(dst, uint64(len(rs)))
	prev := -2
	for _, rg := range rs {
		dst = binary.AppendUvarint(dst, uint64(rg.Start-prev-2))
		dst = binary.AppendUvarint(dst, uint64(rg.End-rg.Start))
		prev = rg.End
	}
	return dst
}

// rangesLen is the size of the range form of bm without building it.
func rangesLen(bm *slots.Bitmap) int {
	n, count := 0, 0
	prev := -2
	for s := 0; s < slots.Count; {
		if bm[s>>3] == 0 && s&7 == 0 {
			s += 8
			continue
		}
		if !bm.Has(s) {
			s++
			continue
		}
		e := s
		for e+1 < slots.Count && bm.Has(e+1) {
			e++
		}
		n += uvarintLen(uint64(s-prev-2)) + uvarintLen(uint64(e-s))
		count++
		prev = e
		s = e + 1
	}
	return uvarintLen(uint64(count)) + n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendStr8(dst []byte, s string) []byte {
	if len(s) > 255 {
		s = s[:255]
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

func appendID(dst []byte, id NodeID) []byte {
	var raw [IDLen / 2]byte
	if ValidID(string(id)) {
		hex.Decode(raw[:], []byte(id))
	}
	return append(dst, raw[:]...)
}

func appendGossip(dst []byte, g []GossipEntry) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(g)))
	for i := range g {
		e := &g[i]
		dst = appendID(dst, e.ID)
		dst = binary.AppendUvarint(dst, uint64(max(e.PingSent, 0)))
		dst = binary.AppendUvarint(dst, uint64(max(e.PongReceived, 0)))
		dst = appendStr8(dst, e.IP)
		dst = binary.BigEndian.AppendUint16(dst, uint16(e.Port))
		dst = binary.BigEndian.AppendUint16(dst, uint16(e.CPort))
		dst = binary.BigEndian.AppendUint16(dst, uint16(e.Flags&flagsWire))
	}
	return dst
}

// reader decodes one frame body; the first error sticks and later reads
// return zero values, so the parser checks once at the end.
type reader struct {
	b   []byte
	err string
}

func (r *reader) fail(what string) {
	if r.err == "" {
		r.err = what
	}
	r.b = nil
}

func (r *reader) take(n int) []byte {
	if r.err != "" || n < 0 || len(r.b) < n {
		r.fail("truncated")
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) byte1() byte {
	p := r.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (r *reader) u16() uint16 {
	p := r.take(2)
	if p == nil {
		return 0
	}
	return binary.BigEndian.Uint16(p)
}

func (r *reader) epoch() uint64 {
	v := r.uvarint()
	if v > MaxEpoch {
		r.fail("epoch")
		return 0
	}
	return v
}

func (r *reader) uvarint() uint64 {
	if r.err != "" {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != uvarintLen(v) {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != "" {
		return 0
	}
	v, n := binary.Varint(r.b)
	ux := uint64(v) << 1
	if v < 0 {
		ux = ^ux
	}
	if n <= 0 || n != uvarintLen(ux) {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str8() string {
	n := int(r.byte1())
	return string(r.take(n))
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail("length")
		return nil
	}
	if n == 0 {
		return nil
	}
	return append([]byte(nil), r.take(int(n))...)
}

func (r *reader) id() NodeID {
	p := r.take(IDLen / 2)
	if p == nil {
		return ""
	}
	return NodeID(hex.EncodeToString(p))
}

func (r *reader) slots(bm *slots.Bitmap) {
	switch r.byte1() {
	case slotsRaw:
		p := r.take(len(bm))
		if p == nil {
			return
		}
		copy(bm[:], p)
		if rangesLen(bm) <= len(bm) {
			r.fail("raw slots where ranges are smaller")
		}
	case slotsRanges:
		count := r.uvarint()
		if count > slots.Count/2 {
			r.fail("slot ranges")
			return
		}
		prev := -2
		for i := uint64(0); i < count && r.err == ""; i++ {
			gap := r.uvarint()
			ln := r.uvarint()
			if gap >= slots.Count || ln >= slots.Count {
				r.fail("slot range")
				return
			}
			s := prev + 2 + int(gap)
			e := s + int(ln)
			if e >= slots.Count {
				r.fail("slot range")
				return
			}
			for x := s; x <= e; x++ {
				bm.Set(x)
			}
			prev = e
		}
	default:
		r.fail("slot encoding")
	}
}

func (r *reader) gossip() []GossipEntry {
	count := r.uvarint()
	// An entry takes at least 20+1+1+1+6 bytes; a count beyond what the
	// frame can hold is rejected before allocating.
	if count > uint64(len(r.b)/29) {
		r.fail("gossip count")
		return nil
	}
	if count == 0 {
		return nil
	}
	g := make([]GossipEntry, count)
	for i := range g {
		e := &g[i]
		e.ID = r.id()
		e.PingSent = int64(r.uvarint())
		e.PongReceived = int64(r.uvarint())
		if e.PingSent < 0 || e.PongReceived < 0 {
			r.fail("gossip time")
		}
		e.IP = r.str8()
		e.Port = int(r.u16())
		e.CPort = int(r.u16())
		e.Flags = Flags(r.u16())
		if e.Flags&^flagsWire != 0 {
			r.fail("gossip flags")
		}
	}
	return g
}
