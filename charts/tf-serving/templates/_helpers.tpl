{{/*
Helpers of the tf-serving chart: what the shared serving templates of arena-common (_serving.tpl) render for
it: tensorflow_model_server with its arguments (as Arena's tfserving chart runs it), the ports grpc and restful,
and a TCP readiness probe on the gRPC port (TensorFlow Serving opens it once the models are loaded).
*/}}

{{/*
tf-serving.serving: the dict arena-common.servingDeployment and arena-common.servingService take, as JSON.
*/}}
{{- define "tf-serving.serving" -}}
{{- $v := .Values -}}
{{- if not (or $v.modelPath $v.modelConfigFile) -}}
{{- fail "modelPath: where the model is is not set (set modelPath, or modelConfigFile)" -}}
{{- end -}}
{{- $args := list (printf "--port=%d" (int $v.port)) -}}
{{- if gt (int $v.restfulPort) 0 }}{{ $args = append $args (printf "--rest_api_port=%d" (int $v.restfulPort)) }}{{ end -}}
{{- if $v.modelConfigFile -}}
{{- $args = append $args (printf "--model_config_file=%s" $v.modelConfigFile) -}}
{{- else -}}
{{- $args = concat $args (list (printf "--model_name=%s" ($v.modelName | default (include "arena-common.servingName" .))) (printf "--model_base_path=%s" $v.modelPath)) -}}
{{- end -}}
{{- with $v.monitoringConfigFile }}{{ $args = append $args (printf "--monitoring_config_file=%s" .) }}{{ end -}}
{{- $args = concat $args $v.extraArgs -}}
{{- $ports := list (dict "name" "grpc" "port" (int $v.port)) -}}
{{- if gt (int $v.restfulPort) 0 }}{{ $ports = append $ports (dict "name" "restful" "port" (int $v.restfulPort)) }}{{ end -}}
{{- $probes := dict "readinessProbe" (dict "tcpSocket" (dict "port" "grpc") "periodSeconds" 5) -}}
{{- toJson (dict "type" "tf-serving" "command" (list "tensorflow_model_server") "args" $args "ports" $ports
      "probes" $probes) -}}
{{- end -}}

{{/*
tf-serving.image: .Values.image, else the GPU image with GPUs, else the CPU one.
*/}}
{{- define "tf-serving.image" -}}
{{- .Values.image | default (ternary .Values.images.gpu .Values.images.cpu (gt (int .Values.gpus) 0)) -}}
{{- end -}}
