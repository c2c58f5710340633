{{/*
Helpers of the traffic-split chart.
*/}}

{{/*
traffic-split.labels: arena-common's labels and the serving's (Arena's servingName), component traffic.
*/}}
{{- define "traffic-split.labels" -}}
{{ include "arena-common.labels" . }}
app.kubernetes.io/component: traffic
servingName: {{ .Values.servingName | quote }}
{{- end -}}

{{/*
traffic-split.check: a serving, a port and versions whose weights sum to 100.
*/}}
{{- define "traffic-split.check" -}}
{{- $_ := required "servingName: the serving to split is not set (set servingName)" .Values.servingName -}}
{{- if not .Values.ports }}{{ fail "ports: no port to split (set ports: [{name, port}])" }}{{ end -}}
{{- if not .Values.backends }}{{ fail "backends: no version to split between (set backends: [{version, service, weight}])" }}{{ end -}}
{{- $total := 0 -}}
{{- range .Values.backends }}{{ $total = add $total (int .weight) }}{{ end -}}
{{- if ne (int $total) 100 -}}
{{- fail (printf "backends: the weights sum to %d, not 100" (int $total)) -}}
{{- end -}}
{{- end -}}
