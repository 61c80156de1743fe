package sources

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
)

// isUnconfirmed reports whether err is Lookup's answer for an absence
// that rests on memory only.
func isUnconfirmed(err error) bool {
	var nh *NotHeldError
	return errors.As(err, &nh) && nh.Reason == Unconfirmed
}

// TestLookupNeverStampsARememberedMissOverTheFill forces the interleaving
// behind an extra rollout at create. An admission looks for configmap/app
// before it exists: the webhook remembers the miss (Misses, RecentReads)
// for the TTL. Within it, app is created in a namespace labelled a moment
// ago: this replica's cache holds it as a NotServed placeholder, the fill
// not done. A Deployment reading app is admitted. Were the placeholder read
// "live" from memory, found missing and stamped so, the hook's re-check
// would compute the content once the fill held app's digests, confirm it
// live and re-stamp: a second ReplicaSet with no change. An admission that
// began after the create reads app live (a miss remembered from before it
// began is not taken) and stamps what the hook computes from the fill. So
// does one that began before the create: a GET sent since it began missed
// app, but the cache, read after that GET, holds it, so it reads app once
// more. Without PreferLive a remembered miss is Unconfirmed: no stamp.
// Nothing rolls by itself.
func TestLookupNeverStampsARememberedMissOverTheFill(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	app := hasher.Source{Kind: hasher.ConfigMap, Name: "app"}
	apiserver := fake.NewClientBuilder().Build()
	recent := NewRecentReads(apiserver, DefaultMissTTL, DefaultRecentWeight, clock)
	webhook := Reader{Live: recent, Misses: NewMisses(DefaultMissTTL, 8, clock), Cache: fake.NewClientBuilder().Build()}
	before := preferLiveSince(context.Background(), now)
	if _, found, err := webhook.Lookup(before, "ns")(app); err != nil || found {
		t.Fatalf("before app exists: found %v, %v", found, err)
	}

	// app is created; the cache has its placeholder (the namespace was not
	// served yet when it was cached), the fill has not read it.
	created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", UID: "u1"},
		Data: map[string]string{"k": "v"}}
	if err := apiserver.Create(context.Background(), created.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := apiserver.Get(context.Background(), client.ObjectKeyFromObject(created), created); err != nil {
		t.Fatal(err)
	}
	placeholder, err := Slimmer{Serves: func(string) bool { return false }}.Slim(created.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	fills := NewFills()
	cache := fake.NewClientBuilder().WithObjects(placeholder.(*corev1.ConfigMap)).Build()
	webhook.Cache = fills.Reader(cache)
	now = now.Add(DefaultMissTTL / 2)
	if _, found, err := webhook.Lookup(context.Background(), "ns")(app); !isUnconfirmed(err) {
		t.Fatalf("a remembered miss over the cache's placeholder, without PreferLive: found %v, %v; want Unconfirmed, no stamp", found, err)
	}
	early, found, err := webhook.Lookup(before, "ns")(app)
	if err != nil || !found {
		t.Fatalf("an admission begun before the create: found %v, %v; want app read again, live", found, err)
	}
	began := preferLiveSince(context.Background(), now)
	stamped, found, err := webhook.Lookup(began, "ns")(app)
	if err != nil || !found {
		t.Fatalf("an admission begun after the create: found %v, %v; want app read live", found, err)
	}

	// The fill reads app; the hook computes from the cache.
	if err := fills.Fill(context.Background(), apiserver, Slimmer{}, "ns"); err != nil {
		t.Fatal(err)
	}
	hook := Reader{Cache: fills.Reader(cache)}
	want, found, err := hook.Lookup(context.Background(), "ns")(app)
	if err != nil || !found {
		t.Fatalf("the hook after the fill: found %v, %v", found, err)
	}
	if !sameContent(early, want) {
		t.Fatalf("the admission begun before the create stamped %v; want the hook's content %v", early, want)
	}
	if !sameContent(stamped, want) {
		t.Fatalf("the webhook stamped %v; want the hook's content %v", stamped, want)
	}
}
