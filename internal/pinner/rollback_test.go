package pinner

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/internal/contract"
)

// TestLiveRevisionAndSealed: a Deployment's template is one of its live
// revisions when a ReplicaSet it controls holds it (the hash label aside);
// the stamp has its snapshots once a pod of it was pinned. A ReplicaSet of
// another owner, another template, or a stamp never pinned, is none.
func TestLiveRevisionAndSealed(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	yes := true
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-web"}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	tmpl := w.stamped()
	tmpl.Labels = map[string]string{"app": "web"}
	rsTmpl := *tmpl.DeepCopy()
	rsTmpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = "abc"
	mk := func(name string, uid types.UID) *appsv1.ReplicaSet {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: rsTmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: uid, Controller: &yes}}},
			Spec: appsv1.ReplicaSetSpec{Template: rsTmpl}}
		if err := w.c.Create(ctx, rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}

	foreign := mk("other-1", "uid-other")
	if ok, err := w.p.LiveRevision(ctx, ns, owner, sel, tmpl, nil); ok || err != nil {
		t.Fatalf("another owner's ReplicaSet counts: %v, %v", ok, err)
	}
	if err := w.c.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	rs := mk("web-1", "uid-web")
	if ok, err := w.p.LiveRevision(ctx, ns, owner, sel, tmpl, nil); !ok || err != nil {
		t.Fatalf("the Deployment's own ReplicaSet does not count: %v, %v", ok, err)
	}
	other := *tmpl.DeepCopy()
	other.Spec.Containers[0].Image = "another"
	if ok, _ := w.p.LiveRevision(ctx, ns, owner, sel, other, nil); ok {
		t.Fatal("another template counts as a live revision")
	}
	if ok, _ := w.p.LiveRevision(ctx, ns, owner, &metav1.LabelSelector{}, tmpl, nil); ok {
		t.Fatal("an empty selector lists the namespace")
	}

	stamp := tmpl.Annotations[contract.ChecksumAnnotation]
	if ok, err := w.p.Sealed(ctx, ns, stamp, tmpl); ok || err != nil {
		t.Fatalf("sealed before any pod was pinned: %v, %v", ok, err)
	}
	if res := w.p.Pin(ctx, w.podOf(rs), false); res.Reason != Pinned {
		t.Fatalf("pin: %+v", res)
	}
	if ok, err := w.p.Sealed(ctx, ns, stamp, tmpl); !ok || err != nil {
		t.Fatalf("not sealed after a pod was pinned: %v, %v", ok, err)
	}
	w.setLevel("debug")
	if ok, _ := w.p.Sealed(ctx, ns, w.stamp(tmpl), tmpl); ok {
		t.Fatal("a stamp never pinned is sealed")
	}
}

// TestLiveRevisionOfAStatefulSet: a StatefulSet's revisions are its
// ControllerRevisions, whose data holds the template.
func TestLiveRevisionOfAStatefulSet(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	tmpl := w.stamped()
	tmpl.Labels = map[string]string{"app": "db"}
	w.controllerRevisionPod("StatefulSet", "db", "7f", tmpl)
	cr := &appsv1.ControllerRevision{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-7f"}, cr); err != nil {
		t.Fatal(err)
	}
	cr.Labels = tmpl.Labels
	if err := w.c.Update(ctx, cr); err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "uid-db"}
	sel := &metav1.LabelSelector{MatchLabels: tmpl.Labels}
	if ok, err := w.p.LiveRevision(ctx, ns, owner, sel, tmpl, nil); !ok || err != nil {
		t.Fatalf("the StatefulSet's ControllerRevision does not count: %v, %v", ok, err)
	}
	other := *tmpl.DeepCopy()
	other.Spec.Containers[0].Image = "another"
	if ok, _ := w.p.LiveRevision(ctx, ns, owner, sel, other, nil); ok {
		t.Fatal("another template counts")
	}
}

// TestUndoCopied: kubectl's undo of a Deployment replaces its annotations
// with its ReplicaSet's, but for those it keeps (the revision, the last
// applied configuration); a sync that kept the Deployment's own is no undo.
func TestUndoCopied(t *testing.T) {
	rs := map[string]string{"deployment.kubernetes.io/revision": "1", contract.RolloutAnnotation: "r1", "team": "a"}
	for _, tc := range []struct {
		d    map[string]string
		want bool
	}{
		{map[string]string{"deployment.kubernetes.io/revision": "3", contract.RolloutAnnotation: "r1", "team": "a"}, true},
		{map[string]string{contract.RolloutAnnotation: "r1", "team": "a", "kubectl.kubernetes.io/last-applied-configuration": "{}"}, true},
		{map[string]string{"deployment.kubernetes.io/revision": "3", contract.RolloutAnnotation: "r2", "team": "a"}, false},
		{map[string]string{contract.RolloutAnnotation: "r1"}, false},
		{map[string]string{contract.RolloutAnnotation: "r1", "team": "a", "more": "x"}, false},
	} {
		if got := undoCopied(rs, tc.d); got != tc.want {
			t.Errorf("undoCopied(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

// TestLiveRevisionIsBounded: a workload with more revisions than the bound
// (a tenant's ReplicaSets under its selector, say) costs at most
// revisionPages LISTs of revisionPageSize, and answers "none" past them.
func TestLiveRevisionIsBounded(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	yes := true
	tmpl := w.stamped()
	tmpl.Labels = map[string]string{"app": "web"}
	for i := range revisionPages*revisionPageSize + 8 {
		other := *tmpl.DeepCopy()
		other.Spec.Containers[0].Image = fmt.Sprintf("img-%d", i)
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("web-%03d", i), Labels: tmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-web", Controller: &yes}}},
			Spec: appsv1.ReplicaSetSpec{Template: other}}
		if err := w.c.Create(ctx, rs); err != nil {
			t.Fatal(err)
		}
	}
	lists := 0
	p := &Pinner{Key: testKey, Client: interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lists++
			o := &client.ListOptions{}
			o.ApplyOptions(opts)
			if o.Limit != revisionPageSize || o.LabelSelector == nil || o.LabelSelector.Empty() {
				t.Errorf("LIST with limit %d, selector %v", o.Limit, o.LabelSelector)
			}
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			// The fake client does not page: a page of the limit, and a
			// token, as the apiserver gives.
			l := list.(*appsv1.ReplicaSetList)
			l.Items = l.Items[:min(len(l.Items), revisionPageSize)]
			l.Continue = "more"
			return nil
		},
	})}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-web"}
	ok, err := p.LiveRevision(ctx, ns, owner, &metav1.LabelSelector{MatchLabels: tmpl.Labels}, tmpl, nil)
	if ok || err != nil {
		t.Fatalf("LiveRevision = %v, %v", ok, err)
	}
	if lists != revisionPages {
		t.Errorf("%d LISTs, want at most %d", lists, revisionPages)
	}
}
