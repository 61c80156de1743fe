// Package docs is confighash's user documentation: the Markdown pages in
// this directory, which README.md links to. It holds no code; its test
// keeps every relative link of README.md and of these pages pointing at a
// file that exists and, where the link names an #anchor, at a heading of
// that file, as GitHub renders it.
//
// Other tests hold the pages' words to the code they describe: the Event
// table of operations.md (internal/contract), its flag tables
// (cmd/confighash/app, TestFlagsDocumented), metrics.md's series
// (cmd/confighash/app, TestMetricsDocumented) and argocd.md
// (e2e/argocd).
package docs
