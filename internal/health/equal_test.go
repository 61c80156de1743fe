package health

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

func equalObjects(a, b runtime.Object) bool { return equality.Semantic.DeepEqual(a, b) }
