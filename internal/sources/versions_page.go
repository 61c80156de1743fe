package sources

import (
	"bufio"
	"errors"
	"io"
)

const (
	// VersionsListBytes is what one LIST (all its pages) reads at most.
	// Past it the LIST stops, keeping what it read: the names it did not
	// reach are read with a GET. It bounds the LIST's time and traffic;
	// its memory does not grow with it (see readPage).
	VersionsListBytes = 8 << 20
	// versionsReadBuffer is the one buffer a LIST reads through.
	versionsReadBuffer = 32 << 10
	// versionsTextMax bounds a name, resourceVersion or continue token
	// kept: a longer one ends the LIST (none is, from an apiserver).
	versionsTextMax = 4 << 10
)

var errListBudget = errors.New("the LIST's byte budget is spent")

// budget is a reader that fails once it has given left bytes, so that all
// pages of one LIST share VersionsListBytes.
type budget struct {
	r    io.Reader
	left int64
}

func (b *budget) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errListBudget
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// readPage reads one page of a metadata-only LIST (a
// PartialObjectMetadataList as JSON) and adds each item's name and
// resourceVersion to found. It returns the page's continue token. What it
// holds at once is its reader's buffer and one item's name and version,
// whatever the items carry besides; an item is added once its metadata
// has been read whole, so a page cut short (an error, the byte budget)
// leaves found with the items read before the cut, each as the apiserver
// listed it.
func readPage(r *bufio.Reader, found map[string]string) (cont string, err error) {
	s := &skim{r: r}
	err = s.object(func(key string) error {
		switch key {
		case "metadata":
			return s.object(func(key string) error {
				if key != "continue" {
					return s.skip()
				}
				var err error
				cont, err = s.text(versionsTextMax)
				return err
			})
		case "items":
			return s.array(func() error { return readItem(s, found) })
		}
		return s.skip()
	})
	return cont, err
}

func readItem(s *skim, found map[string]string) error {
	return s.object(func(key string) error {
		if key != "metadata" {
			return s.skip()
		}
		var name, rv string
		err := s.object(func(key string) error {
			var err error
			switch key {
			case "name":
				name, err = s.text(versionsTextMax)
			case "resourceVersion":
				rv, err = s.text(versionsTextMax)
			default:
				err = s.skip()
			}
			return err
		})
		if err == nil && name != "" && rv != "" {
			found[name] = rv
		}
		return err
	})
}
