{{/*
Helpers of the jaxjob chart. The shared pieces (names, labels, containers, pod specs, runPolicy, the
cross-field checks) are the arena-common library chart's "arena-common.*" templates.
*/}}

{{/*
jaxjob.replicaTypes: the replica blocks of a JAXJob as a JSON list of
{key: <values key>, type: <jaxReplicaSpecs key>}: workers only (worker 0 is the coordinator).
*/}}
{{- define "jaxjob.replicaTypes" -}}
{{- list (dict "key" "worker" "type" "Worker") | toJson -}}
{{- end -}}

{{/*
jaxjob.container: what the training-operator expects of a JAXJob container: name "jax" and a port named
"jaxjob-port" (COORDINATOR_PORT; training-operator v1.9.3 pkg/apis/kubeflow.org/v1/jax_types.go).
*/}}
{{- define "jaxjob.container" -}}
{{- dict "name" "jax" "portName" "jaxjob-port" | toJson -}}
{{- end -}}

{{/*
jaxjob.jobInfo: Arena's job info of the rendered JAXJob as JSON {workers, gpus, requestGPUs} (see
arena-common's _jobinfo.tpl): the worker block's replicas and gpus; requestGPUs counts every pod.
*/}}
{{- define "jaxjob.jobInfo" -}}
{{- $v := .Values -}}
{{- $requestGPUs := include "arena-common.requestGPUs" (dict "root" . "keys" (list "worker")) -}}
{{- dict "workers" (int $v.worker.replicas) "gpus" (int (include "arena-common.gpus" $v.worker)) "requestGPUs" (int $requestGPUs) | toJson -}}
{{- end -}}
