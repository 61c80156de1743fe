package sources

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// bulky serves LISTs of a namespace's ConfigMaps (metadata only, as JSON)
// whose every item carries what a tenant can put in metadata: annotations
// of annoBytes (a kubectl last-applied with escapes among them) and
// managedFields naming fieldKeys keys. Items are written one at a time, so
// the server holds none of the page: the heap the test sees is the
// client's.
type bulky struct {
	items, annoBytes, fieldKeys int
	pages                       atomic.Int32
	accept                      atomic.Value // the Accept header of the last LIST
	anno                        string
	fields                      string
}

func newBulky(items, annoBytes, fieldKeys int) *bulky {
	b := &bulky{items: items, annoBytes: annoBytes, fieldKeys: fieldKeys}
	// JSON-escaped quotes and backslashes, so that a reader that does not
	// follow escapes loses its place.
	b.anno = strings.Repeat(`x\"\\`, annoBytes/4)
	var f strings.Builder
	f.WriteString(`{"f:data":{`)
	for i := range fieldKeys {
		if i > 0 {
			f.WriteByte(',')
		}
		fmt.Fprintf(&f, `"f:key-%06d":{}`, i)
	}
	f.WriteString(`},"f:metadata":{"f:annotations":{".":{},"f:a":{}}}}`)
	b.fields = f.String()
	return b
}

