{{/*
Helpers of the kserve chart: what the shared serving templates of arena-common (_serving.tpl) render for it.
*/}}

{{/*
kserve.serving: the dict arena-common.servingPodSpec and arena-common.servingContainer take, as JSON: the
container kserve-container (KServe's name for the predictor's container), its command as [shell, -c, command]
(Arena's), its port http1 (a name Knative accepts too), and with a model no image of its own unless one is set
(the runtime has it).
*/}}
{{- define "kserve.serving" -}}
{{- $v := .Values -}}
{{- if not (or $v.modelFormat.name $v.image) -}}
{{- fail "modelFormat.name / image: set the model's format (and storageUri), or the image of your container" -}}
{{- end -}}
{{- $command := list -}}
{{- if $v.command }}{{ $command = list $v.shell "-c" $v.command }}{{ end -}}
{{- $ports := list -}}
{{- if gt (int $v.port) 0 }}{{ $ports = list (dict "name" "http1" "port" (int $v.port)) }}{{ end -}}
{{- toJson (dict "type" "kserve" "name" "kserve-container" "command" $command "ports" $ports
      "imageOptional" (not (empty $v.modelFormat.name))
      "containersKey" (ternary "none" "containers" (not (empty $v.modelFormat.name)))) -}}
{{- end -}}
