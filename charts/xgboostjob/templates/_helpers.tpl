{{/*
Helpers of the xgboostjob chart. The shared pieces (names, labels, containers, pod specs, runPolicy, the
cross-field checks) are the arena-common library chart's "arena-common.*" templates.
*/}}

{{/*
xgboostjob.replicaTypes: the replica blocks of an XGBoostJob as a JSON list of
{key: <values key>, type: <xgbReplicaSpecs key>}.
*/}}
{{- define "xgboostjob.replicaTypes" -}}
{{- list (dict "key" "master" "type" "Master") (dict "key" "worker" "type" "Worker") | toJson -}}
{{- end -}}

{{/*
xgboostjob.container: what the training-operator expects of an XGBoostJob container: name "xgboost" and a
port named "xgboostjob-port" (MASTER_PORT; training-operator v1.9.3 pkg/apis/kubeflow.org/v1/xgboost_types.go).
*/}}
{{- define "xgboostjob.container" -}}
{{- dict "name" "xgboost" "portName" "xgboostjob-port" | toJson -}}
{{- end -}}

{{/*
xgboostjob.jobInfo: Arena's job info of the rendered XGBoostJob as JSON {workers, gpus, requestGPUs} (see
arena-common's _jobinfo.tpl), as a PyTorchJob's: --workers counts the master (master.replicas +
worker.replicas), --gpus is the master's gpus; requestGPUs counts every pod.
*/}}
{{- define "xgboostjob.jobInfo" -}}
{{- $v := .Values -}}
{{- $requestGPUs := include "arena-common.requestGPUs" (dict "root" . "keys" (list "master" "worker")) -}}
{{- dict "workers" (add (int $v.master.replicas) (int $v.worker.replicas)) "gpus" (int (include "arena-common.gpus" $v.master)) "requestGPUs" (int $requestGPUs) | toJson -}}
{{- end -}}
