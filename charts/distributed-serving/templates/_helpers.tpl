{{/*
Helpers of the distributed-serving chart: a LeaderWorkerSet's leader and worker pods from the shared serving
templates of arena-common (_serving.tpl), each with its role's command and resources.
*/}}

{{/*
distributed-serving.ports: the leader's ports, a list of {name, port}, as JSON ({"ports": [...]}).
*/}}
{{- define "distributed-serving.ports" -}}
{{- $ports := list -}}
{{- range $name := list "grpc" "restful" "metrics" -}}
{{- $port := int (index $.Values.ports $name) -}}
{{- if gt $port 0 }}{{ $ports = append $ports (dict "name" $name "port" $port) }}{{ end -}}
{{- end -}}
{{- toJson (dict "ports" $ports) -}}
{{- end -}}

{{/*
distributed-serving.pod: the dict arena-common.servingPodSpec takes for one role (dict "root" . "role"
"leader"|"worker"), as JSON: the role's command ([shell, -c, command]), its GPUs and CPU/memory over the common
ones (a root whose Values have them), Arena's environment of a group's pod, and the leader's ports.
*/}}
{{- define "distributed-serving.pod" -}}
{{- $v := .root.Values -}}
{{- $own := index $v .role -}}
{{- $command := $own.command | default $v.command -}}
{{- if not $command -}}
{{- fail (printf "%s.command: the %s's command is not set (set command, or %s.command)" .role .role .role) -}}
{{- end -}}
{{- $gpus := ternary $v.gpus $own.gpus (kindIs "invalid" $own.gpus) -}}
{{- $resources := deepCopy ($v.resources | default dict) -}}
{{- range $key := list "cpu" "memory" -}}
{{- with index $own $key -}}
{{- $_ := set $resources "requests" (merge (dict $key .) ($resources.requests | default dict)) -}}
{{- $_ := set $resources "limits" (merge (dict $key .) ($resources.limits | default dict)) -}}
{{- end -}}
{{- end -}}
{{- $values := merge (dict "gpus" $gpus "resources" $resources) (deepCopy $v) -}}
{{- $env := list
      (dict "name" "MASTER_ADDR" "value" "$(LWS_LEADER_ADDRESS)")
      (dict "name" "WORLD_SIZE" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.annotations['leaderworkerset.sigs.k8s.io/size']")))
      (dict "name" "POD_NAME" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.name")))
      (dict "name" "POD_INDEX" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']")))
      (dict "name" "GROUP_INDEX" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']")))
      (dict "name" "GPU_COUNT" "value" (toString (int $gpus)))
      (dict "name" "ROLE" "value" (ternary "master" "worker" (eq .role "leader"))) -}}
{{- $pod := dict "Values" $values "type" "distributed-serving" "name" (printf "distributed-serving-%s" .role)
      "command" (list $v.shell "-c" $command) "extraEnv" $env -}}
{{- if eq .role "leader" }}{{ $_ := set $pod "ports" (include "distributed-serving.ports" .root | fromJson).ports }}{{ end -}}
{{- toJson $pod -}}
{{- end -}}

{{/*
distributed-serving.template: a role's pod template (dict "root" . "role" ...): the serving's labels and the
role's, the pod spec.
*/}}
{{- define "distributed-serving.template" -}}
{{- $pod := include "distributed-serving.pod" . | fromJson -}}
{{- $s := dict "root" .root "type" "distributed-serving" -}}
metadata:
  labels:
    {{- include "arena-common.servingLabels" $s | nindent 4 }}
    role: {{ .role | quote }}
  {{- with .root.Values.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- include "arena-common.servingPodSpec" (merge (dict "root" (merge (dict "Values" $pod.Values) .root)) (omit $pod "Values")) | trim | nindent 2 }}
{{- end -}}
