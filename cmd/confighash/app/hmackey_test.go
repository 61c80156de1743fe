package app

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestReadHMACKeyRetries runs the start-up key read against a client whose
// first GETs fail: transient failures are retried within the bound, others
// are returned at once.
func TestReadHMACKeyRetries(t *testing.T) {
	ref := types.NamespacedName{Namespace: "confighash-system", Name: "confighash-hmac-key"}
	secrets := schema.GroupResource{Resource: "secrets"}
	fast := wait.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 4}
	tests := map[string]struct {
		failures  []error // returned by the first GETs, in order
		wantErr   string  // substring; "" means success
		wantCalls int     // GETs made
	}{
		"apiserver unavailable, then up": {
			failures:  []error{apierrors.NewServiceUnavailable("starting"), apierrors.NewServiceUnavailable("starting")},
			wantCalls: 3,
		},
		"connection refused, timeout, throttled, then up": {
			failures: []error{
				&wrapped{syscall.ECONNREFUSED},
				apierrors.NewTimeoutError("slow", 1),
				apierrors.NewTooManyRequests("busy", 1),
			},
			wantCalls: 4,
		},
		"unavailable for longer than the bound": {
			failures:  []error{apierrors.NewInternalError(errors.New("etcd")), apierrors.NewInternalError(errors.New("etcd")), apierrors.NewInternalError(errors.New("etcd")), apierrors.NewInternalError(errors.New("etcd")), apierrors.NewInternalError(errors.New("etcd"))},
			wantErr:   "gave up after 4 attempts",
			wantCalls: 4,
		},
		"forbidden is not retried": {
			failures:  []error{apierrors.NewForbidden(secrets, ref.Name, errors.New("rbac"))},
			wantErr:   "forbidden",
			wantCalls: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			calls := 0
			c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					calls++
					if calls <= len(tc.failures) {
						return tc.failures[calls-1]
					}
					return c.Get(ctx, key, obj, opts...)
				},
			})
			key, err := readHMACKey(t.Context(), c, ref, fast)
			if calls != tc.wantCalls {
				t.Errorf("%d GETs, want %d", calls, tc.wantCalls)
			}
			if tc.wantErr == "" {
				if err != nil || len(key) == 0 {
					t.Fatalf("readHMACKey = %d bytes, %v; want a key", len(key), err)
				}
				s := &corev1.Secret{}
				if err := c.Get(t.Context(), ref, s); err != nil {
					t.Errorf("key Secret not there after the read: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("readHMACKey error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// wrapped hides a syscall error behind another error, as net/http does.
type wrapped struct{ err error }

func (w *wrapped) Error() string { return "dial tcp 10.96.0.1:443: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
