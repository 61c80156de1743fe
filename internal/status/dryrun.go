package status

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/workload"
)

// Stamper returns the stamp the webhook would give obj's pod template now,
// with any warnings it sent. An empty stamp and no error means the webhook
// did not stamp it.
type Stamper interface {
	Stamp(ctx context.Context, obj client.Object) (stamp string, warnings []string, err error)
}

// DryRunStamper asks the live webhook: it creates a copy of the workload
// with a server-side dry run. The webhook computes a fresh stamp on every
// CREATE, and the API server returns the admitted object without storing
// it. This needs only the right to create the workload's kind in its
// namespace, never access to the HMAC key or to any Secret.
//
// The client should come from NewClient, so that the webhook's warnings
// are collected.
type DryRunStamper struct {
	Client client.Client
	// Kinds are the kinds served.
	Kinds workload.Registry
}

// copySuffix marks the name of the dry-run copy.
const copySuffix = "-chstatus"

// maxCopyName keeps the copy's name valid for every kind: CronJob names
// are the shortest allowed, at 52 characters.
const maxCopyName = 52

// Stamp implements Stamper.
func (s DryRunStamper) Stamp(ctx context.Context, obj client.Object) (string, []string, error) {
	ctx, warnings := collectWarnings(ctx)
	cp := dryRunCopy(s.Kinds, obj)
	cp.SetName(copyName(obj.GetName()))
	err := s.Client.Create(ctx, cp, client.DryRunAll)
	if apierrors.IsAlreadyExists(err) {
		// Something really is called that; let the server pick a name.
		cp = dryRunCopy(s.Kinds, obj)
		cp.SetGenerateName(copyBase(obj.GetName(), maxCopyName-len(copySuffix)-len("-")-5) + copySuffix + "-")
		err = s.Client.Create(ctx, cp, client.DryRunAll)
	}
	if err != nil {
		return "", confighashWarnings(warnings.list()), fmt.Errorf("dry-run create of a copy: %w", err)
	}
	t, ok := s.Kinds.PodTemplate(cp)
	if !ok {
		return "", nil, fmt.Errorf("%T has no pod template", cp)
	}
	return t.Checksum(), confighashWarnings(warnings.list()), nil
}

// dryRunCopy returns a copy of obj fit for CREATE: same namespace, labels,
// annotations and pod template, without identity, ownership, status or
// stamp. Removing the stamp is what makes a missing stamp in the answer
// mean that the webhook did not act.
func dryRunCopy(kinds workload.Registry, obj client.Object) client.Object {
	cp := obj.DeepCopyObject().(client.Object)
	cp.SetName("")
	cp.SetGenerateName("")
	cp.SetResourceVersion("")
	cp.SetUID("")
	cp.SetSelfLink("")
	cp.SetGeneration(0)
	cp.SetCreationTimestamp(metav1.Time{})
	cp.SetDeletionTimestamp(nil)
	cp.SetDeletionGracePeriodSeconds(nil)
	cp.SetManagedFields(nil)
	cp.SetOwnerReferences(nil)
	cp.SetFinalizers(nil)
	if k, ok := kinds.For(cp); ok {
		k.ClearStatus(cp)
	}
	if t, ok := kinds.PodTemplate(cp); ok {
		t.SetChecksum("")
	}
	return cp
}

// copyName is name plus copySuffix, shortened to fit every kind.
func copyName(name string) string {
	return copyBase(name, maxCopyName-len(copySuffix)) + copySuffix
}

// copyBase shortens name to at most n characters, ending on an
// alphanumeric as names must.
func copyBase(name string, n int) string {
	if len(name) > n {
		name = strings.TrimRight(name[:n], "-.")
	}
	return name
}

// confighashWarnings keeps the warnings the confighash webhook sent; other
// admission plugins' warnings are not about the stamp.
func confighashWarnings(all []string) []string {
	var out []string
	for _, w := range all {
		if workload.IsWarning(w) {
			out = append(out, w)
		}
	}
	return out
}
