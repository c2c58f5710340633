{{/*
Helpers of the paddlejob chart. The shared pieces (names, labels, containers, pod specs, runPolicy, the
cross-field checks) are the arena-common library chart's "arena-common.*" templates.
*/}}

{{/*
paddlejob.replicaTypes: the replica blocks of a PaddleJob as a JSON list of
{key: <values key>, type: <paddleReplicaSpecs key>}: the parameter servers (Master, none in collective mode)
and the workers.
*/}}
{{- define "paddlejob.replicaTypes" -}}
{{- list (dict "key" "master" "type" "Master") (dict "key" "worker" "type" "Worker") | toJson -}}
{{- end -}}

{{/*
paddlejob.container: what the training-operator expects of a PaddleJob container: name "paddle" and a port
named "master" (PADDLE_MASTER's port; training-operator v1.9.3 pkg/apis/kubeflow.org/v1/paddlepaddle_types.go).
*/}}
{{- define "paddlejob.container" -}}
{{- dict "name" "paddle" "portName" "master" | toJson -}}
{{- end -}}

{{/*
paddlejob.jobInfo: Arena's job info of the rendered PaddleJob as JSON {workers, gpus, requestGPUs} (see
arena-common's _jobinfo.tpl): --workers and --gpus are the worker block's (the trainers) replicas and gpus;
requestGPUs counts every pod, the parameter servers (master) included.
*/}}
{{- define "paddlejob.jobInfo" -}}
{{- $v := .Values -}}
{{- $requestGPUs := include "arena-common.requestGPUs" (dict "root" . "keys" (list "master" "worker")) -}}
{{- dict "workers" (int $v.worker.replicas) "gpus" (int (include "arena-common.gpus" $v.worker)) "requestGPUs" (int $requestGPUs) | toJson -}}
{{- end -}}
