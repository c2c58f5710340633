{{/*
Helpers of the custom-serving chart: names and labels. A serving is the release <name>-<version>; the
Deployment and the Service are named as the release (nameOverride changes that).
*/}}

{{/*
custom-serving.name: the Deployment's and the Service's name: <nameOverride or release name>.
*/}}
{{- define "custom-serving.name" -}}
{{- include "arena-common.name" . -}}
{{- end -}}

{{/*
custom-serving.servingName: Arena's servingName: .Values.servingName, else the release name.
*/}}
{{- define "custom-serving.servingName" -}}
{{- .Values.servingName | default .Release.Name -}}
{{- end -}}

{{/*
custom-serving.labels: every object's and pod's labels: arena-common's, the component, and Arena's serving
labels (kubeflow/arena charts/custom-serving: servingName, servingVersion, servingType, serviceName), by which
Arena's serve list finds a serving.
*/}}
{{- define "custom-serving.labels" -}}
{{ include "arena-common.labels" . }}
app.kubernetes.io/component: serving
servingName: {{ include "custom-serving.servingName" . | quote }}
servingVersion: {{ .Values.servingVersion | quote }}
servingType: "custom-serving"
serviceName: {{ include "custom-serving.servingName" . | quote }}
{{- end -}}

{{/*
custom-serving.selectorLabels: what finds the serving's pods (the Deployment's and the Service's selector).
*/}}
{{- define "custom-serving.selectorLabels" -}}
{{ include "arena-common.selectorLabels" . }}
{{- end -}}

{{/*
custom-serving.ports: the ports set, as a JSON list of {name, port} (grpc, restful, metrics; 0 = none).
*/}}
{{- define "custom-serving.ports" -}}
{{- $out := list -}}
{{- range $name := list "grpc" "restful" "metrics" -}}
{{- $port := int (index $.Values.ports $name) -}}
{{- if gt $port 0 -}}
{{- $out = append $out (dict "name" $name "port" $port) -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
