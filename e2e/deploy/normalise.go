package deploy

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HelmOnlyLabels are the labels the chart adds that kustomize does not.
var HelmOnlyLabels = []string{
	"helm.sh/chart",
	"app.kubernetes.io/managed-by",
	"app.kubernetes.io/instance",
	"app.kubernetes.io/version",
}

// Normalise returns a copy of u without what legitimately differs between
// the chart and kustomize: the helm-only labels (on the object and on pod
// templates) and the image tags.
func Normalise(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	walk(c.Object)
	return c
}

func walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		if meta, ok := v["metadata"].(map[string]any); ok {
			if labels, ok := meta["labels"].(map[string]any); ok {
				for _, l := range HelmOnlyLabels {
					delete(labels, l)
				}
				if len(labels) == 0 {
					delete(meta, "labels")
				}
			}
		}
		for _, key := range []string{"containers", "initContainers"} {
			if cs, ok := v[key].([]any); ok {
				for _, c := range cs {
					if c, ok := c.(map[string]any); ok {
						if img, ok := c["image"].(string); ok {
							c["image"] = ImageRepository(img)
						}
					}
				}
			}
		}
		for _, e := range v {
			walk(e)
		}
	case []any:
		for _, e := range v {
			walk(e)
		}
	}
}

// ImageRepository strips the tag and digest off an image reference.
func ImageRepository(image string) string {
	image, _, _ = strings.Cut(image, "@")
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		image = image[:colon]
	}
	return image
}
