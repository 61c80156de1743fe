package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/confighash/confighash/internal/serversettings"
	"github.com/confighash/confighash/internal/workload"
)

// Permission is one kind of request `confighash serve` makes to the API
// server: the table the shipped RBAC is checked against in both directions
// (e2e/deploy). Every rule the manifests grant must be needed by an entry
// here, and every entry must be granted. A verb that no code path sends does
// not belong here: that is what keeps the RBAC at least privilege.
type Permission struct {
	Group    string
	Resource string
	Verbs    []string
	// OwnNamespace is true for requests confined to --namespace; false for
	// cluster-scoped resources and requests in any namespace.
	OwnNamespace bool
	// Namespaces confines the requests to these namespaces (--namespaces,
	// namespaced mode: Roles there, not a ClusterRole). Empty with
	// OwnNamespace false means any namespace.
	Namespaces []string
	// Name is the object the requests name: "" when they name none (list,
	// watch, create), AnyName when they name objects not known in advance.
	Name string
	// Why names the code that sends the requests.
	Why string
	// Role is the ClusterRole that grants the requests where a namespace
	// binds it with a RoleBinding (PinnerRole), or "" for confighash's own
	// grants. The pinner's requests are granted that way: a namespace opts
	// in to confighash writing there, and only those namespaces do.
	Role string
}

// PinnerRole is the ClusterRole holding what only the pinner asks (the gets
// of a pod's revision, the snapshots' writes), which each pinning namespace
// binds to confighash's ServiceAccount with a RoleBinding.
const PinnerRole = "confighash-pinner"

// AnyName marks requests that name objects chosen at run time.
const AnyName = "*"

// leaderElectionID is the Lease (and ID) of the leader election.
const leaderElectionID = "confighash.dev"

