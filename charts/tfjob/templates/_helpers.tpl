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
