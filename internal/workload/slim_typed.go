package workload

import (
	"maps"
	"slices"
	"strconv"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// slimTyped builds the slimmed copy of a built-in mutable kind's object:
// meta, the template tmpl (a typed object always has one), and of its spec
// and status what internal/health and kstatus read (replicas, selector,
// strategy, pause, progress deadline; the replica counts, revisions,
// observed generation and conditions). A CronJob keeps its template only:
// its rollout is never waited for. With inPlace the copy is written over
// obj (see slimInPlace).
func slimTyped(obj client.Object, meta metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec, inPlace bool) (client.Object, bool) {
	if tmpl == nil {
		tmpl = &corev1.PodTemplateSpec{}
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		st := o.Status
		st.Conditions = slimConditions(st.Conditions, func(c appsv1.DeploymentCondition) appsv1.DeploymentCondition {
			return appsv1.DeploymentCondition{Type: appsv1.DeploymentConditionType(short(string(c.Type))),
				Status: corev1.ConditionStatus(short(string(c.Status))), Reason: short(c.Reason)}
		}, func(c appsv1.DeploymentCondition) [3]string {
			return [3]string{string(c.Type), string(c.Status), c.Reason}
		}, &deploymentConditions)
		return into(o, appsv1.Deployment{TypeMeta: o.TypeMeta, ObjectMeta: meta, Status: st, Spec: appsv1.DeploymentSpec{
			Replicas: keepPtr(o.Spec.Replicas), Selector: slimSelector(o.Spec.Selector), Paused: o.Spec.Paused,
			ProgressDeadlineSeconds: keepPtr(o.Spec.ProgressDeadlineSeconds), Template: *tmpl}}, inPlace), true
	case *appsv1.StatefulSet:
		st := o.Status
		st.CurrentRevision, st.UpdateRevision = bounded(st.CurrentRevision, conditionBytes), bounded(st.UpdateRevision, conditionBytes)
		st.Conditions = slimConditions(st.Conditions, func(c appsv1.StatefulSetCondition) appsv1.StatefulSetCondition {
			return appsv1.StatefulSetCondition{Type: appsv1.StatefulSetConditionType(short(string(c.Type))),
				Status: corev1.ConditionStatus(short(string(c.Status))), Reason: short(c.Reason)}
		}, func(c appsv1.StatefulSetCondition) [3]string {
			return [3]string{string(c.Type), string(c.Status), c.Reason}
		}, &statefulSetConditions)
		return into(o, appsv1.StatefulSet{TypeMeta: o.TypeMeta, ObjectMeta: meta, Status: st, Spec: appsv1.StatefulSetSpec{
			Replicas: keepPtr(o.Spec.Replicas), Selector: slimSelector(o.Spec.Selector),
			UpdateStrategy: *o.Spec.UpdateStrategy.DeepCopy(), Template: *tmpl}}, inPlace), true
	case *appsv1.DaemonSet:
		st := o.Status
		st.Conditions = slimConditions(st.Conditions, func(c appsv1.DaemonSetCondition) appsv1.DaemonSetCondition {
			return appsv1.DaemonSetCondition{Type: appsv1.DaemonSetConditionType(short(string(c.Type))),
				Status: corev1.ConditionStatus(short(string(c.Status))), Reason: short(c.Reason)}
		}, func(c appsv1.DaemonSetCondition) [3]string {
			return [3]string{string(c.Type), string(c.Status), c.Reason}
		}, &daemonSetConditions)
		return into(o, appsv1.DaemonSet{TypeMeta: o.TypeMeta, ObjectMeta: meta, Status: st, Spec: appsv1.DaemonSetSpec{
			Selector: slimSelector(o.Spec.Selector), UpdateStrategy: *o.Spec.UpdateStrategy.DeepCopy(), Template: *tmpl}}, inPlace), true
	case *batchv1.CronJob:
		v := batchv1.CronJob{TypeMeta: o.TypeMeta, ObjectMeta: meta}
		v.Spec.JobTemplate.Spec.Template = *tmpl
		return into(o, v, inPlace), true
	}
	return nil, false
}

// into writes v over o when inPlace, else into a new object.
func into[T any](o *T, v T, inPlace bool) *T {
	if !inPlace {
		o = new(T)
	}
	*o = v
	return o
}

// keepPtr copies a pointer's value the slimmed copy holds, as keep a
// string.
func keepPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// slimConditions keeps the first maxConditions of cs, each reduced by keep
// to its words, which words gives. Equal lists share one copy
// (sharedValues): most workloads that have rolled out hold the same.
func slimConditions[C any](cs []C, keep func(C) C, words func(C) [3]string, shared *sharedValues[C]) []C {
	if len(cs) == 0 {
		return nil
	}
	out := make([]C, min(len(cs), maxConditions))
	parts := make([]string, 0, 3*len(out))
	for i := range out {
		out[i] = keep(cs[i])
		w := words(out[i])
		parts = append(parts, w[:]...)
	}
	first := shared.share(keyOf(parts...), func() *C { return &out[0] })
	// An equal key is an equal list, of as many conditions as out.
	return unsafe.Slice(first, len(out)) //nolint:gosec // first is the first of len(out) conditions (above)
}

// The conditions slimmed copies hold, by kind.
var (
	deploymentConditions  sharedValues[appsv1.DeploymentCondition]
	statefulSetConditions sharedValues[appsv1.StatefulSetCondition]
	daemonSetConditions   sharedValues[appsv1.DaemonSetCondition]
)

// short bounds a condition's word: a longer one stands for none the judge
// knows. A word the controllers write (conditionWords) is the table's own
// string, no copy: most workloads hold the same few.
func short(s string) string {
	if w, ok := conditionWords[s]; ok {
		return w
	}
	return bounded(s, conditionBytes)
}

// conditionWords are the types, statuses and reasons of the conditions
// the built-in controllers write, read only.
var conditionWords = func() map[string]string {
	m := map[string]string{}
	for _, w := range []string{
		"Available", "Progressing", "ReplicaFailure", "True", "False", "Unknown",
		"MinimumReplicasAvailable", "MinimumReplicasUnavailable", "NewReplicaSetAvailable", "NewReplicaSetCreated",
		"FoundNewReplicaSet", "ReplicaSetUpdated", "ProgressDeadlineExceeded", "DeploymentPaused", "DeploymentResumed",
		"ReplicaSetCreateError", "FailedCreate", "FailedDelete",
	} {
		m[w] = w
	}
	return m
}()

// slimSelector is s, or nil when it is larger than maxSelectorBytes. Equal
// selectors share one copy (sharedValues): the same app's, in each
// namespace it runs in.
func slimSelector(s *metav1.LabelSelector) *metav1.LabelSelector {
	if s == nil || selectorBytes(s) > maxSelectorBytes {
		return nil
	}
	return selectors.share(selectorKey(s), func() *metav1.LabelSelector { return copySelector(s) })
}

// selectors are the selectors slimmed copies hold.
var selectors sharedValues[metav1.LabelSelector]

// selectorKey spells out s: its labels in order, then its expressions as
// they are, each list with its length, and nil told from empty where the
// copy tells them apart.
func selectorKey(s *metav1.LabelSelector) string {
	parts := []string{strconv.FormatBool(s.MatchLabels != nil), strconv.Itoa(len(s.MatchLabels))}
	for _, k := range slices.Sorted(maps.Keys(s.MatchLabels)) {
		parts = append(parts, k, s.MatchLabels[k])
	}
	for _, e := range s.MatchExpressions {
		parts = append(parts, e.Key, string(e.Operator), strconv.FormatBool(e.Values != nil), strconv.Itoa(len(e.Values)))
		parts = append(parts, e.Values...)
	}
	return keyOf(parts...)
}

// copySelector copies s, its strings as the slimmed copy's others (keep).
func copySelector(s *metav1.LabelSelector) *metav1.LabelSelector {
	out := &metav1.LabelSelector{}
	if s.MatchLabels != nil {
		out.MatchLabels = make(map[string]string, len(s.MatchLabels))
		for k, v := range s.MatchLabels {
			out.MatchLabels[keep(k)] = keep(v)
		}
	}
	for _, e := range s.MatchExpressions {
		r := metav1.LabelSelectorRequirement{Key: keep(e.Key), Operator: metav1.LabelSelectorOperator(keep(string(e.Operator)))}
		if e.Values != nil {
			r.Values = make([]string, len(e.Values))
			for i, v := range e.Values {
				r.Values[i] = keep(v)
			}
		}
		out.MatchExpressions = append(out.MatchExpressions, r)
	}
	return out
}

// selectorBytes is the size of s's keys, values and operators, each with
// entryCost, as referenceBytes counts references.
func selectorBytes(s *metav1.LabelSelector) int {
	n := 0
	for k, v := range s.MatchLabels {
		n += entryCost + len(k) + len(v)
	}
	for _, e := range s.MatchExpressions {
		n += entryCost + len(e.Key) + len(e.Operator)
		for _, v := range e.Values {
			n += entryCost + len(v)
		}
	}
	return n
}
