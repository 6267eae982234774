package glob

// Match reports whether s matches the glob pattern with the rules of
// redis-server's stringmatchlen:
// '*' any run, '?' any byte, '[...]' a class with '^' negation, 'a-z'
// ranges (ends in either order) and '\' escapes, an unterminated class
// running to the end of the pattern, and '\' quoting the next byte. With
// nocase letters compare case-insensitively.
func Match[T string | []byte](pattern, s T, nocase bool) bool {
	skip := false
	return match(pattern, s, nocase, &skip)
}

// match is the matcher proper. skip is set once a '*' has tried every
// suffix of the string without success: then no longer match can succeed
// either, and every outer '*' gives up at once, which keeps patterns with
// many stars from taking exponential time.
func match[T string | []byte](p, s T, nocase bool, skip *bool) bool {
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if match(p[1:], s, nocase, skip) {
					return true
				}
				if *skip {
					return false
				}
				s = s[1:]
			}
			*skip = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			in := false
			c := s[0]
			for {
				if len(p) >= 2 && p[0] == '\\' {
					p = p[1:]
					if p[0] == c {
						in = true
					}
				} else if len(p) > 0 && p[0] == ']' {
					break
				} else if len(p) == 0 {
					// Unterminated class: it ends with the pattern. Step
					// back so that the common advance below lands at the end.
					p = p[:0]
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					cc := c
					if nocase {
						lo, hi, cc = lower(lo), lower(hi), lower(c)
					}
					p = p[2:]
					if lo <= cc && cc <= hi {
						in = true
					}
				} else if p[0] == c || (nocase && lower(p[0]) == lower(c)) {
					in = true
				}
				p = p[1:]
			}
			if not {
				in = !in
			}
			if !in {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] && (!nocase || lower(p[0]) != lower(s[0])) {
				return false
			}
			s = s[1:]
		}
		if len(p) > 0 {
			p = p[1:]
		}
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
