{{/*
arena-common.validate: cross-field checks of a job chart's values (what values.schema.json cannot say: the
schema, generated from arena_helm/chart_values.py, checks every value's own grammar). Every regular expression
here is one of arena_helm/k8s.py's (tests/unit/test_template_grammars.py checks it).
It collects EVERY problem, then fails once with all of them, so a user fixes the values in one go.
Renders nothing when the values are fine.

Takes a dict:
  root      the job chart's root context
  replicas  list of dicts {key: <values key>, type: <replica type in the job spec>} of the chart's
            replica blocks
  problems  list of chart-specific problems found by the job chart itself (may be empty)
*/}}
{{- define "arena-common.validate" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $problems := list -}}
{{- range .problems }}{{ $problems = append $problems . }}{{ end -}}
{{- $name := include "arena-common.name" $root -}}

{{- /* The job name: the operator makes a Service per pod named <job>-<type>-<index>, a DNS-1035 label. */ -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name) -}}
{{- $problems = append $problems (printf "the job name %q (nameOverride, else the release name) must start with a letter and contain only lower-case letters, digits and '-'" $name) -}}
{{- end -}}

{{- /* Replicas: an image for each, service names that fit, GPUs through gpus. */ -}}
{{- $total := 0 -}}
{{- $longestService := "" -}}
{{- range .replicas -}}
{{- $r := index $v .key | default dict -}}
{{- $n := int (default 0 $r.replicas) -}}
{{- $total = add $total $n -}}
{{- if gt $n 0 -}}
{{- if not (default $v.image $r.image) -}}
{{- $problems = append $problems (printf "%s.replicas is %d but no image is set: set image (or %s.image)" .key $n .key) -}}
{{- end -}}
{{- $service := printf "%s-%s-%d" $name (lower .type) (sub $n 1) -}}
{{- if gt (len $service) (len $longestService) }}{{ $longestService = $service }}{{ end -}}
{{- end -}}
{{- if hasKey (default dict $r.devices) "nvidia.com/gpu" -}}
{{- $problems = append $problems (printf "%s.devices sets nvidia.com/gpu: use %s.gpus for NVIDIA GPUs" .key .key) -}}
{{- end -}}
{{- end -}}
{{- if gt (len $longestService) 63 -}}
{{- $problems = append $problems (printf "the job name %q is too long: the operator names the pods' services like %q (%d characters, at most 63)" $name $longestService (len $longestService)) -}}
{{- end -}}
{{- if eq (int $total) 0 -}}
{{- $problems = append $problems "no replicas: every replica type has replicas 0" -}}
{{- end -}}
{{- with $v.runPolicy -}}
{{- with .schedulingPolicy -}}
{{- if and (hasKey . "minAvailable") (gt (int .minAvailable) (int $total)) -}}
{{- $problems = append $problems (printf "runPolicy.schedulingPolicy.minAvailable is %d but the job has only %d pods" (int .minAvailable) (int $total)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* Code sync. */ -}}
{{- $cs := $v.codeSync | default dict -}}
{{- if $cs.enabled -}}
{{- if not $cs.repo -}}
{{- $problems = append $problems "codeSync.enabled is true but codeSync.repo is empty" -}}
{{- else -}}
{{- if regexMatch "^[A-Za-z][-+.A-Za-z0-9]*://[^/@:]*:[^/@]*@" $cs.repo -}}
{{- $problems = append $problems "codeSync.repo must not carry credentials (user:password@): put them in a Secret and set codeSync.secretName" -}}
{{- end -}}
{{- if not (include "arena-common.codeSyncLink" $root) -}}
{{- $problems = append $problems (printf "codeSync.linkName is empty and cannot be derived from codeSync.repo %q" $cs.repo) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* Mount paths must be unique within the training container. */ -}}
{{- $mounts := dict -}}
{{- $wanted := list -}}
{{- if $v.shmSize }}{{ $wanted = append $wanted (list "/dev/shm" "shmSize (/dev/shm)") }}{{ end -}}
{{- range $i, $d := $v.data }}{{ $wanted = append $wanted (list $d.mountPath (printf "data[%d]" $i)) }}{{ end -}}
{{- range $i, $h := $v.hostPaths }}{{ $wanted = append $wanted (list $h.mountPath (printf "hostPaths[%d]" $i)) }}{{ end -}}
{{- if $cs.enabled }}{{ $wanted = append $wanted (list $cs.root "codeSync.root") }}{{ end -}}
{{- range $i, $s := $v.secretVolumes }}{{ $wanted = append $wanted (list $s.mountPath (printf "secretVolumes[%d]" $i)) }}{{ end -}}
{{- range $wanted -}}
{{- $path := clean (index . 0) -}}
{{- if hasKey $mounts $path -}}
{{- $problems = append $problems (printf "mountPath %s is used twice: by %s and by %s" $path (get $mounts $path) (index . 1)) -}}
{{- else -}}
{{- $_ := set $mounts $path (index . 1) -}}
{{- end -}}
{{- end -}}

{{- /* Environment variables. */ -}}
{{- $envNames := dict -}}
{{- range $i, $e := $v.env -}}
{{- if eq $e.name "NVIDIA_VISIBLE_DEVICES" -}}
{{- $problems = append $problems (printf "env[%d]: NVIDIA_VISIBLE_DEVICES is managed by the chart (void where a replica has no gpus): request GPUs with <replica>.gpus" $i) -}}
{{- else if hasKey $envNames $e.name -}}
{{- $problems = append $problems (printf "env[%d]: %q is defined twice (first in env[%d])" $i $e.name (get $envNames $e.name)) -}}
{{- else -}}
{{- $_ := set $envNames $e.name $i -}}
{{- end -}}
{{- end -}}

{{- /* Extra labels: not the ones the chart sets (values.schema.json checks the label grammar). */ -}}
{{- $reserved := include "arena-common.reservedLabels" $root | fromJsonArray -}}
{{- range $key, $value := $v.labels -}}
{{- if has $key $reserved -}}
{{- $problems = append $problems (printf "labels: %q is set by the chart and cannot be overridden" $key) -}}
{{- end -}}
{{- end -}}

{{- /* TensorBoard is named after the job: <job name>-tensorboard. Its own problems are listed here too
(the subchart leaves them to its job chart), so that one failure names them all. */ -}}
{{- with $root.Subcharts -}}
{{- with .tensorboard -}}
{{- range include "tensorboard.problems" . | fromJsonArray -}}
{{- $problems = append $problems (printf "tensorboard: %s" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $tb := $v.tensorboard | default dict -}}
{{- if $tb.enabled -}}
{{- $tbName := default $root.Release.Name $tb.nameOverride -}}
{{- if ne $tbName $name -}}
{{- $problems = append $problems (printf "tensorboard.nameOverride (%q) must name the job (%q) so that TensorBoard is %s-tensorboard: set tensorboard.nameOverride to the job's nameOverride" (default "" $tb.nameOverride) $name $name) -}}
{{- end -}}
{{- end -}}

{{- if $problems -}}
{{- fail (printf "the values of chart %s have %d problem(s):\n  - %s" $root.Chart.Name (len $problems) (join "\n  - " $problems)) -}}
{{- end -}}
{{- end -}}
