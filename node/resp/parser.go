package resp

import (
	"github.com/tidwall/redcon"
)

// Limits redis-server applies to request headers.
const (
	// MaxInlineSize bounds an inline command and a multibulk or bulk header line.
	MaxInlineSize = 64 * 1024
	// MaxMultibulkCount is the largest argument count redis-server accepts.
	MaxMultibulkCount = 1<<31 - 1
	// DefaultMaxBulk is the default proto-max-bulk-len.
	DefaultMaxBulk = 512 * 1024 * 1024
)

// ProtocolError is a malformed request; the connection must be answered
// with "-ERR Protocol error: <Msg>" and closed.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

var (
	errInvalidMultibulk = &ProtocolError{"invalid multibulk length"}
	errInvalidBulk      = &ProtocolError{"invalid bulk length"}
	errBigInline        = &ProtocolError{"too big inline request"}
	errBigCount         = &ProtocolError{"too big mbulk count string"}
	errBigBulkCount     = &ProtocolError{"too big bulk count string"}
	errUnbalanced       = &ProtocolError{"unbalanced quotes in request"}
	errUnauthMultibulk  = &ProtocolError{"unauthenticated multibulk length"}
	errUnauthBulk       = &ProtocolError{"unauthenticated bulk length"}
)

// Limits on requests from clients that have not authenticated yet, as
// redis-server 7.0.15 applies them.
const (
	UnauthMaxMultibulk = 10
	UnauthMaxBulk      = 16384
)

// Parser splits requests out of a buffer. The zero value uses redis-server's
// default limits.
type Parser struct {
	// MaxBulk is proto-max-bulk-len; 0 means DefaultMaxBulk.
	MaxBulk int64
	// Unauthenticated applies the tighter limits for clients that have
	// not authenticated.
	Unauthenticated bool
	args            [][]byte
}

// Next parses one command from the start of b. It returns the arguments
// (nil for an empty command that is to be skipped), the number of bytes
// consumed, and need: when the command is incomplete (n == 0 and err == nil),
// need is a lower bound on the total length b must reach before parsing can
// make progress, so a caller can avoid rescanning a large partial command.
func (p *Parser) Next(b []byte) (args [][]byte, n int, need int, err error) {
	if len(b) == 0 {
		return nil, 0, 1, nil
	}
	if b[0] != '*' {
		return p.inline(b)
	}
	maxBulk := p.MaxBulk
	if maxBulk <= 0 {
		maxBulk = DefaultMaxBulk
	}
	line, i, ok := readLine(b, 1)
	if !ok {
		if len(b) > MaxInlineSize {
			return nil, 0, 0, errBigCount
		}
		return nil, 0, len(b) + 1, nil
	}
	count, ok := parseInt(line)
	if !ok || count > MaxMultibulkCount {
		return nil, 0, 0, errInvalidMultibulk
	}
	if count <= 0 {
		return nil, i, 0, nil
	}
	if p.Unauthenticated && count > UnauthMaxMultibulk {
		return nil, 0, 0, errUnauthMultibulk
	}
	args = p.args[:0]
	for j := int64(0); j < count; j++ {
		if i >= len(b) {
			return nil, 0, i + 1, nil
		}
		if b[i] != '$' {
			return nil, 0, 0, &ProtocolError{"expected '$', got '" + string(b[i]) + "'"}
		}
		line, next, ok := readLine(b, i+1)
		if !ok {
			if len(b)-i > MaxInlineSize {
				return nil, 0, 0, errBigBulkCount
			}
			return nil, 0, len(b) + 1, nil
		}
		size, ok := parseInt(line)
		if !ok || size < 0 || size > maxBulk {
			return nil, 0, 0, errInvalidBulk
		}
		if p.Unauthenticated && size > UnauthMaxBulk {
			return nil, 0, 0, errUnauthBulk
		}
		end := next + int(size)
		if end+2 > len(b) {
			return nil, 0, end + 2, nil
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return nil, 0, 0, errInvalidBulk
		}
		args = append(args, b[next:end:end])
		i = end + 2
	}
	p.args = args
	return args, i, 0, nil
}

func (p *Parser) inline(b []byte) ([][]byte, int, int, error) {
	nl := -1
	for i, c := range b {
		if c == '\n' {
			nl = i
			break
		}
	}
	if nl < 0 {
		if len(b) > MaxInlineSize {
			return nil, 0, 0, errBigInline
		}
		return nil, 0, len(b) + 1, nil
	}
	line := b[:nl+1]
	if b[0] == '$' {
		// redcon reads "$" lines as another protocol; redis-server reads
		// them as inline text, so split such a line here.
		args := splitSpaces(line, p.args[:0])
		p.args = args
		if len(args) == 0 {
			return nil, nl + 1, 0, nil
		}
		return args, nl + 1, 0, nil
	}
	complete, args, _, _, err := redcon.ReadNextCommand(line, p.args[:0])
	if err != nil {
		return nil, 0, 0, errUnbalanced
	}
	if !complete || len(args) == 0 {
		return nil, nl + 1, 0, nil
	}
	p.args = args
	return args, nl + 1, 0, nil
}

// splitSpaces splits an inline line on spaces, without quote handling.
func splitSpaces(line []byte, dst [][]byte) [][]byte {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	start := -1
	for i := 0; i <= len(line); i++ {
		if i == len(line) || line[i] == ' ' || line[i] == '\t' {
			if start >= 0 {
				dst = append(dst, line[start:i:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return dst
}

// readLine finds the header line starting at b[from:]. Like redis-server it
// ends the line at the first '\r' and skips the byte after it; it returns
// the line and the index after the terminator.
func readLine(b []byte, from int) ([]byte, int, bool) {
	for i := from; i < len(b); i++ {
		if b[i] == '\r' {
			if i+1 >= len(b) {
				return nil, 0, false
			}
			return b[from:i], i + 2, true
		}
	}
	return nil, 0, false
}

// parseInt parses a decimal int64 with redis-server's string2ll rules: an
// optional '-', no '+', no leading zeros, no spaces, no overflow.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	if b[0] == '-' {
		neg = true
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (1<<64-1)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
		if v < uint64(c-'0') {
			return 0, false
		}
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// ParseInt parses a request integer with redis-server's string2ll rules.
func ParseInt(b []byte) (int64, bool) { return parseInt(b) }
