// Package health judges one workload's rollout of its current pod
// template, as `kubectl rollout status` would: Succeeded, Progressing or
// Failed, with a one-word Reason. It is pure: the hook hands it the
// workload object and the pods it listed (PodSelector says with which
// selector), and calls it again on each status update of the workload and
// every few seconds. Judge never reads the API, the clock or the object's
// config; its Message is written here from names and counts, never copied
// from a pod's or a controller's free text, so it carries no config value.
//
// # Which pods are the new revision
//
// A pod is of the new revision when its confighash.dev/checksum annotation
// is the stamp the hook wrote (Input.Stamp): the controller copies the
// template's annotations to every pod it makes from it. That is the one
// mark common to every kind, built-in or custom, without listing
// ReplicaSets or ControllerRevisions or knowing a kind's pod-template-hash
// label, and it is the mark of exactly the change being judged: old pods
// carry the previous stamp and never count, whether they crash or linger
// while terminating. With no stamp given, no pod is of the new revision.
// Pods of another workload with an overlapping selector and the same stamp
// would count too; the controllers warn against overlapping selectors.
//
// # Failed
//
//   - A new-revision pod whose container or init container waits with
//     CrashLoopBackOff, ImagePullBackOff, ErrImagePull,
//     CreateContainerConfigError, CreateContainerError, InvalidImageName or
//     RunContainerError; or has exited with a non-zero code, now (state
//     terminated) or before a restart (lastState terminated, restartCount
//     at least 1); or whose phase is Failed. The exit is seen on the first
//     crash, within seconds, before the kubelet's back-off says
//     CrashLoopBackOff and long before a progress deadline (10 minutes by
//     default). A pod the cluster disrupted (condition DisruptionTarget:
//     eviction, preemption, node shutdown) is not a failure of its config.
//     Nor is an exit of a container that had started before the re-stamp
//     (Input.Since: the hook's own time of the re-stamp, or the since of
//     the workload's confighash.dev/rollout record once the hook has
//     verified it, never ahead of now; without one every exit counts): it
//     ran with the content before the change.
//     Only a pod that outlived the change can show one, when the template
//     comes back to a revision whose pods are still running, as when the
//     fix of a halted change is a revert; a crash-looping pod whose last
//     crash is from before the re-stamp waits for its next start.
//     This holds for every kind and comes before the kind's own verdict.
//   - Deployment: kstatus Failed, i.e. ProgressDeadlineExceeded.
//   - Argo Rollouts: phase Degraded; the reason is the head of
//     status.message ("ProgressDeadlineExceeded: ...", "RolloutAborted:
//     ...", "InvalidSpec: ...") or else the degrading condition.
//   - Custom kinds: kstatus Failed (a Stalled condition); the reason is the
//     condition's, letters and digits only.
//
// # Succeeded
//
// Deployments, StatefulSets, DaemonSets and custom kinds go through
// sigs.k8s.io/cli-utils' kstatus (what Flux and kpt use): Current is a
// candidate Succeeded, InProgress, Unknown and Terminating are
// Progressing. For the three built-in kinds the controller must first
// have observed the generation (status.observedGeneration equal to
// metadata.generation, a missing one counting as not observed, where
// kstatus alone would be lenient): a status from the previous generation
// describes the previous template. Argo Rollouts: once observedGeneration
// (a string there) is the generation, phase Healthy is a candidate
// Succeeded, Paused and Progressing are Progressing.
//
// A candidate Succeeded becomes Succeeded "Updated" only after the soak:
// every new-revision pod (but those being deleted) is Running, all its
// containers and sidecars running, for at least Input.Soak since the
// latest of their starts: a restart is a start, so none restarted within
// the soak, and a pod that restarted long before it (a reused one, see
// above) is not held back by its restart count. Until then it is
// Progressing "Soaking". The soak exists because a program that runs
// for a moment and then exits counts as available to a Deployment without
// a readiness probe, so the controller can call the rollout complete
// before the crash; its restart then fails the rollout. With no pods
// selected there is nothing to soak.
//
// A custom kind's kstatus Current says little: kstatus knows nothing of its
// replica counts and answers Current for a status with no conditions as
// soon as the generation is observed. So a custom kind whose spec.replicas
// is an integer above 0, and that has a spec.selector, stays Progressing
// "NoNewPods" until at least one new-revision pod is listed, which then
// soaks.
//
// # Nothing to wait for (Succeeded at once)
//
// These would otherwise hold a wave until the hook's --rollout-timeout,
// although nothing is rolling:
//   - CronJob ("CronJob"): a stamp change only reaches its future Jobs;
//     running Jobs keep their pods. No pods are judged.
//   - Deployment or StatefulSet with spec.replicas 0 ("NoReplicas"), once
//     the generation is observed: there is no pod to roll.
//   - Paused Deployment ("Paused"), at once, observed or not: nothing rolls
//     until it is resumed, and waiting for it would block the other readers
//     of the change indefinitely. The rollout that a resume starts is not
//     judged (a later change to the source is).
//   - StatefulSet or DaemonSet with updateStrategy OnDelete ("OnDelete"),
//     once the generation is observed: pods take the new template only
//     when someone deletes them.
//   - A custom kind with no status at all, or an empty one ("NoStatus"):
//     nothing to judge it by. One with a status but no conditions is
//     judged by kstatus (see above).
//   - Job and bare Pod ("Immutable"): their templates are fixed, the hook
//     never re-stamps them.
//
// A pod failure still wins over each of these but CronJob and Job, and
// over "NotStamped" below.
//
// # Not stamped yet
//
// When the object's pod template does not carry the stamp (the hook's
// cache has not seen its own patch, or a newer stamp replaced it), the
// verdict is Progressing "NotStamped": its status describes another
// template.
package health
