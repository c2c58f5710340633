{{/*
The Deployment and the Service of the serving charts (custom-serving, vllm-serving, ...). A serving is the
release <name>-<version>: both objects are named as the release (nameOverride changes that) and carry Arena's
serving labels (kubeflow/arena charts/custom-serving: servingName, servingVersion, servingType, serviceName), by
which Arena's serve list finds a serving, beside arena-common's.

arena-common.servingDeployment and arena-common.servingService take a dict:
  root     the serving chart's root context (its values are a chart_values.ServingValues)
  type     Arena's servingType (the chart's name: custom-serving, vllm-serving)
  command  the server's command as a list ([] = the image's entrypoint)
  args     the server's arguments as a list ([] = none)
  ports    the server's ports, a list of {name, port} (the Service has one port each; none: no Service)
  probes   {readinessProbe, livenessProbe, startupProbe}: the container's probes (each may be absent)
  image    the image, when the chart chooses it (else .Values.image)
  extraEnv more environment variables of the container, after the user's and Arena's (a list of EnvVar)
  selector more labels the Service selects the pods by (the leaders of a LeaderWorkerSet)
*/}}

{{- define "arena-common.servingName" -}}
{{- .Values.servingName | default .Release.Name -}}
{{- end -}}

{{- define "arena-common.servingLabels" -}}
{{- include "arena-common.refuseOwnLabels" (dict "root" .root "owned" (list "app.kubernetes.io/component" "servingName" "servingVersion" "servingType" "serviceName")) -}}
{{ include "arena-common.labels" .root }}
app.kubernetes.io/component: serving
servingName: {{ include "arena-common.servingName" .root | quote }}
servingVersion: {{ .root.Values.servingVersion | quote }}
servingType: {{ .type | quote }}
serviceName: {{ include "arena-common.servingName" .root | quote }}
{{- end -}}

{{- define "arena-common.servingDeployment" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $name := include "arena-common.name" $root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $name | quote }}
  namespace: {{ $root.Release.Namespace | quote }}
  labels:
    {{- include "arena-common.servingLabels" . | nindent 4 }}
  {{- with $v.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  replicas: {{ int $v.replicas }}
  selector:
    matchLabels:
      {{- include "arena-common.selectorLabels" $root | nindent 6 }}
  strategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        {{- include "arena-common.servingLabels" . | nindent 8 }}
      {{- with $v.annotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      {{- include "arena-common.servingPodSpec" . | trim | nindent 6 }}
{{- end -}}

{{/*
arena-common.servingPodSpec: the pod spec of a serving's pods (one container, arena-common.servingContainer),
for a Deployment's template, an InferenceService's predictor or a LeaderWorkerSet's templates. Takes the dict
of arena-common.servingDeployment; "podFields": false leaves out the fields only a PodSpec has
(automountServiceAccountToken, enableServiceLinks), "containersKey" names the list ("containers").
*/}}
{{- define "arena-common.servingPodSpec" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- if ne (toString .podFields) "false" }}
automountServiceAccountToken: false
enableServiceLinks: false
{{- end }}
{{- include "arena-common.podLevel" (dict "values" $v "nodeSelector" $v.nodeSelector "affinity" $v.affinity) }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . | toJson }}
{{- end }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . | toJson }}
  {{- end }}
{{- end }}
{{- with $v.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if ne (toString .containersKey) "none" }}
{{ .containersKey | default "containers" }}:
  - {{ include "arena-common.servingContainer" . | indent 4 | trim }}
{{- end }}
{{- include "arena-common.servingVolumes" . }}
{{- end -}}

{{/*
arena-common.servingContainer: the server's container (name .name, default "serving"): image, command, args,
env, ports, probes, resources, mounts. Takes the dict of arena-common.servingDeployment; with "imageOptional"
the image may be unset (an InferenceService's model: its runtime has one); with "unnamed" no name (KServe
refuses one on a model).
*/}}
{{- define "arena-common.servingContainer" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $image := .image | default $v.image -}}
{{- if not .imageOptional }}{{ $image = required "image: the serving's image is not set (set image)" $image }}{{ end -}}
{{- if not .unnamed }}
name: {{ .name | default "serving" }}
{{- end }}
{{- with $image }}
image: {{ . | toJson }}
{{- end }}
imagePullPolicy: {{ $v.imagePullPolicy }}
{{- with .command }}
command: {{ . | toJson }}
{{- end }}
{{- with .args }}
args: {{ . | toJson }}
{{- end }}
env:
  {{- with include "arena-common.envVars" $v.env }}
  {{- . | trim | nindent 2 }}
  {{- end }}
  {{- with include "arena-common.noGpuEnv" (dict "replica" $v) }}
  {{- . | trim | nindent 2 }}
  {{- end }}
  # where the pod runs, as Arena's serving charts give it
  - name: ARENA_NODE_NAME
    valueFrom:
      fieldRef:
        fieldPath: spec.nodeName
  - name: ARENA_POD_NAMESPACE
    valueFrom:
      fieldRef:
        fieldPath: metadata.namespace
  - name: ARENA_POD_NAME
    valueFrom:
      fieldRef:
        fieldPath: metadata.name
  - name: ARENA_POD_IP
    valueFrom:
      fieldRef:
        fieldPath: status.podIP
  {{- with .extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with $v.envFrom }}
envFrom:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .ports }}
ports:
  {{- range . }}
  - name: {{ .name }}
    containerPort: {{ .port }}
    protocol: TCP
  {{- end }}
{{- end }}
{{- range $probe := list "startupProbe" "readinessProbe" "livenessProbe" }}
{{- with index ($.probes | default dict) $probe }}
{{ $probe }}:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- with include "arena-common.resources" (dict "replica" $v) }}
resources:
  {{- . | trim | nindent 2 }}
{{- end }}
{{- with $v.securityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if or $v.shmSize $v.data $v.hostPaths $v.secretVolumes }}
volumeMounts:
  {{- if $v.shmSize }}
  - name: dshm
    mountPath: /dev/shm
  {{- end }}
  {{- range $i, $d := $v.data }}
  - name: {{ printf "data-%d" $i }}
    mountPath: {{ $d.mountPath | toJson }}
    {{- if $d.readOnly }}
    readOnly: true
    {{- end }}
  {{- end }}
  {{- range $i, $h := $v.hostPaths }}
  - name: {{ printf "hostpath-%d" $i }}
    mountPath: {{ $h.mountPath | toJson }}
    {{- if $h.readOnly }}
    readOnly: true
    {{- end }}
  {{- end }}
  {{- range $i, $s := $v.secretVolumes }}
  - name: {{ printf "secret-%d" $i }}
    mountPath: {{ $s.mountPath | toJson }}
    readOnly: true
  {{- end }}
{{- end }}
{{- end -}}

