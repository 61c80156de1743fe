package contract

// FieldManager is the field manager of every confighash write, as users see
// it in managedFields and name it in GitOps settings (docs/argocd.md). The
// webhook lets a write change nothing but the stamp only when it comes
// under this name: that is the hook's re-stamp.
const FieldManager = "confighash"
