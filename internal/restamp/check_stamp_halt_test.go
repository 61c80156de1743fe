package restamp

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// TestHaltFromRecheckLetsTheNextChangeThrough: a lone reader re-stamped by
// a re-check (no change seen live: the webhook's stamp was behind) whose
// rollout then fails halts the content it went to, of every source it
// reads (the re-check cannot tell which changed). The next change of its
// ConfigMap is a new change, the fix: it re-stamps the reader at once, as
// after a halt of an ordinary change; the halt of a source that did not
// change since holds it back no more than a halt of the ConfigMap itself.
func TestHaltFromRecheckLetsTheNextChangeThrough(t *testing.T) {
	for _, alsoSecret := range []bool{false, true} {
		t.Run(map[bool]string{false: "one source", true: "and a Secret"}[alsoSecret], func(t *testing.T) {
			f := newWavesFixture(t, 1)
			ctx := context.Background()
			if alsoSecret {
				f.addSecretReader(t, "d0", "s")
			}
			name := types.NamespacedName{Namespace: "ns", Name: "d0"}
			recheck := Request{KindName: "Deployment", NamespacedName: name, Recheck: true}
			if _, err := f.r.Reconcile(ctx, recheck); err != nil {
				t.Fatal(err)
			}
			stamp := f.get(t, "d0").Spec.Template.Annotations[contract.ChecksumAnnotation]
			if stamp == f.old {
				t.Fatal("the re-check did not re-stamp d0")
			}
			f.setStatus(t, false, true)
			if _, err := f.r.Reconcile(ctx, recheck); err != nil {
				t.Fatal(err)
			}
			if f.get(t, "d0").Annotations[contract.HaltAnnotation] == "" {
				t.Fatal("no halt after the re-check's rollout failed")
			}
			f.setData(t, map[string]string{"k": "v3"})
			live := Request{KindName: "Deployment", NamespacedName: name}
			f.r.changes.add(live, "configmap/app")
			for i := range 2 {
				// The first may lose the optimistic lock to the removal
				// of the obsolete halt; the queue retries it at once.
				if _, err := f.r.Reconcile(ctx, live); err != nil && i > 0 {
					t.Fatal(err)
				}
			}
			if got := f.get(t, "d0").Spec.Template.Annotations[contract.ChecksumAnnotation]; got == stamp {
				t.Fatal("the next change of the ConfigMap did not re-stamp the halted reader")
			}
		})
	}
}

// setData gives configmap/app new data, slimmed as the cache holds it.
func (f *wavesFixture) setData(t *testing.T, data map[string]string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app"}, cm); err != nil {
		t.Fatal(err)
	}
	fresh := &corev1.ConfigMap{ObjectMeta: cm.ObjectMeta, Data: data}
	fresh.Annotations = nil
	if err := f.c.Update(context.Background(), slimmed(t, fresh)); err != nil {
		t.Fatal(err)
	}
}

// addSecretReader makes secret/NAME and has reader read it too.
func (f *wavesFixture) addSecretReader(t *testing.T, reader, name string) {
	t.Helper()
	slim := slimmed(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Data: map[string][]byte{"p": []byte("x")}})
	if err := f.c.Create(context.Background(), slim); err != nil {
		t.Fatal(err)
	}
	d := f.get(t, reader)
	c := &d.Spec.Template.Spec.Containers[0]
	c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}})
	f.put(t, d)
}
