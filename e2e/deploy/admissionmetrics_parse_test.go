package deploy

import "testing"

// TestParseWebhookAdmissions reads the two counters of one webhook from an
// apiserver's /metrics text and leaves other webhooks, validating
// webhooks and other metrics out; a counter not yet incremented reads as 0.
func TestParseWebhookAdmissions(t *testing.T) {
	text := `# HELP apiserver_admission_webhook_fail_open_count [ALPHA] Admission webhook fail open count
# TYPE apiserver_admission_webhook_fail_open_count counter
apiserver_admission_webhook_fail_open_count{name="stamp.confighash.dev",type="admit"} 3
apiserver_admission_webhook_fail_open_count{name="other.example.com",type="admit"} 7
apiserver_admission_webhook_fail_open_count{name="stamp.confighash.dev",type="validating"} 11
apiserver_admission_webhook_admission_duration_seconds_count{name="stamp.confighash.dev",operation="CREATE",rejected="false",type="admit"} 40
apiserver_admission_webhook_admission_duration_seconds_count{name="stamp.confighash.dev",operation="UPDATE",rejected="false",type="admit"} 2
apiserver_admission_webhook_admission_duration_seconds_sum{name="stamp.confighash.dev",operation="CREATE",rejected="false",type="admit"} 0.5
apiserver_admission_webhook_admission_duration_seconds_count{name="other.example.com",operation="CREATE",rejected="false",type="admit"} 100
`
	got, err := parseWebhookAdmissions(text, "stamp.confighash.dev")
	if err != nil {
		t.Fatal(err)
	}
	if want := (webhookAdmissions{Calls: 42, FailOpen: 3}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	none, err := parseWebhookAdmissions(text, "unseen.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if none != (webhookAdmissions{}) {
		t.Errorf("a webhook absent from the metrics reads %+v, want zeros", none)
	}
	if _, err := parseWebhookAdmissions(`apiserver_admission_webhook_fail_open_count{name="stamp.confighash.dev",type="admit"} x`, "stamp.confighash.dev"); err == nil {
		t.Error("a malformed value parsed")
	}
}
