{{/*
Names are fixed rather than derived from the release: the webhook
configuration is cluster-wide (one confighash per cluster), and the binary's
flags, the RBAC resourceNames and the certificate names all refer to them.
*/}}

{{/* Labels of the pods, also the selector. */}}
{{- define "confighash.selectorLabels" -}}
app.kubernetes.io/name: confighash
{{- end }}

{{/* Labels of every object. */}}
{{- define "confighash.labels" -}}
{{ include "confighash.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The flag value of --cert-mode. */}}
{{- define "confighash.certModeFlag" -}}
{{- if eq .Values.certMode "self" -}}
self
{{- else if eq .Values.certMode "cert-manager" -}}
external
{{- else -}}
{{- fail (printf "certMode must be \"self\" or \"cert-manager\", not %q" .Values.certMode) -}}
{{- end -}}
{{- end }}

{{/* Where the serving certificate files are. */}}
{{- define "confighash.certDir" -}}
{{- if eq .Values.certMode "self" -}}
/tmp/confighash/serving-certs
{{- else -}}
/etc/confighash/serving-certs
{{- end -}}
{{- end }}