// Permissions returns what `confighash serve` with o asks of the API server,
// serving kinds, the registry o's --workload-kind resolves to (built-in
// kinds plus those it adds; KindsForArgs gives it for a command line). It
// follows Serve's wiring: what runs depends on the same options.
func Permissions(o Options, kinds workload.Registry) []Permission {
	var ps []Permission
	add := func(p Permission) { ps = append(ps, p) }
	// served adds a request made in the namespaces confighash serves:
	// every namespace, or only --namespaces (the cache's DefaultNamespaces,
	// and the policy answers other namespaces without a read).
	served := func(p Permission) {
		p.Namespaces = slices.Clone(o.Namespaces)
		add(p)
	}

	// sources.Reader: informers on the served namespaces, and one live GET
	// to confirm a cache miss (mgr.GetAPIReader).
	for _, res := range []string{"configmaps", "secrets"} {
		served(Permission{Resource: res, Verbs: []string{"list", "watch"}, Why: "sources: informer of the webhook and the hook"})
		served(Permission{Resource: res, Verbs: []string{"get"}, Name: AnyName, Why: "sources.Reader: live GET confirming a cache miss"})
	}
	// The hook reads Namespaces (opt-in label) and workloads through the
	// cached client: informers only, no live GET. The webhook confirms a
	// Namespace missing from its cache with one live GET. Namespaces are
	// cluster-scoped, so their informer stays cluster-wide in namespaced
	// mode too: names and labels are not what that mode keeps from
	// confighash, and the handler needs the label of every request's
	// namespace without a live GET each time. The live GET names only a
	// listed namespace, since the policy decides the others by name.
	add(Permission{Resource: "namespaces", Verbs: []string{"list", "watch"}, Why: "webhook and hook: cached Namespace (injection policy)"})
	if len(o.Namespaces) == 0 {
		add(Permission{Resource: "namespaces", Verbs: []string{"get"}, Name: AnyName, Why: "webhook: live GET of a Namespace not yet cached"})
	}
	for _, ns := range o.Namespaces {
		add(Permission{Resource: "namespaces", Verbs: []string{"get"}, Name: ns, Why: "webhook: live GET of a listed Namespace not yet cached"})
	}
	for _, k := range kinds.Mutable() {
		served(Permission{Group: k.GVK.Group, Resource: k.Resource, Verbs: []string{"list", "watch"}, Why: "hook: workload informer and readers index"})
		served(Permission{Group: k.GVK.Group, Resource: k.Resource, Verbs: []string{"patch"}, Name: AnyName, Why: "hook: merge patch of the stamp"})
	}
	// internal/health judges each workload the hook re-stamped by its pods:
	// a live LIST in the workload's namespace with its selector, each time
	// the workload's status changes and every few seconds while its rollout
	// runs. No watch (no pod informer: that would cache every pod of the
	// served namespaces) and no get.
	served(Permission{Resource: "pods", Verbs: []string{"list"}, Why: "hook: live LIST of a re-stamped workload's pods (rollout health)"})
	// client-go's tools/events sink creates an event, then patches its series.
	served(Permission{Group: "events.k8s.io", Resource: "events", Verbs: []string{"create"}, Why: "hook: ConfigChanged, SourceMissing, FlapHold events"})
	served(Permission{Group: "events.k8s.io", Resource: "events", Verbs: []string{"patch"}, Name: AnyName, Why: "hook: event series"})
	unstructured := slices.ContainsFunc(kinds.Mutable(), func(k workload.Kind) bool { return k.Unstructured() })
	if unstructured && o.PodName != "" {
		// customWatcher: a custom kind it refuses to watch, on confighash's pod.
		add(Permission{Group: "events.k8s.io", Resource: "events", Verbs: []string{"create"}, OwnNamespace: true, Why: "hook: KindNotWatched events on its own pod"})
		add(Permission{Group: "events.k8s.io", Resource: "events", Verbs: []string{"patch"}, OwnNamespace: true, Name: AnyName, Why: "hook: KindNotWatched event series"})
	}

	if o.LeaderElect {
		// client-go's LeaseLock sends exactly Get, Create and Update
		// (resourcelock/leaselock.go); nothing lists, watches or patches it.
		add(Permission{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"create"}, OwnNamespace: true, Why: "leader election: first lease"})
		add(Permission{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "update"}, OwnNamespace: true, Name: leaderElectionID, Why: "leader election: renew, take over, release"})
		// The LeaseLock's recorder is core/v1 (tools/record), on the Lease.
		add(Permission{Resource: "events", Verbs: []string{"create"}, OwnNamespace: true, Why: "leader election events"})
		add(Permission{Resource: "events", Verbs: []string{"patch"}, OwnNamespace: true, Name: AnyName, Why: "leader election event series"})
	}

	if o.Pinning {
		// pinner.Pinner, live: the pod's revision, the opt-out of a
		// StatefulSet, DaemonSet or CronJob (a metadata GET: their
		// revisions do not follow the workload's annotations), the
		// sources, the snapshots sealed to a stamp (a metadata LIST, then
		// a GET each, under the source reads above), a create per
		// snapshot and a JSON patch to seal or own one; and, for the
		// workload webhook, a LIST of a workload's revisions (is an
		// UPDATE a rollback). What only
		// pinning needs is granted through PinnerRole, per pinning
		// namespace: the revisions it reads and the writes, which the
		// ValidatingAdmissionPolicy of webhook.PinPolicies bounds to
		// snapshots. Delete is snapshotgc's, which removes a snapshot
		// nothing owns or reads.
		pinner := func(p Permission) { p.Role = PinnerRole; served(p) }
		pinner(Permission{Group: "apps", Resource: "replicasets", Verbs: []string{"get"}, Name: AnyName, Why: "pinner: the pod's revision"})
		pinner(Permission{Group: "apps", Resource: "controllerrevisions", Verbs: []string{"get"}, Name: AnyName, Why: "pinner: a StatefulSet's or DaemonSet's pod's revision"})
		pinner(Permission{Group: "batch", Resource: "jobs", Verbs: []string{"get"}, Name: AnyName, Why: "pinner: a Job's pod's revision"})
		pinner(Permission{Group: "apps", Resource: "statefulsets", Verbs: []string{"get"}, Name: AnyName, Why: "pinner: a StatefulSet's, DaemonSet's or CronJob's opt-out"})
		pinner(Permission{Group: "apps", Resource: "daemonsets", Verbs: []string{"get"}, Name: AnyName, Why: "pinner: a StatefulSet's, DaemonSet's or CronJob's opt-out"})
		pinner(Permission{Group: "batch", Resource: "cronjobs", Verbs: []string{"get"}, Name: AnyName, Why: "pinner: a StatefulSet's, DaemonSet's or CronJob's opt-out"})
		pinner(Permission{Group: "apps", Resource: "replicasets", Verbs: []string{"list"}, Why: "pinner: is an UPDATE a rollback to a live revision (workload webhook)"})
		pinner(Permission{Group: "apps", Resource: "controllerrevisions", Verbs: []string{"list"}, Why: "pinner: is an UPDATE a rollback to a live revision (workload webhook)"})
		for _, res := range []string{"configmaps", "secrets"} {
			pinner(Permission{Resource: res, Verbs: []string{"create"}, Why: "pinner: make a snapshot"})
			pinner(Permission{Resource: res, Verbs: []string{"patch"}, Name: AnyName, Why: "pinner: seal a snapshot to a stamp, own it by a revision"})
			pinner(Permission{Resource: res, Verbs: []string{"delete"}, Name: AnyName, Why: "pinner: snapshotgc deletes a snapshot nothing owns or reads"})
			// snapshotgc (leader) also patches (pods as owners) with the
			// grant above; it reads the snapshots by a metadata informer,
			// and one whole by a GET that verifies it before a delete.
			served(Permission{Resource: res, Verbs: []string{"list", "watch"}, Why: "snapshotgc: informer of the snapshots"})
			served(Permission{Resource: res, Verbs: []string{"get"}, Name: AnyName, Why: "snapshotgc: verify a snapshot before deleting it"})
		}
		served(Permission{Resource: "pods", Verbs: []string{"list"}, Why: "snapshotgc: live LIST of a namespace's pods (which read a snapshot)"})
	}

	// hashkey.Ensure: a GET, and a create when the Secret does not exist.
	add(Permission{Resource: "secrets", Verbs: []string{"create"}, OwnNamespace: true, Why: "hashkey.Ensure / certs: create a missing Secret"})
	add(Permission{Resource: "secrets", Verbs: []string{"get"}, OwnNamespace: true, Name: o.HMACKeySecret, Why: "hashkey.Ensure: read the HMAC key"})

	// serversettings.Publisher (leader): server-side apply of the settings
	// status and preview read. An apply that finds no object creates it,
	// and the apiserver then authorizes a create naming it too.
	add(Permission{Resource: "configmaps", Verbs: []string{"create", "patch"}, OwnNamespace: true, Name: serversettings.ConfigMapName, Why: "settings: server-side apply of the settings for status and preview"})

	if o.MetricsSecure && o.MetricsAddr != "0" {
		add(Permission{Group: "authentication.k8s.io", Resource: "tokenreviews", Verbs: []string{"create"}, Why: "metricsauth: who is scraping"})
		add(Permission{Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Verbs: []string{"create"}, Why: "metricsauth: may they GET /metrics"})
	}

	if o.CertMode == CertModeSelf {
		// certs.reconcileSecret: Get, Create, and Update with the read
		// resourceVersion (never a patch); certs.injectCABundle: Get and a
		// strategic merge patch (never an update).
		add(Permission{Resource: "secrets", Verbs: []string{"get", "update"}, OwnNamespace: true, Name: o.CertSecret, Why: "certs: CA and serving certificate"})
		add(Permission{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", Verbs: []string{"get", "patch"}, Name: o.WebhookConfigName, Why: "certs: caBundle injection"})
		if o.CABundleConfigMap != "" {
			// certs.publishCABundle: Get, Create when missing, Update with
			// the read resourceVersion.
			add(Permission{Resource: "configmaps", Verbs: []string{"create"}, OwnNamespace: true, Why: "certs: create the caBundle ConfigMap"})
			add(Permission{Resource: "configmaps", Verbs: []string{"get", "update"}, OwnNamespace: true, Name: o.CABundleConfigMap, Why: "certs: publish the caBundle for metrics scrapers"})
		}
	}
	if o.WebhookURL != "" {
		// Out-of-cluster mode only; the shipped manifests never use it.
		add(Permission{Resource: "namespaces", Verbs: []string{"create"}, Why: "out-of-cluster: ensureNamespace"})
		add(Permission{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", Verbs: []string{"patch"}, Name: o.WebhookConfigName, Why: "out-of-cluster: server-side apply of the configuration"})
		add(Permission{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", Verbs: []string{"create"}, Why: "out-of-cluster: an apply that creates the configuration"})
	}
	return ps
}

// PermissionsForArgs parses a `confighash serve` command line (as a
// Deployment passes it) and returns its Permissions.
func PermissionsForArgs(args []string) ([]Permission, error) {
	o, v, err := optionsForArgs(args)
	if err != nil {
		return nil, err
	}
	return Permissions(o, v.kinds), nil
}

// KindsForArgs parses a `confighash serve` command line and returns the
// kinds it serves, from which its webhook rules follow.
func KindsForArgs(args []string) (workload.Registry, error) {
	_, v, err := optionsForArgs(args)
	if err != nil {
		return nil, err
	}
	return v.kinds, nil
}

func optionsForArgs(args []string) (Options, validated, error) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("confighash serve", pflag.ContinueOnError)
	fs.SetOutput(&strings.Builder{})
	o.bind(fs)
	if err := fs.Parse(args); err != nil {
		return o, validated{}, fmt.Errorf("parsing serve flags: %w", err)
	}
	v, err := o.validate()
	if err != nil {
		return o, validated{}, errors.Join(errors.New("invalid serve flags"), err)
	}
	return o, v, nil
}
