{{/*
Helpers of the triton-serving chart: what the shared serving templates of arena-common (_serving.tpl) render for
it: tritonserver with its arguments (as Arena's triton chart runs it, without its shell), the ports http, grpc
and metrics, and the probes on Triton's health endpoints.
*/}}

{{/*
triton-serving.serving: the dict arena-common.servingDeployment and arena-common.servingService take, as JSON.
--load-model only works under explicit model control, so a list of models to load sets that mode too.
*/}}
{{- define "triton-serving.serving" -}}
{{- $v := .Values -}}
{{- $repo := required "modelRepository: where the models are is not set (set modelRepository)" $v.modelRepository -}}
{{- if and $v.backend (lt (int $v.gpus) 1) -}}
{{- fail (printf "backend: Triton's %s backend runs on NVIDIA GPUs: set gpus to 1 or more" $v.backend) -}}
{{- end -}}
{{- $args := list (printf "--model-repository=%s" $repo) (printf "--http-port=%d" (int $v.httpPort)) (printf "--grpc-port=%d" (int $v.grpcPort)) (printf "--allow-metrics=%t" $v.allowMetrics) -}}
{{- if $v.allowMetrics }}{{ $args = append $args (printf "--metrics-port=%d" (int $v.metricsPort)) }}{{ end -}}
{{- if $v.loadModels -}}
{{- $args = append $args "--model-control-mode=explicit" -}}
{{- range $v.loadModels }}{{ $args = append $args (printf "--load-model=%s" .) }}{{ end -}}
{{- end -}}
{{- $args = concat $args $v.extraArgs -}}
{{- $ports := list (dict "name" "http" "port" (int $v.httpPort)) (dict "name" "grpc" "port" (int $v.grpcPort)) -}}
{{- if $v.allowMetrics }}{{ $ports = append $ports (dict "name" "metrics" "port" (int $v.metricsPort)) }}{{ end -}}
{{- $live := dict "httpGet" (dict "path" "/v2/health/live" "port" "http") -}}
{{- $probes := dict
      "startupProbe" (merge (dict "periodSeconds" 10 "failureThreshold" (div (int $v.startupTimeoutSeconds) 10)) $live)
      "readinessProbe" (dict "httpGet" (dict "path" "/v2/health/ready" "port" "http") "periodSeconds" 5)
      "livenessProbe" (merge (dict "periodSeconds" 10 "failureThreshold" 3) $live) -}}
{{- toJson (dict "type" "triton-serving" "command" (list "tritonserver") "args" $args "ports" $ports
      "probes" $probes) -}}
{{- end -}}

{{/*
triton-serving.image: .Values.image, else the image of the backend.
*/}}
{{- define "triton-serving.image" -}}
{{- if .Values.image -}}
{{- .Values.image -}}
{{- else if eq .Values.backend "vllm" -}}
{{- .Values.images.vllm -}}
{{- else if eq .Values.backend "trt-llm" -}}
{{- .Values.images.trtLlm -}}
{{- else -}}
{{- .Values.images.standard -}}
{{- end -}}
{{- end -}}
