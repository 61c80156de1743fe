package restamp

import (
	"sync"

	"github.com/confighash/confighash/internal/workload"
)

// watched is the set of workload kinds the hook follows. The built-in kinds
// are in it from the start; a custom kind joins once the apiserver serves it
// and its readers index exists (watch_custom.go), so that no lookup asks an
// index that is not there.
type watched struct {
	mu    sync.RWMutex
	kinds []workload.Kind
}

func newWatched(kinds ...workload.Kind) *watched {
	return &watched{kinds: append([]workload.Kind(nil), kinds...)}
}

// list returns the kinds followed now.
func (w *watched) list() []workload.Kind {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return append([]workload.Kind(nil), w.kinds...)
}

// get finds a kind by its Name.
func (w *watched) get(name string) (workload.Kind, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, k := range w.kinds {
		if k.Name() == name {
			return k, true
		}
	}
	return workload.Kind{}, false
}

func (w *watched) add(k workload.Kind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.kinds = append(w.kinds, k)
}
