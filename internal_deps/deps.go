// Package deps is temporary: it pins the modules the packages under construction import.
package deps

import (
	_ "github.com/go-logr/logr"
	_ "go.uber.org/zap"
	_ "gomodules.xyz/jsonpatch/v2"
	_ "k8s.io/api/admissionregistration/v1"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/api/batch/v1"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/api/equality"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/tools/record"
	_ "sigs.k8s.io/controller-runtime"
	_ "sigs.k8s.io/controller-runtime/pkg/certwatcher"
	_ "sigs.k8s.io/controller-runtime/pkg/log/zap"
	_ "sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	_ "sigs.k8s.io/yaml"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/spf13/pflag"
)
