package webhook

import "k8s.io/apimachinery/pkg/util/validation"

// namespacePeekBytes is how much of a body reviewNamespace reads. The
// apiserver writes request.namespace ahead of the objects, within the
// first kilobyte; a caller that puts it later, or hides it behind large
// fields, is queued under "" instead, at a bounded cost.
const namespacePeekBytes = 16 << 10

// reviewNamespace is the request.namespace of an AdmissionReview, read
// from the start of its body (the chunks readBody returned) before the
// request waits for a slot, which go round the namespaces; "" when it is
// not found within namespacePeekBytes, ahead of the request's objects, or
// is not a namespace's name. It is a scan, not a decode: it allocates
// only the name (and the peek, when it spans chunks), whatever the body
// holds.
func reviewNamespace(chunks [][]byte) string {
	var b []byte
	if len(chunks) > 0 && (len(chunks) == 1 || len(chunks[0]) >= namespacePeekBytes) {
		b = chunks[0][:min(len(chunks[0]), namespacePeekBytes)]
	} else {
		for _, c := range chunks {
			b = append(b, c[:min(len(c), namespacePeekBytes-len(b))]...)
		}
	}
	s := scan{b: b}
	return s.reviewNamespace()
}

// scan reads JSON from b; a read past the end or a malformed value sets
// bad, after which every read fails.
type scan struct {
	b   []byte
	i   int
	bad bool
}

func (s *scan) reviewNamespace() string {
	if !s.open() {
		return ""
	}
	for key, ok := s.key(); ok; key, ok = s.next() {
		if string(key) != "request" {
			s.value()
			continue
		}
		if !s.open() {
			return ""
		}
		for key, ok := s.key(); ok; key, ok = s.next() {
			switch string(key) {
			case "namespace":
				// Only a namespace's name, so that no caller makes a
				// queue's key long or odd.
				if ns, ok := s.str(); ok && len(ns) <= validation.DNS1123LabelMaxLength {
					if name := string(ns); len(validation.IsDNS1123Label(name)) == 0 {
						return name
					}
				}
				return ""
			case "object", "oldObject":
				return ""
			}
			s.value()
		}
		return ""
	}
	return ""
}

// open reads '{'.
func (s *scan) open() bool { return s.byte() == '{' }

// key reads the first key of an object just opened, and its ':'.
func (s *scan) key() ([]byte, bool) {
	if s.peek() == '}' {
		return nil, false
	}
	return s.member()
}

// next reads the ',' after a member's value and the next key, or fails
// at the object's end.
func (s *scan) next() ([]byte, bool) {
	if s.byte() != ',' {
		return nil, false
	}
	return s.member()
}

func (s *scan) member() ([]byte, bool) {
	k, ok := s.str()
	if !ok || s.byte() != ':' {
		return nil, false
	}
	return k, true
}

// str reads a string without escapes (names and keys need none); one with
// escapes is skipped, and reported not ok.
func (s *scan) str() ([]byte, bool) {
	if s.byte() != '"' {
		return nil, false
	}
	start, plain := s.i, true
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			plain = false
			s.i++
		case '"':
			v := s.b[start:s.i]
			s.i++
			return v, plain
		}
	}
	s.bad = true
	return nil, false
}

// value skips one value, however nested.
func (s *scan) value() {
	depth := 0
	for !s.bad {
		switch c := s.peek(); c {
		case '"':
			s.str()
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			depth--
			s.i++
		case ',', ':':
			if depth == 0 {
				return
			}
			s.i++
		default:
			s.i++ // a number, a literal, or white space
		}
		if depth == 0 && (s.peek() == ',' || s.peek() == '}') {
			return
		}
		if depth < 0 {
			s.bad = true
		}
	}
}

// peek is the next byte that is not white space, not consumed; 0 at the
// end.
func (s *scan) peek() byte {
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	s.bad = true
	return 0
}

// byte reads the next byte that is not white space; 0 at the end.
func (s *scan) byte() byte {
	c := s.peek()
	if !s.bad {
		s.i++
	}
	return c
}
