{{/*
Names, labels and object metadata of the arena-helm job charts.

Every template here takes the job chart's root context (`.`): it reads .Values, .Release and .Chart of
the chart that includes it, so `app.kubernetes.io/name` is the job chart's name, not "arena-common". The
object metadata (arena-common.metadata, arena-common.podMetadata) take a dict:
  root      the job chart's root context
  jobInfo   the job chart's Arena job info, `include "<chart>.jobInfo" . | fromJson`: {workers, gpus,
            requestGPUs} computed from the values being rendered (overrides included); absent for a chart
            without Arena's job info (trainjob)
*/}}

{{/*
arena-common.name: the job name, .Values.nameOverride or else the release name.
*/}}
{{- define "arena-common.name" -}}
{{- default .Release.Name .Values.nameOverride -}}
{{- end -}}

{{/*
arena-common.chart: the helm.sh/chart label value, <chart>-<version>.
*/}}
{{- define "arena-common.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
arena-common.reservedLabels: label keys the chart sets itself (a user's `labels` may not set them), as a
JSON list.
*/}}
{{- define "arena-common.reservedLabels" -}}
{{- list "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/managed-by" "app.kubernetes.io/part-of" "helm.sh/chart" "app" "release" "chart" "heritage" "createdBy" "kueue.x-k8s.io/queue-name" | toJson -}}
{{- end -}}

{{/*
arena-common.refuseOwnLabels: fails, naming them, when the user's labels (.root.Values.labels) set keys the
chart sets itself: arena-common's (arena-common.reservedLabels) and the caller's own (.owned, a list). For the
charts without a problem list of their own (a job chart lists these with its other problems:
arena-common.validate). Renders nothing.
*/}}
{{- define "arena-common.refuseOwnLabels" -}}
{{- $reserved := concat (include "arena-common.reservedLabels" .root | fromJsonArray) (default list .owned) -}}
{{- $taken := list -}}
{{- range $key, $_ := .root.Values.labels -}}
{{- if has $key $reserved }}{{ $taken = append $taken (quote $key) }}{{ end -}}
{{- end -}}
{{- with $taken -}}
{{- fail (printf "labels: %s %s set by the chart and cannot be overridden" (join ", " .) (ternary "is" "are" (eq (len .) 1))) -}}
{{- end -}}
{{- end -}}

{{/*
arena-common.selectorLabels: the stable labels (never helm.sh/chart, never a version) that find the pods
and the job of one release.
*/}}
{{- define "arena-common.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app: {{ .Chart.Name | quote }}
release: {{ .Release.Name | quote }}
{{- end -}}

{{/*
arena-common.createdBy: Arena's createdBy label: the kind the chart says it makes (its Chart.yaml annotation
arena-helm.kubeflow.org/kind, e.g. TFJob), else the chart's name.
*/}}
{{- define "arena-common.createdBy" -}}
{{- index (default dict .Chart.Annotations) "arena-helm.kubeflow.org/kind" | default .Chart.Name -}}
{{- end -}}

{{/*
arena-common.labels: labels of the job object and of every pod template: the recommended
app.kubernetes.io/* labels, Arena's `app: <kind chart>` and `release: <release>`, then the user's labels.
*/}}
{{- define "arena-common.labels" -}}
{{ include "arena-common.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/part-of: arena-helm
helm.sh/chart: {{ include "arena-common.chart" . | quote }}
chart: {{ include "arena-common.chart" . | quote }}
heritage: {{ .Release.Service | quote }}
createdBy: {{ include "arena-common.createdBy" . | quote }}
{{- with .Values.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
arena-common.annotations: the user's annotations with Arena's requestGPUsOfJobOwner (jobInfo.requestGPUs, the
GPUs of the pods that train) set over a user's own of that name, as Arena does (submit.go
addRequestGPUsToAnnotation runs after setAnnotations). Renders nothing when there are none.
*/}}
{{- define "arena-common.annotations" -}}
{{- $annotations := deepCopy (default dict .root.Values.annotations) -}}
{{- with .jobInfo -}}
{{- $_ := set $annotations "requestGPUsOfJobOwner" (toString (int .requestGPUs)) -}}
{{- end -}}
{{- with $annotations }}{{ toYaml . }}{{ end -}}
{{- end -}}

{{/*
arena-common.metadata: metadata of the job object (name, namespace, labels with the Kueue queue label,
annotations: the pods' ones and, on the job only, what made it: provenance.version as
arena-helm.kubeflow.org/version, provenance.commandLine, as JSON, as arena-helm.kubeflow.org/command-line,
and provenance.gitCommit as arena-helm.kubeflow.org/git-commit).
*/}}
{{- define "arena-common.metadata" -}}
{{- $root := .root -}}
name: {{ include "arena-common.name" $root }}
namespace: {{ $root.Release.Namespace | quote }}
labels:
  {{- include "arena-common.labels" $root | nindent 2 }}
  {{- with $root.Values.queue }}
  kueue.x-k8s.io/queue-name: {{ . | quote }}
  {{- end }}
{{- $annotations := include "arena-common.annotations" . | fromYaml -}}
{{- with $root.Values.provenance }}
{{- with .version }}{{ $_ := set $annotations "arena-helm.kubeflow.org/version" (toString .) }}{{ end }}
{{- with .commandLine }}{{ $_ := set $annotations "arena-helm.kubeflow.org/command-line" (toJson .) }}{{ end }}
{{- with .gitCommit }}{{ $_ := set $annotations "arena-helm.kubeflow.org/git-commit" (toString .) }}{{ end }}
{{- end }}
{{- with $annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
arena-common.podMetadata: metadata of every pod template: the same labels as the job (without the queue
label, which Kueue reads from the job) and the same annotations, with the replica's own (.replica.annotations,
when given) over them.
*/}}
{{- define "arena-common.podMetadata" -}}
labels:
  {{- include "arena-common.labels" .root | nindent 2 }}
  {{- with .root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- $annotations := include "arena-common.annotations" . -}}
{{- with (.replica | default dict).annotations }}
{{- $annotations = merge (deepCopy .) (fromYaml $annotations) | toYaml -}}
{{- end }}
{{- with $annotations }}
annotations:
  {{- . | trim | nindent 2 }}
{{- end }}
{{- end -}}
