//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
)

// stampedWorkloads are one of each kind confighash re-stamps, reading
// ConfigMap cfg and Secret sec in every way a pod can: env, envFrom and
// volumes. Their pods run on the node; the CronJob is suspended, so that
// nothing but an upgrade could make it a new Job.
func stampedWorkloads(ns string) []client.Object {
	ref := func(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }
	spec := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: images.SampleApp().Ref,
				Env: []corev1.EnvVar{{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{
					ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref("cfg"), Key: "greeting"}}}},
				EnvFrom:      []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref("sec")}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/config"}, {Name: "sec", MountPath: "/secret"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("cfg")}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec"}}},
			},
		}}
	}
	selector := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	job := spec("report")
	job.Spec.RestartPolicy = corev1.RestartPolicyNever
	return []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: selector("web"), Template: spec("web")}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), ServiceName: "db", Selector: selector("db"), Template: spec("db")}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
			Spec: appsv1.DaemonSetSpec{Selector: selector("agent"), Template: spec("agent")}},
		&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "report"},
			Spec: batchv1.CronJobSpec{Schedule: "0 3 * * *", Suspend: ptr.To(true),
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: job}}}},
	}
}

// rollState is what changes when a workload rolls: its template's stamp,
// its generation, and the ReplicaSets, ControllerRevisions or Jobs it owns.
type rollState struct {
	Stamp      string
	Generation int64
	Owned      []string
}

// rollStates reads the rollState of each of objs, by "Kind/name".
func rollStates(ctx context.Context, c client.Client, objs []client.Object) (map[string]rollState, error) {
	out := map[string]rollState{}
	for _, obj := range objs {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return nil, fmt.Errorf("reading %s: %w", obj.GetName(), err)
		}
		stamp, err := framework.TemplateStamp(obj)
		if err != nil {
			return nil, err
		}
		var owned client.ObjectList
		switch obj.(type) {
		case *appsv1.Deployment:
			owned = &appsv1.ReplicaSetList{}
		case *batchv1.CronJob:
			owned = &batchv1.JobList{}
		default:
			owned = &appsv1.ControllerRevisionList{}
		}
		names, err := ownedBy(ctx, c, obj, owned)
		if err != nil {
			return nil, err
		}
		out[fmt.Sprintf("%T/%s", obj, obj.GetName())] = rollState{Stamp: stamp, Generation: obj.GetGeneration(), Owned: names}
	}
	return out, nil
}

// ownedBy lists the objects of list's kind in owner's namespace that owner
// controls, as "name uid".
func ownedBy(ctx context.Context, c client.Client, owner client.Object, list client.ObjectList) ([]string, error) {
	if err := c.List(ctx, list, client.InNamespace(owner.GetNamespace())); err != nil {
		return nil, fmt.Errorf("listing what %s owns: %w", owner.GetName(), err)
	}
	objs, err := metaItems(list)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, o := range objs {
		if ref := metav1.GetControllerOfNoCopy(o); ref != nil && ref.UID == owner.GetUID() {
			names = append(names, o.GetName()+" "+string(o.GetUID()))
		}
	}
	slices.Sort(names)
	return names, nil
}

func metaItems(list client.ObjectList) ([]metav1.Object, error) {
	var out []metav1.Object
	switch l := list.(type) {
	case *appsv1.ReplicaSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *appsv1.ControllerRevisionList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *batchv1.JobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("unexpected list %T", list)
	}
	return out, nil
}

// rolled names the workloads whose rollState differs from before, with
// both states.
func rolled(before, after map[string]rollState) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(before)) {
		b, a := before[name], after[name]
		if b.Stamp != a.Stamp || b.Generation != a.Generation || !slices.Equal(b.Owned, a.Owned) {
			out = append(out, fmt.Sprintf("%s: before %+v, after %+v", name, b, a))
		}
	}
	return out
}

// waitWorkloadsReady waits for `kubectl rollout status` of each workload
// that has pods (not the suspended CronJob).
func waitWorkloadsReady(ctx context.Context, env *framework.NodeEnv, objs []client.Object) error {
	for _, obj := range objs {
		var kind string
		switch obj.(type) {
		case *appsv1.Deployment:
			kind = "deployment"
		case *appsv1.StatefulSet:
			kind = "statefulset"
		case *appsv1.DaemonSet:
			kind = "daemonset"
		default:
			continue
		}
		if _, err := env.Run(ctx, "", "rollout", "status", "-n", obj.GetNamespace(), kind+"/"+obj.GetName(), "--timeout="+(3*time.Minute).String()); err != nil {
			return err
		}
	}
	return nil
}
