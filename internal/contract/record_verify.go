package contract

// Verifies reports whether value is a record of annotation that confighash
// sealed for s under key: its length and MAC only, not what it says nor
// when. It tells the hook's records from anyone else's writes where the
// record's meaning does not matter: the webhook keeps them from being
// replaced by anyone but the hook (a stale copy `kubectl rollout undo`
// brings back from a ReplicaSet verifies too, which is why it is refused
// on the way in rather than told apart when read).
func Verifies(key []byte, s Subject, annotation, value string) bool {
	_, err := open(key, s, annotation, value)
	return err == nil
}

// Records are the annotations of the records the hook seals on a workload.
func Records() []string {
	return []string{RolloutAnnotation, HaltAnnotation, HoldAnnotation}
}
