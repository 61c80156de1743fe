package webhook

import "testing"

// BenchmarkReviewNamespace is what reading the namespace ahead of the
// slot costs, for the review of BenchmarkEndpointCreate.
func BenchmarkReviewNamespace(b *testing.B) {
	body, _ := benchReview(b)
	b.ReportAllocs()
	for b.Loop() {
		if reviewNamespace([][]byte{body}) == "" {
			b.Fatal("no namespace")
		}
	}
}
