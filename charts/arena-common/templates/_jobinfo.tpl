{{/*
Arena's job info (kubeflow/arena pkg/argsbuilder/submit.go setJobInfoToEnv, addRequestGPUsToAnnotation): the
annotation requestGPUsOfJobOwner on the job and every pod (arena-common.annotations) and the env workers and
gpus of every training container (arena-common.env). They are computed from the values being rendered, a
user's -f and --set included, so they always say what the rendered pods request.

A job chart that carries them defines "<chart>.jobInfo": its root context -> JSON
  {"workers": <Arena's --workers>, "gpus": <Arena's --gpus>, "requestGPUs": <GPUs of the pods that train>}
as the rendered replica blocks give them, and passes the dict as jobInfo to arena-common.metadata and in the
replica context (arena-common.replicaSpec). A chart without it (trainjob) passes none: no job info is set.
*/}}

{{/*
arena-common.requestGPUs: replicas x gpus summed over the replica blocks named in .keys (values keys), as an
integer string. Takes a dict: root (the job chart's root context), keys.
*/}}
{{- define "arena-common.requestGPUs" -}}
{{- $v := .root.Values -}}
{{- $sum := 0 -}}
{{- range .keys -}}
{{- $r := index $v . | default dict -}}
{{- $sum = add $sum (mul (int (default 0 $r.replicas)) (int (include "arena-common.gpus" $r))) -}}
{{- end -}}
{{- $sum -}}
{{- end -}}

{{/*
arena-common.jobInfoEnv: the env items of Arena's job info (workers, gpus) as a JSON list; [] without job
info. Takes the replica context.
*/}}
{{- define "arena-common.jobInfoEnv" -}}
{{- $env := list -}}
{{- with .jobInfo -}}
{{- $env = list (dict "name" "workers" "value" (toString (int .workers))) (dict "name" "gpus" "value" (toString (int .gpus))) -}}
{{- end -}}
{{- toJson $env -}}
{{- end -}}
