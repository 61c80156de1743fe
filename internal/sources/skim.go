package sources

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// skim reads the JSON of a stream for a few short strings in it, holding
// only its read buffer: every value it is not asked for is read past,
// never stored, whatever its size (a tenant's 256 KiB annotation, a
// managedFields entry naming every key). It trusts the stream to be JSON,
// as the apiserver writes it, and fails on what it does not expect.
type skim struct {
	r *bufio.Reader
}

// skimKeyMax is the longest object key skim compares: the fields it looks
// for are short; a longer key is read past and matches none.
const skimKeyMax = 64

var errTextTooLong = errors.New("a string longer than asked for")

// next returns the next byte that is not whitespace, consumed.
func (s *skim) next() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c, nil
	}
}

// peek returns the next byte that is not whitespace, not consumed.
func (s *skim) peek() (byte, error) {
	c, err := s.next()
	if err != nil {
		return 0, err
	}
	return c, s.r.UnreadByte()
}

func (s *skim) expect(want byte) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return fmt.Errorf("JSON: %q where %q was expected", c, want)
	}
	return nil
}

// object reads an object (or null), calling member with each key, which
// must read the key's value (skip, if it is not wanted).
func (s *skim) object(member func(key string) error) error {
	return s.container('{', '}', func() error {
		if err := s.expect('"'); err != nil {
			return err
		}
		key, fits, err := s.rest(skimKeyMax)
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if !fits {
			return s.skip()
		}
		return member(key)
	})
}

// array reads an array (or null), calling elem for each element, which
// must read it.
func (s *skim) array(elem func() error) error {
	return s.container('[', ']', elem)
}

func (s *skim) container(open, closing byte, each func() error) error {
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == 'n' {
		return s.skip()
	}
	if err := s.expect(open); err != nil {
		return err
	}
	if c, err := s.peek(); err != nil || c == closing {
		_, _ = s.next()
		return err
	}
	for {
		if err := each(); err != nil {
			return err
		}
		c, err := s.next()
		switch {
		case err != nil:
			return err
		case c == closing:
			return nil
		case c != ',':
			return fmt.Errorf("JSON: %q after a member", c)
		}
	}
}

// text reads a string value of at most max bytes as written (escapes
// included), failing on a longer one.
func (s *skim) text(max int) (string, error) {
	if err := s.expect('"'); err != nil {
		return "", err
	}
	t, fits, err := s.rest(max)
	if err == nil && !fits {
		err = errTextTooLong
	}
	return t, err
}

// rest reads the rest of a string whose opening quote is read. It keeps at
// most max bytes of it; fits is false if the string was longer (it is then
// read to its end, but not returned).
func (s *skim) rest(max int) (text string, fits bool, err error) {
	var kept []byte
	fits = true
	escaped := false
	run := 0 // backslashes just before what is read next
	for {
		chunk, err := s.r.ReadSlice('"')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return "", false, unexpectedEOF(err)
		}
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		if fits && len(kept)+len(chunk) <= max+1 {
			kept = append(kept, chunk...)
		} else {
			fits, kept = false, nil
		}
		run = backslashesAfter(run, body)
		escaped = escaped || bytes.IndexByte(body, '\\') >= 0
		if err != nil {
			continue // no quote yet; the run goes on into the next chunk
		}
		if run%2 == 1 {
			run = 0 // an escaped quote, which ends the run
			continue
		}
		if !fits {
			return "", false, nil
		}
		kept = kept[:len(kept)-1] // the closing quote
		if !escaped {
			return string(kept), true, nil
		}
		var out string
		q := make([]byte, 0, len(kept)+2)
		q = append(append(append(q, '"'), kept...), '"')
		if err := json.Unmarshal(q, &out); err != nil {
			return "", false, fmt.Errorf("JSON string: %w", err)
		}
		return out, true, nil
	}
}

// backslashesAfter is the number of backslashes that end what was read,
// run before b, then b.
func backslashesAfter(run int, b []byte) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	if n == len(b) {
		return run + n
	}
	return n
}

// skip reads past one value of any kind.
func (s *skim) skip() error {
	c, err := s.next()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		_, _, err := s.rest(0)
		return err
	case '{', '[':
		return s.skipContainer()
	}
	// A number, true, false or null: up to the next delimiter.
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			return unexpectedEOF(err)
		}
		switch c {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return s.r.UnreadByte()
		}
	}
}

// skipContainer reads past an object or array whose opening is read.
func (s *skim) skipContainer() error {
	for depth := 1; depth > 0; {
		c, err := s.r.ReadByte()
		if err != nil {
			return unexpectedEOF(err)
		}
		switch c {
		case '"':
			if _, _, err := s.rest(0); err != nil {
				return err
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
	return nil
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
