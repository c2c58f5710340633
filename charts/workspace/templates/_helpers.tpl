{{/*
Helpers of the workspace chart: names, labels, and the command of each workspace type with its idle stop.
*/}}

{{/*
workspace.name: <nameOverride or release name>.
*/}}
{{- define "workspace.name" -}}
{{- include "arena-common.name" . -}}
{{- end -}}

{{/*
workspace.labels: every object's labels (arena-common's, the component and the workspace type; the Job's
pod adds the run, job.yaml). A user's labels may set none of these.
*/}}
{{- define "workspace.labels" -}}
{{- include "arena-common.refuseOwnLabels" (dict "root" . "owned" (list "app.kubernetes.io/component" "arena-helm.kubeflow.org/workspace-type" "arena-helm.kubeflow.org/workspace-run")) -}}
{{ include "arena-common.labels" . }}
app.kubernetes.io/component: workspace
arena-helm.kubeflow.org/workspace-type: {{ .Values.type | quote }}
{{- end -}}

{{/*
workspace.selectorLabels: what finds the workspace's pod (the Service's selector).
*/}}
{{- define "workspace.selectorLabels" -}}
{{ include "arena-common.selectorLabels" . }}
app.kubernetes.io/component: workspace
{{- end -}}

{{/*
workspace.port: the server's port: .Values.port, else the type's (jupyter 8888, code-server 8080); 0 for a
shell, which has no server.
*/}}
{{- define "workspace.port" -}}
{{- if .Values.port -}}
{{- int .Values.port -}}
{{- else -}}
{{- index (dict "jupyter" 8888 "code-server" 8080 "shell" 0) .Values.type -}}
{{- end -}}
{{- end -}}

{{/*
workspace.home: where the home is mounted: home.mountPath, else the type's user's home.
*/}}
{{- define "workspace.home" -}}
{{- .Values.home.mountPath | default (index (dict "jupyter" "/home/jovyan" "code-server" "/home/coder" "shell" "/root") .Values.type) -}}
{{- end -}}

{{/*
workspace.idleWatch: the POSIX sh loop that ends a shell workspace after idleStopSeconds without activity.
Activity is any process in the container but the loop itself: a `kubectl exec` (arena-helm workspace
attach) session and whatever it left running. The loop starts no process of its own while it looks ([ is
a builtin; its sleep has been waited for), so the container's PID namespace holds only the loop when nobody
works. Exit 0 once idle: the pod completes, the Job is Complete and its GPUs are free; SIGTERM (the pod
deleted by workspace stop) ends it at once (as PID 1 it would ignore it). $1: idleStopSeconds (0: never).
*/}}
{{- define "workspace.idleWatch" -}}
idle="$1"; step=10; quiet=0
if [ "$idle" -gt 0 ] && [ "$idle" -lt "$step" ]; then step="$idle"; fi
trap 'exit 0' TERM
echo "workspace: a shell (arena-helm workspace attach); idle stop after ${idle}s (0: never)"
while :; do
  sleep "$step" & wait $!
  busy=
  for d in /proc/[0-9]*; do
    [ "${d#/proc/}" = "$$" ] && continue
    [ -r "$d/stat" ] && busy=1 && break
  done
  if [ -n "$busy" ]; then quiet=0; else quiet=$((quiet + step)); fi
  if [ "$idle" -gt 0 ] && [ "$quiet" -ge "$idle" ]; then
    echo "workspace: idle for ${quiet}s: stopping"
    exit 0
  fi
done
{{- end -}}

{{/*
workspace.command: the container's command as a JSON list, "" to keep the image's entrypoint: .Values.command,
else a shell's idle watcher; Jupyter and code-server keep their images' entrypoints (tini and start.sh;
entrypoint.sh and dumb-init) and get workspace.args.
*/}}
{{- define "workspace.command" -}}
{{- if .Values.command -}}
{{- toJson .Values.command -}}
{{- else if eq .Values.type "shell" -}}
{{- toJson (list "sh" "-c" (include "workspace.idleWatch" .) "idle-watch" (toString (int .Values.idleStopSeconds))) -}}
{{- end -}}
{{- end -}}

{{/*
workspace.args: the server's arguments as a JSON list ("" for none), each server stopping itself after
idleStopSeconds without activity (exit 0):
- jupyter (the Docker Stacks' CMD, start-notebook.py, run by their entrypoint): idle kernels and terminals are
  culled after idleStopSeconds (connected ones too), and the server shuts down idleStopSeconds after the last
  activity with no kernel left (jupyter_server's ServerApp.shutdown_no_activity_timeout, checked once a
  minute);
- code-server (after its image's entrypoint.sh --bind-addr 0.0.0.0:8080 .): --idle-timeout-seconds (code-server
  4.106.0 and later; more than 60), --auth password when a tokenSecret gives PASSWORD.
*/}}
{{- define "workspace.args" -}}
{{- $v := .Values -}}
{{- $idle := int $v.idleStopSeconds -}}
{{- $port := include "workspace.port" . -}}
{{- if $v.command -}}
{{- else if eq $v.type "jupyter" -}}
{{- $args := list "start-notebook.py" "--ServerApp.ip=0.0.0.0" (printf "--ServerApp.port=%s" $port) "--ServerApp.open_browser=False" (printf "--ServerApp.root_dir=%s" (include "workspace.home" .)) -}}
{{- if gt $idle 0 -}}
{{- $interval := min 60 $idle -}}
{{- $args = concat $args (list (printf "--ServerApp.shutdown_no_activity_timeout=%d" $idle) (printf "--MappingKernelManager.cull_idle_timeout=%d" $idle) (printf "--MappingKernelManager.cull_interval=%d" $interval) "--MappingKernelManager.cull_connected=True" (printf "--TerminalManager.cull_inactive_timeout=%d" $idle) (printf "--TerminalManager.cull_interval=%d" $interval)) -}}
{{- end -}}
{{- toJson $args -}}
{{- else if eq $v.type "code-server" -}}
{{- if and (gt $idle 0) (le $idle 60) -}}
{{- fail (printf "idleStopSeconds %d: code-server's --idle-timeout-seconds must be more than 60 (or 0: never)" $idle) -}}
{{- end -}}
{{- $args := list "--bind-addr" (printf "0.0.0.0:%s" $port) "--auth" (ternary "password" "none" (not (empty $v.tokenSecret))) "--disable-telemetry" -}}
{{- if gt $idle 0 -}}
{{- $args = concat $args (list "--idle-timeout-seconds" (toString $idle)) -}}
{{- end -}}
{{- toJson $args -}}
{{- end -}}
{{- end -}}

{{/*
workspace.tokenEnv: the variable that carries the token Secret's key `token` into the server: JUPYTER_TOKEN
(jupyter_server's IdentityProvider reads it) or PASSWORD (code-server); none for a shell.
*/}}
{{- define "workspace.tokenEnv" -}}
{{- index (dict "jupyter" "JUPYTER_TOKEN" "code-server" "PASSWORD" "shell" "") .Values.type -}}
{{- end -}}
