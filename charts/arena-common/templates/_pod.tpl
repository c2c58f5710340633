{{/*
Pod templates, volumes and replica specs. These take the replica context described in _container.tpl.
*/}}

{{/*
arena-common.volumes: the pod's volumes: a memory-backed /dev/shm (shmSize), the data PVCs, the host
paths, the emptyDir that git-sync fills, the configFiles' ConfigMap and the secretVolumes. Takes the root
context.
*/}}
{{- define "arena-common.volumes" -}}
{{- $v := .Values -}}
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
{{- if $v.codeSync.enabled }}
- name: code-sync
  emptyDir: {}
{{- end }}
{{- if $v.configFiles }}
- name: config-files
  configMap:
    name: {{ printf "%s-config" (include "arena-common.name" .) }}
{{- end }}
{{- include "arena-common.secretVolumes" $v.secretVolumes }}
{{- end -}}

{{/*
arena-common.secretVolumes: the volumes secret-0, secret-1, ... of a list of secretVolumes values.
*/}}
{{- define "arena-common.secretVolumes" -}}
{{- range $i, $s := . }}
- name: {{ printf "secret-%d" $i }}
  secret:
    secretName: {{ $s.secretName | toJson }}
    {{- if not (kindIs "invalid" $s.defaultMode) }}
    defaultMode: {{ int $s.defaultMode }}
    {{- end }}
    {{- if $s.optional }}
    optional: true
    {{- end }}
{{- end }}
{{- end -}}

{{/*
arena-common.configMap: the ConfigMap of the job's configFiles (keys config-0, config-1, ...), or nothing.
*/}}
{{- define "arena-common.configMap" -}}
{{- if .Values.configFiles }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ printf "%s-config" (include "arena-common.name" .) }}
  namespace: {{ .Release.Namespace | quote }}
  labels:
    {{- include "arena-common.labels" . | nindent 4 }}
data:
  {{- range $i, $f := .Values.configFiles }}
  {{ printf "config-%d" $i }}: {{ $f.content | toJson }}
  {{- end }}
{{- end }}
{{- end -}}

{{/*
arena-common.podLevel: the pod-level fields every family's pod spec renders alike (a job's replicas, a
TrainJob's runtime patch, a serving's pods, a workspace's pod): where the pod may run (nodeSelector, tolerations,
affinity) and how long it gets to stop (terminationGracePeriodSeconds). A pod-level value every family takes is
rendered here, once. Takes a dict:
  values        the chart's .Values (tolerations, terminationGracePeriodSeconds)
  nodeSelector  the pod's node selector (a job's: its replica's merged over the chart's)
  affinity      the pod's affinity (a job's: its replica's, else the chart's)
*/}}
{{- define "arena-common.podLevel" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if not (kindIs "invalid" .values.terminationGracePeriodSeconds) }}
terminationGracePeriodSeconds: {{ int64 .values.terminationGracePeriodSeconds }}
{{- end }}
{{- end -}}

{{/*
arena-common.podSpec: the pod spec of a replica.
*/}}
{{- define "arena-common.podSpec" -}}
{{- $v := .root.Values -}}
{{- $nodeSelector := merge (deepCopy (default dict .replica.nodeSelector)) (deepCopy (default dict $v.nodeSelector)) -}}
{{- include "arena-common.podLevel" (dict "values" $v "nodeSelector" $nodeSelector "affinity" (.replica.affinity | default $v.affinity)) }}
{{- with $v.priorityClassName }}
priorityClassName: {{ . | toJson }}
{{- end }}
{{- with $v.schedulerName }}
schedulerName: {{ . | toJson }}
{{- end }}
{{- if $v.serviceAccountName }}
serviceAccountName: {{ $v.serviceAccountName | toJson }}
{{- else if not .container.keepToken }}
automountServiceAccountToken: false
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
{{- if $v.hostNetwork }}
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
{{- end }}
{{- if $v.hostPID }}
hostPID: true
{{- end }}
{{- if $v.hostIPC }}
hostIPC: true
{{- end }}
{{- if $v.codeSync.enabled }}
initContainers:
  {{- include "arena-common.gitSyncContainer" . | nindent 2 }}
{{- end }}
containers:
  {{- include "arena-common.container" . | nindent 2 }}
{{- $volumes := include "arena-common.volumes" .root | trim }}
{{- with .container.volumes }}
{{- $volumes = printf "%s\n%s" $volumes (toYaml .) | trim }}
{{- end }}
{{- with $volumes }}
volumes:
  {{- . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
arena-common.podTemplate: metadata and spec of a replica's pod template.
*/}}
{{- define "arena-common.podTemplate" -}}
metadata:
  {{- include "arena-common.podMetadata" (dict "root" .root "jobInfo" .jobInfo "replica" .replica) | nindent 2 }}
spec:
  {{- include "arena-common.podSpec" . | trim | nindent 2 }}
{{- end -}}

{{/*
arena-common.replicaSpec: one entry of the job's replica specs map, "<type>: {replicas, restartPolicy,
template}".
*/}}
{{- define "arena-common.replicaSpec" -}}
{{ .type }}:
  replicas: {{ int .replica.replicas }}
  {{- with .replica.restartPolicy }}
  restartPolicy: {{ . }}
  {{- end }}
  template:
    {{- include "arena-common.podTemplate" . | nindent 4 }}
{{- end -}}

{{/*
arena-common.runPolicy: the body of the job's runPolicy. Unset (null) integers are left out so the
operator's defaults apply; 0 is kept (backoffLimit: 0 means no retry). suspend is rendered once set
(true or false; arena-helm suspend/resume set it), left out while null.
*/}}
{{- define "arena-common.runPolicy" -}}
{{- $rp := .Values.runPolicy | default dict -}}
cleanPodPolicy: {{ $rp.cleanPodPolicy | default "Running" }}
{{- range $key := list "backoffLimit" "ttlSecondsAfterFinished" "activeDeadlineSeconds" }}
{{- $n := index $rp $key }}
{{- if not (kindIs "invalid" $n) }}
{{ $key }}: {{ int64 $n }}
{{- end }}
{{- end }}
{{- if not (kindIs "invalid" $rp.suspend) }}
suspend: {{ $rp.suspend }}
{{- end }}
{{- with $rp.schedulingPolicy }}
schedulingPolicy:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
