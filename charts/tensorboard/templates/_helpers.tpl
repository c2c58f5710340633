{{/*
Helpers of the tensorboard chart. The chart is self-contained (no arena-common dependency) so that it
installs alone with `helm install tb charts/tensorboard`.
*/}}

{{/*
tensorboard.fullname: <nameOverride or release name>-tensorboard. As a subchart of a job chart the release
is the job's, so TensorBoard is <job name>-tensorboard (the job chart checks that tensorboard.nameOverride
equals its nameOverride).
*/}}
{{- define "tensorboard.fullname" -}}
{{- printf "%s-tensorboard" (default .Release.Name .Values.nameOverride) -}}
{{- end -}}

{{/*
tensorboard.chart: the helm.sh/chart label value.
*/}}
{{- define "tensorboard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
tensorboard.selectorLabels: the stable labels of the Deployment's selector and of the Service's (no
version, no helm.sh/chart: a selector cannot change across upgrades).
*/}}
{{- define "tensorboard.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/component: tensorboard
{{- end -}}

{{/*
tensorboard.jobChart: the name of the arena-helm job chart this chart is a subchart of, which says so in its
values.yaml (tensorboard.inJobChart); "" when it is installed alone (or under another chart).
*/}}
{{- define "tensorboard.jobChart" -}}
{{- if .Values.inJobChart -}}
{{- $parent := regexReplaceAll "^(.*/)?([^/]+)/charts/[^/]+/templates$" .Template.BasePath "${2}" -}}
{{- if ne $parent .Template.BasePath -}}
{{- $parent -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
tensorboard.labels: every object's labels: the selector labels, the rest of the recommended labels,
Arena's `role: tensorboard`, `app` (the job chart's name as in Arena, tensorboard when installed alone)
and `release` (the release of the job when this is a subchart, so that Arena's `get`, which lists the
Services labelled role=tensorboard,release=<job>, finds it), then the user's labels.
*/}}
{{- define "tensorboard.labels" -}}
{{ include "tensorboard.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
app.kubernetes.io/part-of: arena-helm
helm.sh/chart: {{ include "tensorboard.chart" . | quote }}
app: {{ include "tensorboard.jobChart" . | default .Chart.Name | quote }}
release: {{ .Release.Name | quote }}
role: tensorboard
{{- with .Values.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
tensorboard.underMount: "true" when the absolute path .path lies inside (or is) the mount point .mount.
*/}}
{{- define "tensorboard.underMount" -}}
{{- $path := clean .path -}}
{{- $mount := clean .mount -}}
{{- if or (eq $path $mount) (hasPrefix (printf "%s/" (trimSuffix "/" $mount)) $path) -}}
true
{{- end -}}
{{- end -}}

{{/*
tensorboard.problems: the cross-field problems of the values, as a JSON list of messages. Takes a chart
context (.Values, .Release): this chart's own, or a parent's .Subcharts.tensorboard.
*/}}
{{- define "tensorboard.problems" -}}
{{- $v := .Values -}}
{{- $problems := list -}}
{{- $name := include "tensorboard.fullname" . -}}
{{- if or (gt (len $name) 63) (not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name)) -}}
{{- $problems = append $problems (printf "the name %q (<nameOverride or release name>-tensorboard) must be a DNS-1035 label of at most 63 characters" $name) -}}
{{- end -}}
{{- $pvc := $v.pvc | default dict -}}
{{- $host := $v.hostPath | default dict -}}
{{- if and $pvc.claimName $host.enabled -}}
{{- $problems = append $problems "pvc.claimName and hostPath.enabled are both set: read the logs from one of them" -}}
{{- end -}}
{{- if and $host.path (not $host.enabled) -}}
{{- $problems = append $problems "hostPath.path is set but hostPath.enabled is false: host paths must be enabled explicitly" -}}
{{- end -}}
{{- if and $host.enabled (not $host.path) -}}
{{- $problems = append $problems "hostPath.enabled is true but hostPath.path is empty" -}}
{{- end -}}
{{- if hasPrefix "/" $v.logDir -}}
{{- if and $pvc.claimName (not (include "tensorboard.underMount" (dict "path" $v.logDir "mount" $pvc.mountPath))) -}}
{{- $problems = append $problems (printf "logDir %q is not inside pvc.mountPath %q" $v.logDir $pvc.mountPath) -}}
{{- end -}}
{{- if and $host.enabled (not (include "tensorboard.underMount" (dict "path" $v.logDir "mount" $host.mountPath))) -}}
{{- $problems = append $problems (printf "logDir %q is not inside hostPath.mountPath %q" $v.logDir $host.mountPath) -}}
{{- end -}}
{{- else if not (regexMatch "^[a-z][a-z0-9+.-]*://" $v.logDir) -}}
{{- $problems = append $problems (printf "logDir %q must be an absolute path or a URL such as s3://bucket/logs" $v.logDir) -}}
{{- end -}}
{{- $service := $v.service | default dict -}}
{{- if and (not (kindIs "invalid" $service.nodePort)) (eq (default "ClusterIP" $service.type) "ClusterIP") -}}
{{- $problems = append $problems "service.nodePort is set but service.type is ClusterIP: use NodePort or LoadBalancer" -}}
{{- end -}}
{{- $envNames := dict "HOME" "the chart (TensorBoard's state lives in /tmp)" -}}
{{- range $i, $e := $v.env -}}
{{- if hasKey $envNames $e.name -}}
{{- $problems = append $problems (printf "env[%d]: %q is set by %s" $i $e.name (get $envNames $e.name)) -}}
{{- else -}}
{{- $_ := set $envNames $e.name (printf "env[%d]" $i) -}}
{{- end -}}
{{- end -}}
{{- $reserved := list "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/component" "app.kubernetes.io/managed-by" "app.kubernetes.io/part-of" "helm.sh/chart" "app" "release" "role" -}}
{{- range $key, $value := $v.labels -}}
{{- if has $key $reserved -}}
{{- $problems = append $problems (printf "labels: %q is set by the chart and cannot be overridden" $key) -}}
{{- end -}}
{{- end -}}
{{- toJson $problems -}}
{{- end -}}

{{/*
tensorboard.validate: fails once, listing every problem. As a subchart of an arena-helm job chart it leaves that to the job chart, whose arena-common.validate reports these problems
together with its own in one failure; anywhere else (alone, or under another chart) it fails itself.
*/}}
{{- define "tensorboard.validate" -}}
{{- if not (include "tensorboard.jobChart" .) -}}
{{- $problems := include "tensorboard.problems" . | fromJsonArray -}}
{{- if $problems -}}
{{- fail (printf "the values of chart tensorboard have %d problem(s):\n  - %s" (len $problems) (join "\n  - " $problems)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
tensorboard.envVars: the env values as container env items, each a value (byte for byte) or a valueFrom
(a Secret's or ConfigMap's key: only names). The same rendering as arena-common.envVars: this chart is
installed alone too, without the library chart.
*/}}
{{- define "tensorboard.envVars" -}}
{{- range . }}
- name: {{ .name | toJson }}
  {{- if hasKey . "valueFrom" }}
  valueFrom:
    {{- toYaml .valueFrom | nindent 4 }}
  {{- else }}
  value: {{ .value | toJson }}
  {{- end }}
{{- end }}
{{- end -}}
