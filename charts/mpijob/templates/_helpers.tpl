{{/*
Helpers of the mpijob chart. The shared pieces (names, labels, containers, pod specs, runPolicy, the
cross-field checks) are the arena-common library chart's "arena-common.*" templates.
*/}}

{{/*
mpijob.replicaTypes: the replica blocks of an MPIJob as a JSON list of
{key: <values key>, type: <mpiReplicaSpecs key>}.
*/}}
{{- define "mpijob.replicaTypes" -}}
{{- list (dict "key" "launcher" "type" "Launcher") (dict "key" "worker" "type" "Worker") | toJson -}}
{{- end -}}

{{/*
mpijob.container: the container of a replica type, as JSON. Both APIs use the container name "mpi" (the
training-operator's v1 MPIJob requires it; v2beta1 takes the first container). Workers without a command
of their own run a keep-alive for the launcher to reach them, as an exec list: sshd in the foreground for
v2beta1 (mpi-operator mounts the SSH keys), `sleep infinity` for v1 (the launcher uses kubectl exec). The v1
launcher keeps its service-account token: kubectl exec needs it. With hostfilePath (v2beta1), the launcher
also mounts mpi-operator's hostfile there (DeepSpeed's launcher reads /job/hostfile).
*/}}
{{- define "mpijob.container" -}}
{{- $v1 := eq (include "mpijob.apiVersion" .root) "v1" -}}
{{- $container := dict "name" "mpi" -}}
{{- if eq .type "Worker" -}}
{{- $_ := set $container "defaultCommand" (ternary (list "sleep" "infinity") (list "/usr/sbin/sshd" "-De") $v1) -}}
{{- else if $v1 -}}
{{- $_ := set $container "keepToken" true -}}
{{- else if .root.Values.hostfilePath -}}
{{- /* mpi-operator v0.8.0 writes the hostfile into the ConfigMap <job>-config (pkg/controller/mpi_job_controller.go
newConfigMap, configSuffix "-config", key "hostfile"); the launcher also gets it at hostfilePath */ -}}
{{- $_ := set $container "volumes" (list (dict "name" "mpi-hostfile" "configMap" (dict "name" (printf "%s-config" (include "arena-common.name" .root)) "items" (list (dict "key" "hostfile" "path" "hostfile"))))) -}}
{{- $_ := set $container "volumeMounts" (list (dict "name" "mpi-hostfile" "mountPath" .root.Values.hostfilePath "subPath" "hostfile" "readOnly" true)) -}}
{{- end -}}
{{- toJson $container -}}
{{- end -}}

{{/*
mpijob.apiVersion: the MPIJob API version to render, v2beta1 or v1. With mpiApiVersion "auto" it is what the
cluster serves (helm install reads the cluster's API discovery into .Capabilities), v2beta1 first; offline
(helm template) the cluster is unknown and auto means v2beta1.
*/}}
{{- define "mpijob.apiVersion" -}}
{{- $v := .Values.mpiApiVersion -}}
{{- if ne $v "auto" -}}
{{- $v -}}
{{- else if .Capabilities.APIVersions.Has "kubeflow.org/v2beta1/MPIJob" -}}
v2beta1
{{- else if .Capabilities.APIVersions.Has "kubeflow.org/v1/MPIJob" -}}
v1
{{- else -}}
v2beta1
{{- end -}}
{{- end -}}

{{/*
mpijob.jobInfo: Arena's job info of the rendered MPIJob as JSON {workers, gpus, requestGPUs} (see
arena-common's _jobinfo.tpl): --workers and --gpus are the worker block's replicas and gpus; requestGPUs
counts every pod (the launcher's gpus too, 0 unless set).
*/}}
{{- define "mpijob.jobInfo" -}}
{{- $v := .Values -}}
{{- $requestGPUs := include "arena-common.requestGPUs" (dict "root" . "keys" (list "launcher" "worker")) -}}
{{- dict "workers" (int $v.worker.replicas) "gpus" (int (include "arena-common.gpus" $v.worker)) "requestGPUs" (int $requestGPUs) | toJson -}}
{{- end -}}
