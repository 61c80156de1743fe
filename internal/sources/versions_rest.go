package sources

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/confighash/confighash/hasher"
)

// Pages opens one page of a metadata-only LIST of a namespace's sources
// of one kind, as a stream of JSON (a PartialObjectMetadataList), for
// Versions to read as it arrives.
type Pages interface {
	Page(ctx context.Context, kind hasher.Kind, namespace string, limit int64, cont string) (io.ReadCloser, error)
}

// metadataListJSON asks the apiserver for a list's metadata only, as JSON
// (a stream a reader can read past), and for nothing else: with no
// fallback, an apiserver that cannot answer so refuses (406) rather than
// sending whole objects.
const metadataListJSON = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

// RESTPages opens pages with a core/v1 REST client.
type RESTPages struct {
	Client rest.Interface
}

// NewRESTPages is RESTPages over cfg, through hc (the manager's, so that
// it shares its connections).
func NewRESTPages(cfg *rest.Config, hc *http.Client) (RESTPages, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientForConfigAndClient(c, hc)
	if err != nil {
		return RESTPages{}, fmt.Errorf("a REST client for LISTs of sources: %w", err)
	}
	return RESTPages{Client: rc}, nil
}

// Page sends the LIST; the caller closes what it returns.
func (p RESTPages) Page(ctx context.Context, kind hasher.Kind, namespace string, limit int64, cont string) (io.ReadCloser, error) {
	resource, err := resourceOf(kind)
	if err != nil {
		return nil, err
	}
	req := p.Client.Get().Namespace(namespace).Resource(resource).
		Param("limit", strconv.FormatInt(limit, 10)).
		SetHeader("Accept", metadataListJSON)
	if cont != "" {
		req = req.Param("continue", cont)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("LIST %s in %s: %w", resource, namespace, err)
	}
	return body, nil
}

func resourceOf(k hasher.Kind) (string, error) {
	switch k {
	case hasher.ConfigMap:
		return "configmaps", nil
	case hasher.Secret:
		return "secrets", nil
	}
	return "", fmt.Errorf("unknown source kind %q", k)
}
