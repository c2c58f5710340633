{{/*
Helpers of the pytorchjob chart. The shared pieces (names, labels, containers, pod specs, runPolicy, the
cross-field checks) are the arena-common library chart's "arena-common.*" templates.
*/}}

{{/*
pytorchjob.replicaTypes: the replica blocks of a PyTorchJob as a JSON list of
{key: <values key>, type: <pytorchReplicaSpecs key>}.
*/}}
{{- define "pytorchjob.replicaTypes" -}}
{{- list (dict "key" "master" "type" "Master") (dict "key" "worker" "type" "Worker") | toJson -}}
{{- end -}}

{{/*
pytorchjob.container: what the training-operator expects of a PyTorchJob container: name "pytorch" and a
port named "pytorchjob-port" (MASTER_PORT).
*/}}
{{- define "pytorchjob.container" -}}
{{- dict "name" "pytorch" "portName" "pytorchjob-port" | toJson -}}
{{- end -}}

{{/*
pytorchjob.jobInfo: Arena's job info of the rendered PyTorchJob as JSON {workers, gpus, requestGPUs} (see
arena-common's _jobinfo.tpl): Arena's --workers counts the master (master.replicas + worker.replicas), --gpus
is the master's gpus (an elastic job's, which has no master: the workers'); requestGPUs counts every pod.
*/}}
{{- define "pytorchjob.jobInfo" -}}
{{- $v := .Values -}}
{{- $requestGPUs := include "arena-common.requestGPUs" (dict "root" . "keys" (list "master" "worker")) -}}
{{- dict "workers" (add (int $v.master.replicas) (int $v.worker.replicas)) "gpus" (int (include "arena-common.gpus" (ternary $v.master $v.worker (gt (int $v.master.replicas) 0)))) "requestGPUs" (int $requestGPUs) | toJson -}}
{{- end -}}
