package pinner

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
)

// Reason says why a pod was not pinned; Pinned when it was.
type Reason string

// The reasons, as the pod's pinning annotation and the logs show them.
const (
	Pinned Reason = ""
	// NotStamped: the pod carries no current-format stamp.
	NotStamped Reason = "not-stamped"
	// NoRevision: no controller whose kind pinning knows (a ReplicaSet),
	// or one whose template does not carry the pod's stamp.
	NoRevision Reason = "no-revision"
	// OptedOut: the workload or its pod template carries
	// pinning.PinAnnotation=off.
	OptedOut Reason = "opted-out"
	// NothingToPin: every source the stamp covers is read live (typed
	// Secrets, ignored, opted out or missing sources).
	NothingToPin Reason = "nothing-to-pin"
	// ContentMovedOn: no sealed set, and the live content no longer gives
	// the stamp, so what the stamp names is not known any more.
	ContentMovedOn Reason = "content-moved-on"
	// LookAlike: an object under a snapshot's name that confighash did
	// not make (or with other content).
	LookAlike Reason = "look-alike"
	// TooManyStamps: a snapshot already serves pinning.MaxStamps stamps.
	TooManyStamps Reason = "too-many-stamps"
	// DryRun: a dry run writes no snapshot.
	DryRun Reason = "dry-run"
	// WriteFailed: a snapshot could not be written.
	WriteFailed Reason = "write-failed"
	// QuotaExceeded: a ResourceQuota (count/configmaps, count/secrets)
	// refused a snapshot's create.
	QuotaExceeded Reason = "quota-exceeded"
	// ReadFailed: the revision, a source or the snapshots could not be read.
	ReadFailed Reason = "read-failed"
	// NotCovered: the pod reads more of a pinned source than its template
	// does (a container another webhook added), which the snapshot lacks.
	NotCovered Reason = "not-covered"
	// Forbidden: a read or a write was refused: the namespace does not bind
	// the ClusterRole confighash-pinner, or the admission policy refused
	// the write.
	Forbidden Reason = "forbidden"
)

// Reasons lists every Reason, Pinned first, for metrics that show each
// from the start.
func Reasons() []Reason {
	return []Reason{Pinned, NotStamped, NoRevision, OptedOut, NothingToPin, ContentMovedOn, LookAlike,
		TooManyStamps, DryRun, WriteFailed, QuotaExceeded, ReadFailed, NotCovered, Forbidden}
}

// Result is what Pin decided for one pod.
type Result struct {
	// Reason is Pinned or why not.
	Reason Reason
	// Detail adds to Reason for the log, never content: a source's name,
	// an API error.
	Detail string
	// Snapshots maps each pinned source to its snapshot's name; nil
	// unless pinned.
	Snapshots map[hasher.Source]string
	// Held is what each snapshot was made from: the revision template's
	// read of that source, for pinning.Covers.
	Held map[hasher.Source]hasher.Reference
	// Writes counts the creates and patches made.
	Writes int
	// Workload is the controller of the pod's revision (a ReplicaSet's
	// Deployment), when the revision was read and has one.
	Workload *metav1.OwnerReference
}

func notPinned(r Reason, detail string) Result {
	return Result{Reason: r, Detail: detail}
}

// failed is r, a read or write failure caused by err, or Forbidden when the
// apiserver refused it: an operator fixes that with a RoleBinding, not by
// looking at the apiserver's health. A ResourceQuota refuses with a 403 too,
// fixed by raising the quota: QuotaExceeded.
func failed(r Reason, err error) Reason {
	switch {
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), quotaRefusal):
		return QuotaExceeded
	case apierrors.IsForbidden(err):
		return Forbidden
	}
	return r
}

// quotaRefusal is in the message of every refusal of the ResourceQuota
// admission plugin for a quota used up; the Status carries no other mark.
const quotaRefusal = "exceeded quota"
