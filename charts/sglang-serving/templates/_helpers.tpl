{{/*
Helpers of the sglang-serving chart: what the shared serving templates of arena-common (_serving.tpl) render for
it: `python3 -m sglang.launch_server --model-path MODEL` with its arguments, the port http, and the probes on
SGLang's /health.
*/}}

{{/*
sglang-serving.serving: the dict arena-common.servingDeployment and arena-common.servingService take, as JSON.
The tensor parallel size is .Values.tensorParallelSize, else the GPUs (at least 1).
*/}}
{{- define "sglang-serving.serving" -}}
{{- $v := .Values -}}
{{- $model := required "model: the model to serve is not set (set model: a Hugging Face id or a path)" $v.model -}}
{{- $tp := int (default (max 1 (int $v.gpus)) $v.tensorParallelSize) -}}
{{- $args := list "-m" "sglang.launch_server" "--model-path" $model "--host" "0.0.0.0" "--port" (toString (int $v.port)) "--tp-size" (toString $tp) -}}
{{- with $v.contextLength }}{{ $args = concat $args (list "--context-length" (toString (int .))) }}{{ end -}}
{{- with $v.memFractionStatic }}{{ $args = concat $args (list "--mem-fraction-static" (toString .)) }}{{ end -}}
{{- $args = concat $args $v.extraArgs -}}
{{- $health := dict "httpGet" (dict "path" "/health" "port" "http") -}}
{{- $probes := dict
      "startupProbe" (merge (dict "periodSeconds" 10 "failureThreshold" (div (int $v.startupTimeoutSeconds) 10)) $health)
      "readinessProbe" (merge (dict "periodSeconds" 5) $health)
      "livenessProbe" (merge (dict "periodSeconds" 10 "failureThreshold" 3) $health) -}}
{{- toJson (dict "type" "sglang-serving" "command" (list "python3") "args" $args
      "ports" (list (dict "name" "http" "port" (int $v.port))) "probes" $probes) -}}
{{- end -}}
