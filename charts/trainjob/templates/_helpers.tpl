{{/*
Helpers of the trainjob chart. Names, labels, metadata, resources, env and the cross-field checks are the
arena-common library chart's "arena-common.*" templates.

Trainer v2.3.0 offers no pod template of its own: the TrainJob says what the trainer runs (spec.trainer)
and patches the runtime's pod templates through spec.runtimePatches, whose pod spec takes only affinity,
containers (env, securityContext, volumeMounts), imagePullSecrets, initContainers (the same), nodeSelector,
schedulingGates, securityContext, serviceAccountName, terminationGracePeriodSeconds, tolerations and volumes
(kubeflow/trainer v2.3.0, pkg/apis/trainer/v1alpha1/trainjob_types.go).
*/}}

{{/*
trainjob.replica: the per-node block in the shape arena-common's resources/env/validate read.
*/}}
{{- define "trainjob.replica" -}}
{{- $v := .Values -}}
{{- dict "replicas" (int $v.numNodes) "image" (default "(the runtime's image)" $v.image) "gpus" (int (default 0 $v.gpus)) "devices" (default dict $v.devices) "resources" (default dict $v.resources) | toJson -}}
{{- end -}}

{{/*
trainjob.checkRoot: a root context for arena-common.validate, with the nodes as one "node" replica block.
*/}}
{{- define "trainjob.checkRoot" -}}
{{- $values := merge (dict "node" (include "trainjob.replica" . | fromJson)) (deepCopy .Values) -}}
{{- dict "Values" $values "Release" .Release "Chart" .Chart "Subcharts" .Subcharts | toJson -}}
{{- end -}}

{{/*
trainjob.problems: the chart's own checks, as a JSON list.
*/}}
{{- define "trainjob.problems" -}}
{{- $v := .Values -}}
{{- $problems := list -}}
{{- if lt (int $v.numNodes) 1 -}}
{{- $problems = append $problems (printf "numNodes is %d: a TrainJob needs 1 or more nodes" (int $v.numNodes)) -}}
{{- end -}}
{{- if not $v.replicatedJobs -}}
{{- $problems = append $problems "replicatedJobs is empty: name the runtime's replicated jobs to patch (Trainer v2's is node)" -}}
{{- end -}}
{{- $problems | toJson -}}
{{- end -}}

{{/*
trainjob.volumeMounts: mounts of the trainer container: /dev/shm, the data PVCs, the host paths and the
Secrets.
*/}}
{{- define "trainjob.volumeMounts" -}}
{{- $v := .Values -}}
{{- if $v.shmSize }}
- name: dshm
  mountPath: /dev/shm
{{- end }}
{{- range $i, $d := $v.data }}
- name: {{ printf "data-%d" $i }}
  mountPath: {{ $d.mountPath | toJson }}
  {{- if $d.subPath }}
  subPath: {{ $d.subPath | toJson }}
  {{- end }}
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
{{- end -}}

{{/*
trainjob.volumes: the pods' volumes: a memory-backed /dev/shm, the data PVCs, the host paths and the
Secrets.
*/}}
{{- define "trainjob.volumes" -}}
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
{{- include "arena-common.secretVolumes" $v.secretVolumes }}
{{- end -}}

{{/*
trainjob.podSpecPatch: the pod spec patch of each patched replicated job (may be empty).
*/}}
{{- define "trainjob.podSpecPatch" -}}
{{- $v := .Values -}}
{{- include "arena-common.podLevel" (dict "values" $v "nodeSelector" $v.nodeSelector "affinity" $v.affinity) }}
{{- with $v.serviceAccountName }}
serviceAccountName: {{ . | toJson }}
{{- end }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . | toJson }}
  {{- end }}
{{- end }}
{{- with include "trainjob.volumes" . }}
volumes:
  {{- . | trim | nindent 2 }}
{{- end }}
{{- with include "trainjob.volumeMounts" . }}
containers:
  - name: {{ $.Values.container | toJson }}
    volumeMounts:
      {{- . | trim | nindent 6 }}
{{- end }}
{{- end -}}