{{/*
arena-common.servingVolumes: the volumes of arena-common.servingContainer's mounts (none: nothing).
*/}}
{{- define "arena-common.servingVolumes" -}}
{{- $v := .root.Values -}}
{{- if or $v.shmSize $v.data $v.hostPaths $v.secretVolumes }}
volumes:
  {{- with $v.shmSize }}
  - name: dshm
    emptyDir:
      medium: Memory
      sizeLimit: {{ . | toJson }}
  {{- end }}
  {{- range $i, $d := $v.data }}
  - name: {{ printf "data-%d" $i }}
    persistentVolumeClaim:
      claimName: {{ $d.claimName | toJson }}
      {{- if $d.readOnly }}
      readOnly: true
      {{- end }}
  {{- end }}
  {{- range $i, $h := $v.hostPaths }}
  - name: {{ printf "hostpath-%d" $i }}
    hostPath:
      path: {{ $h.path | toJson }}
  {{- end }}
  {{- with include "arena-common.secretVolumes" $v.secretVolumes }}
  {{- . | trim | nindent 2 }}
  {{- end }}
{{- end }}
{{- end -}}

{{- define "arena-common.servingService" -}}
{{- if .ports }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "arena-common.name" .root | quote }}
  namespace: {{ .root.Release.Namespace | quote }}
  labels:
    {{- include "arena-common.servingLabels" . | nindent 4 }}
spec:
  type: {{ .root.Values.service.type }}
  selector:
    {{- include "arena-common.selectorLabels" .root | nindent 4 }}
    {{- with .selector }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    {{- range .ports }}
    - name: {{ .name }}
      port: {{ .port }}
      targetPort: {{ .name }}
      protocol: TCP
    {{- end }}
{{- end }}
{{- end -}}

{{- define "arena-common.servingNotes" -}}
{{- $root := .root -}}
{{- $name := include "arena-common.name" $root -}}
{{- $servingName := include "arena-common.servingName" $root -}}
Serving {{ $servingName }}{{ with $root.Values.servingVersion }} version {{ . }}{{ end }} runs as Deployment {{ $name }} ({{ int $root.Values.replicas }} replica{{ if ne (int $root.Values.replicas) 1 }}s{{ end }}) in namespace {{ $root.Release.Namespace }}.

  arena-helm serve get {{ $servingName }} -n {{ $root.Release.Namespace }}
  kubectl rollout status -n {{ $root.Release.Namespace }} deployment/{{ $name }}
{{- if .ports }}
  Service {{ $name }}.{{ $root.Release.Namespace }} ({{ $root.Values.service.type }}), port{{ if gt (len .ports) 1 }}s{{ end }}{{ range .ports }} {{ .name }}:{{ .port }}{{ end }}
  kubectl port-forward -n {{ $root.Release.Namespace }} service/{{ $name }} {{ (index .ports 0).port }}
{{- else }}
  No port is set: no Service.
{{- end }}
{{- end -}}
