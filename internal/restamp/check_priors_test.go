package restamp

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/workload"
)

// TestSourceEventsRecordContentBefore: what the reconciler compares a
// stamp under another key against is the content from before the first
// change since its last look.
func TestSourceEventsRecordContentBefore(t *testing.T) {
	ctx := quietCtx()
	slim := func(v string) *corev1.ConfigMap {
		return slimCM(t, "ns", "app", map[string]string{"k": v})
	}
	v1, v2, v3 := slim("1"), slim("2"), slim("3")
	web := Request{KindName: "Deployment"}
	web.Namespace, web.Name = "ns", "web"
	app := hasher.Source{Kind: hasher.ConfigMap, Name: "app"}
	h := handlerFor[*corev1.ConfigMap]

	tests := map[string]struct {
		fire      func(e *enqueuer, q *recordingQueue)
		wantFound bool
		want      string // the data value before, "" for none recorded
	}{
		"updated": {
			fire: func(e *enqueuer, q *recordingQueue) {
				h(e, hasher.ConfigMap).Update(ctx, event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: v1, ObjectNew: v2}, q)
			},
			wantFound: true, want: "1",
		},
		"updated twice in the window: the first before wins": {
			fire: func(e *enqueuer, q *recordingQueue) {
				h(e, hasher.ConfigMap).Update(ctx, event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: v1, ObjectNew: v2}, q)
				h(e, hasher.ConfigMap).Update(ctx, event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: v2, ObjectNew: v3}, q)
			},
			wantFound: true, want: "1",
		},
		"created: absent before": {
			fire: func(e *enqueuer, q *recordingQueue) {
				h(e, hasher.ConfigMap).Create(ctx, event.TypedCreateEvent[*corev1.ConfigMap]{Object: v1}, q)
			},
		},
		"deleted: present before": {
			fire: func(e *enqueuer, q *recordingQueue) {
				h(e, hasher.ConfigMap).Delete(ctx, event.TypedDeleteEvent[*corev1.ConfigMap]{Object: v3}, q)
			},
			wantFound: true, want: "3",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := &enqueuer{cache: readers(t, nil), kinds: newWatched(workload.Kinds().Mutable()...), changes: newChanges()}
			tc.fire(e, &recordingQueue{})
			p, ok := e.changes.take(web).before[app]
			if !ok || !p.known {
				t.Fatalf("prior = %+v, %v; want one recorded and known", p, ok)
			}
			if p.found != tc.wantFound {
				t.Errorf("found = %v, want %v", p.found, tc.wantFound)
			}
			if tc.wantFound && p.content.Data["k"] != hasher.DigestOf([]byte(tc.want)) {
				t.Errorf("content before is not the data %q", tc.want)
			}
			if left := e.changes.take(web).before; len(left) > 0 {
				t.Errorf("take left %v", left)
			}
		})
	}

	t.Run("the start-up replay records nothing", func(t *testing.T) {
		e := &enqueuer{cache: readers(t, nil), kinds: newWatched(workload.Kinds().Mutable()...), changes: newChanges()}
		h(e, hasher.ConfigMap).Create(ctx, event.TypedCreateEvent[*corev1.ConfigMap]{Object: v1, IsInInitialList: true}, &recordingQueue{})
		if got := e.changes.take(Request{KindName: "Deployment", NamespacedName: web.NamespacedName, Recheck: true}).before; len(got) > 0 {
			t.Errorf("priors after a replay = %v", got)
		}
	})
}