// servedVersions is a Versions listing from cfg's apiserver.
func servedVersions(t *testing.T, cfg *rest.Config) *Versions {
	t.Helper()
	pages, err := NewRESTPages(cfg, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	return NewVersions(pages, time.Minute, DefaultRecentWeight, nil)
}

func bulkyName(i int) string { return fmt.Sprintf("cm-%05d", i) }

// pageBytes is about what one page of VersionsPageSize items weighs.
func (b *bulky) pageBytes() int { return VersionsPageSize * (len(b.anno) + len(b.fields)) }

func (b *bulky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/configmaps") {
		http.Error(w, "not served", http.StatusNotFound)
		return
	}
	b.pages.Add(1)
	b.accept.Store(r.Header.Get("Accept"))
	q := r.URL.Query()
	start, _ := strconv.Atoi(q.Get("continue"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	end := b.items
	cont := ""
	if limit > 0 && start+limit < end {
		end = start + limit
		cont = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "application/json")
	b.write(w, start, end, cont)
}

// write writes the page of items start to end, allocating nothing of an
// item's size: the heap the test sees is the reader's.
func (b *bulky) write(w io.Writer, start, end int, cont string) {
	out := bufio.NewWriter(w)
	fmt.Fprintf(out, `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"900","continue":%q},"items":[`, cont)
	for i := start; i < end; i++ {
		if i > start {
			_ = out.WriteByte(',')
		}
		fmt.Fprintf(out, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":%q,"namespace":"ns","uid":"u-%d","resourceVersion":"%d","creationTimestamp":"2026-01-01T00:00:00Z",`, bulkyName(i), i, 100+i)
		_, _ = out.WriteString(`"annotations":{"a":"`)
		_, _ = out.WriteString(b.anno)
		_, _ = out.WriteString(`","kubectl.kubernetes.io/last-applied-configuration":"{\"kind\":\"ConfigMap\"}"},`)
		_, _ = out.WriteString(`"managedFields":[{"manager":"kubectl","operation":"Apply","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":`)
		_, _ = out.WriteString(b.fields)
		_, _ = out.WriteString(`}]}}`)
		if err := out.Flush(); err != nil {
			return // the reader stopped reading
		}
	}
	_, _ = out.WriteString(`]}`)
	out.Flush()
}

// heapPeak runs f and returns the most heap (live and not yet collected)
// the process held above what it held before, sampled every 100 µs.
func heapPeak(f func()) uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak {
				peak = v
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

// versionsHeapBound is what one LIST may hold, whatever its page carries:
// a read buffer and a few names, plus the garbage collector's slack.
const versionsHeapBound = 4 << 20

// bulkyVersions is Versions over a server of two pages of worst-case items
// (see TestVersionsHeapBoundedPerItem); it skips in -short.
func bulkyVersions(t *testing.T) (*bulky, *Versions) {
	t.Helper()
	if testing.Short() {
		t.Skip("serves pages of 150 MiB")
	}
	b := newBulky(2*VersionsPageSize, 256<<10, 2000)
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return b, servedVersions(t, &rest.Config{Host: srv.URL})
}

// TestVersionsHeapBoundedPerItem: one LIST of pages of worst-case items
// (500 to a page, 256 KiB of annotations and 2,000 keys of managedFields
// each: about 150 MiB a page) holds a fixed few MiB at its peak, not a
// page. The first names are still found current.
func TestVersionsHeapBoundedPerItem(t *testing.T) {
	b, v := bulkyVersions(t)
	first := bulkyName(0)
	var current bool
	peak := heapPeak(func() {
		current = v.Current(context.Background(), "ns", configMapSource(first), cachedAt(first, "100"))
	})
	t.Logf("one LIST of pages of %d MiB: heap peak %.1f MiB", b.pageBytes()>>20, float64(peak)/(1<<20))
	if !current {
		t.Errorf("%s, the first item listed, is not current", first)
	}
	if peak > versionsHeapBound {
		t.Errorf("one LIST held %.1f MiB of heap at its peak, want at most %d MiB (a page is %d MiB)", float64(peak)/(1<<20), versionsHeapBound>>20, b.pageBytes()>>20)
	}
}

// TestReadPageHeapBoundedPerItem: a whole page of worst-case items, read
// past any byte budget, holds the reader's buffer and the names, not the
// page; every item is found at its version.
func TestReadPageHeapBoundedPerItem(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a page of 150 MiB")
	}
	b := newBulky(VersionsPageSize, 256<<10, 2000)
	pr, pw := io.Pipe()
	go func() {
		b.write(pw, 0, VersionsPageSize, "next")
		pw.Close()
	}()
	found := map[string]string{}
	var cont string
	var err error
	peak := heapPeak(func() {
		cont, err = readPage(bufio.NewReaderSize(pr, versionsReadBuffer), found)
	})
	t.Logf("one page of %d MiB read whole: heap peak %.1f MiB", b.pageBytes()>>20, float64(peak)/(1<<20))
	if err != nil || cont != "next" {
		t.Fatalf("readPage: continue %q, %v", cont, err)
	}
	if len(found) != VersionsPageSize {
		t.Errorf("%d items found, want %d", len(found), VersionsPageSize)
	}
	for i := range VersionsPageSize {
		if rv := found[bulkyName(i)]; rv != strconv.Itoa(100+i) {
			t.Fatalf("%s found at %q, want %d", bulkyName(i), rv, 100+i)
		}
	}
	if peak > versionsHeapBound {
		t.Errorf("one page held %.1f MiB of heap at its peak, want at most %d MiB", float64(peak)/(1<<20), versionsHeapBound>>20)
	}
}

// TestVersionsListByteBudget: a LIST stops reading past its byte budget;
// the names it read are current, those past it are not (they are read
// with a GET), and no further page is asked for.
func TestVersionsListByteBudget(t *testing.T) {
	b, v := bulkyVersions(t)
	ctx := PreferLive(context.Background())
	first, last := bulkyName(0), bulkyName(VersionsPageSize-1)
	if !v.Current(ctx, "ns", configMapSource(first), cachedAt(first, "100")) {
		t.Errorf("%s, within the budget, is not current", first)
	}
	if v.Current(ctx, "ns", configMapSource(last), cachedAt(last, strconv.Itoa(100+VersionsPageSize-1))) {
		t.Errorf("%s, %d MiB into the LIST, is taken as current", last, b.pageBytes()>>20)
	}
	if n := b.pages.Load(); n != 1 {
		t.Errorf("%d pages asked for, want 1: the budget ran out in the first", n)
	}
}
