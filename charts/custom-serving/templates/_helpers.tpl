{{/*
Helpers of the custom-serving chart: what the shared serving templates of arena-common (_serving.tpl) render
for it: the user's command and ports.
*/}}

{{/*
custom-serving.serving: the dict arena-common.servingDeployment and arena-common.servingService take, as JSON:
the command [shell, -c, command] (none: the image's entrypoint), the ports set (grpc, restful, metrics) and the
probes set.
*/}}
{{- define "custom-serving.serving" -}}
{{- $ports := list -}}
{{- range $name := list "grpc" "restful" "metrics" -}}
{{- $port := int (index $.Values.ports $name) -}}
{{- if gt $port 0 -}}
{{- $ports = append $ports (dict "name" $name "port" $port) -}}
{{- end -}}
{{- end -}}
{{- $command := list -}}
{{- if .Values.command }}{{ $command = list .Values.shell "-c" .Values.command }}{{ end -}}
{{- toJson (dict "type" "custom-serving" "command" $command "args" list "ports" $ports "probes" .Values.probes) -}}
{{- end -}}
