package node

import "strconv"

// Error texts shared by several command families.
const (
	errInvalidCursor = "ERR invalid cursor"
	errOutOfRange    = "ERR value is out of range"
	errCountPositive = "ERR count should be greater than 0"
)

// parseScanCursor parses a SCAN-family cursor like redis-server: strtoul
// rules (a leading sign is accepted and "-1" wraps), no leading space, no
// trailing garbage, no overflow; an empty string is cursor 0.
func parseScanCursor(b []byte) (uint64, bool) {
	s := string(b)
	if s == "" {
		return 0, true
	}
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
