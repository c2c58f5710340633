{{/*
Helpers of the tfjob chart. The shared pieces (names, labels, containers, pod specs, runPolicy, the
cross-field checks) are the arena-common library chart's "arena-common.*" templates.
*/}}

{{/*
tfjob.replicaTypes: the replica blocks of a TFJob, in the order they are rendered, as a JSON list of
{key: <values key>, type: <tfReplicaSpecs key>}.
*/}}
{{- define "tfjob.replicaTypes" -}}
{{- list (dict "key" "chief" "type" "Chief") (dict "key" "ps" "type" "PS") (dict "key" "worker" "type" "Worker") (dict "key" "evaluator" "type" "Evaluator") | toJson -}}
{{- end -}}

{{/*
tfjob.container: what the training-operator expects of a TFJob container: name "tensorflow" and a port
named "tfjob-port".
*/}}
{{- define "tfjob.container" -}}
{{- dict "name" "tensorflow" "portName" "tfjob-port" | toJson -}}
{{- end -}}

{{/*
tfjob.problems: TFJob-specific checks, as a JSON list of messages (arena-common.validate reports them with
the shared ones).
*/}}
{{- define "tfjob.problems" -}}
{{- $v := .Values -}}
{{- $problems := list -}}
{{- if and (gt (int $v.ps.replicas) 0) (eq (int $v.worker.replicas) 0) -}}
{{- $problems = append $problems "ps.replicas is set but worker.replicas is 0: parameter servers need workers" -}}
{{- end -}}
{{- if and (eq $v.successPolicy "AllWorkers") (eq (int $v.worker.replicas) 0) -}}
{{- $problems = append $problems "successPolicy AllWorkers needs worker.replicas > 0" -}}
{{- end -}}
{{- if and (gt (int $v.evaluator.replicas) 0) (eq (add (int $v.chief.replicas) (int $v.worker.replicas)) 0) -}}
{{- $problems = append $problems "evaluator.replicas is set but there is no chief or worker to evaluate" -}}
{{- end -}}
{{- toJson $problems -}}
{{- end -}}

{{/*
tfjob.jobInfo: Arena's job info of the rendered TFJob as JSON {workers, gpus, requestGPUs} (see arena-common's
_jobinfo.tpl). workers and gpus are Arena's --workers and --gpus: worker.replicas and worker.gpus. Without
workers, gpus is the chief's, and workers is 0 unless the job is in Arena's standalone mode (the annotation
arena.kubeflow.org/disable-tf-config "true": the one worker runs as the chief), where it is chief.replicas.
requestGPUs counts chief, worker and evaluator, not the PS (submit_tfjob.go addRequestGPUsToAnnotation).
*/}}
{{- define "tfjob.jobInfo" -}}
{{- $v := .Values -}}
{{- $standalone := eq (toString (index (default dict $v.annotations) "arena.kubeflow.org/disable-tf-config")) "true" -}}
{{- $workers := int $v.worker.replicas -}}
{{- $block := $v.worker -}}
{{- if eq $workers 0 -}}
{{- $block = $v.chief -}}
{{- if $standalone }}{{ $workers = int $v.chief.replicas }}{{ end -}}
{{- end -}}
{{- $requestGPUs := include "arena-common.requestGPUs" (dict "root" . "keys" (list "chief" "worker" "evaluator")) -}}
{{- dict "workers" $workers "gpus" (int (include "arena-common.gpus" $block)) "requestGPUs" (int $requestGPUs) | toJson -}}
{{- end -}}
