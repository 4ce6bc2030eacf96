package kubernetes_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The plan the offset Job keeps and the steps after it read.
const (
	planStoreEnv = "MM2CUTOVER_PLAN_CONFIGMAP"
	cliBinary    = "/cutover"
)

// planFlowProblems checks the operator's flow after the offset Job, as the
// manifests set it up: the Job keeps its plan in a ConfigMap the
// manifests create empty, through a Role that allows reading and replacing
// that one object and nothing else; the resume Job runs `cutover resume
// -yes` then `cutover verify` from the same image on that plan, mounted as
// a required volume, with the offset Job's settings and credentials; and
// applying the cutover directory never resumes.
func planFlowProblems(m *manifests, t *testing.T) []string {
	var p []string
	job, resume := m.job(), m.resumeJob()
	env := m.environment(t, m.offsetJob(t))
	store := env[planStoreEnv].value
	if store == "" {
		return []string{fmt.Sprintf("the offset Job does not set %s: the plan it builds would be kept nowhere", planStoreEnv)}
	}
	if cm, ok := m.configMaps[store]; !ok {
		p = append(p, fmt.Sprintf("no manifest creates the plan ConfigMap %s (the Job's Role cannot create it)", store))
	} else if len(cm.Data) > 0 || len(cm.BinaryData) > 0 {
		p = append(p, fmt.Sprintf("ConfigMap %s has data: applying the manifests again could replace a kept plan", store))
	}
	sa := job.Spec.Template.Spec.ServiceAccountName
	var bound []string
	for _, rb := range m.roleBindings {
		for _, s := range rb.Subjects {
			if s.Kind == "ServiceAccount" && s.Name == sa {
				bound = append(bound, rb.RoleRef.Name)
			}
		}
	}
	if len(bound) != 1 {
		p = append(p, fmt.Sprintf("service account %s is bound to roles %v, want exactly one", sa, bound))
	}
	for _, r := range m.roles {
		if !slices.Contains(bound, r.Name) {
			continue
		}
		for i, rule := range r.Rules {
			ok := slices.Equal(rule.APIGroups, []string{""}) && slices.Equal(rule.Resources, []string{"configmaps"}) &&
				slices.Equal(rule.ResourceNames, []string{store}) && len(rule.NonResourceURLs) == 0
			for _, v := range rule.Verbs {
				ok = ok && (v == "get" || v == "update")
			}
			if !ok {
				p = append(p, fmt.Sprintf("Role %s rule %d allows %s: want only get and update on configmaps/%s", r.Name, i, ruleString(rule), store))
			}
		}
	}

	if resume.Spec.BackoffLimit == nil || *resume.Spec.BackoffLimit > 3 {
		p = append(p, "the resume Job retries without bound")
	}
	want := map[string][]string{"resume": {cliBinary, "resume", "-yes"}, "verify": {cliBinary, "verify"}}
	pod := resume.Spec.Template.Spec
	steps := slices.Concat(pod.InitContainers, pod.Containers)
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 1 || pod.InitContainers[0].Name != "resume" || pod.Containers[0].Name != "verify" {
		p = append(p, "the resume Job's pod: want the init container resume, then the container verify")
	}
	jobImage, jobEnv := m.offsetJob(t).Image, m.offsetJob(t).EnvFrom
	for _, c := range steps {
		if w := want[c.Name]; !slices.Equal(c.Command[:min(len(w), len(c.Command))], w) {
			p = append(p, fmt.Sprintf("container %s runs %q, want %q...", c.Name, c.Command, w))
		}
		if c.Image != jobImage {
			p = append(p, fmt.Sprintf("container %s runs image %s, want the offset Job's %s (its /cutover)", c.Name, c.Image, jobImage))
		}
		if !slices.EqualFunc(c.EnvFrom, jobEnv, func(a, b corev1.EnvFromSource) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			p = append(p, fmt.Sprintf("container %s: envFrom differs from the offset Job's: the same settings must reach every step", c.Name))
		}
		cenv := m.environment(t, &c)
		for name, v := range env {
			if v.secretName != "" && (cenv[name].secretName != v.secretName || cenv[name].secretKey != v.secretKey) {
				p = append(p, fmt.Sprintf("container %s: %s not from Secret %s key %s as in the offset Job", c.Name, name, v.secretName, v.secretKey))
			}
		}
		planPath := cenv["MM2CUTOVER_PLAN"].value
		if !mountsConfigMapFile(pod, c, store, planPath) {
			p = append(p, fmt.Sprintf("container %s: MM2CUTOVER_PLAN %q is not plan.json of ConfigMap %s mounted as a required volume", c.Name, planPath, store))
		}
		audit := cenv["MM2CUTOVER_AUDIT"].value
		if !mountsEmptyDir(pod, c, audit) {
			p = append(p, fmt.Sprintf("container %s: MM2CUTOVER_AUDIT %q is not on an emptyDir (verify reads the boundary capture resume records)", c.Name, audit))
		}
	}
	if !failsJob(resume, "resume", 4) || !failsJob(resume, "resume", 2) || failsJob(resume, "resume", 1) {
		p = append(p, "podFailurePolicy: the resume step's refusals (2, 3, 4) must fail the Job at once, its exit 1 be retried")
	}
	if !failsJob(resume, "verify", 1) || !failsJob(resume, "verify", 3) {
		p = append(p, "podFailurePolicy: a failed verify must fail the Job (a retried pod's resume would find the connector RUNNING and refuse)")
	}
	if k := m.kustomizations["cutover"]; k != nil && slices.ContainsFunc(k.Resources, func(r string) bool { return strings.HasPrefix(r, "resume") }) {
		p = append(p, "cutover/kustomization.yaml includes the resume Job: applying the cutover would resume without approval")
	}
	return p
}

func ruleString(r rbacv1.PolicyRule) string {
	return fmt.Sprintf("%v on %v %v names %v", r.Verbs, r.APIGroups, r.Resources, r.ResourceNames)
}

// mountsConfigMapFile reports whether path is key plan.json of the
// ConfigMap name, mounted in c from a volume that is not optional.
func mountsConfigMapFile(pod corev1.PodSpec, c corev1.Container, name, path string) bool {
	for _, vm := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.ConfigMap != nil && v.ConfigMap.Name == name && path == vm.MountPath+"/"+planKey &&
				(v.ConfigMap.Optional == nil || !*v.ConfigMap.Optional) {
				return true
			}
		}
	}
	return false
}

func mountsEmptyDir(pod corev1.PodSpec, c corev1.Container, path string) bool {
	for _, vm := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.EmptyDir != nil && strings.HasPrefix(path, vm.MountPath+"/") {
				return true
			}
		}
	}
	return false
}

// failsJob reports whether the Job's podFailurePolicy fails it at once when
// container exits with code.
func failsJob(j *batchv1.Job, container string, code int32) bool {
	if j.Spec.PodFailurePolicy == nil {
		return false
	}
	for _, r := range j.Spec.PodFailurePolicy.Rules {
		e := r.OnExitCodes
		if e == nil || (e.ContainerName != nil && *e.ContainerName != container) {
			continue
		}
		in := slices.Contains(e.Values, code)
		if (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) == in {
			return r.Action == batchv1.PodFailurePolicyActionFailJob
		}
	}
	return false
}

func TestPlanFlow(t *testing.T) {
	if p := planFlowProblems(load(t), t); len(p) > 0 {
		t.Errorf("the flow after the offset Job:\n%s", strings.Join(p, "\n"))
	}
}

// TestPlanFlowRejectsMutations: each way of breaking the flow fails the check.
func TestPlanFlowRejectsMutations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(m *manifests)
		want   string
	}{
		{"Role may create", func(m *manifests) { m.roles[0].Rules[0].Verbs = append(m.roles[0].Rules[0].Verbs, "create") }, "want only get and update"},
		{"Role on every ConfigMap", func(m *manifests) { m.roles[0].Rules[0].ResourceNames = nil }, "want only get and update"},
		{"Role reads Secrets", func(m *manifests) { m.roles[0].Rules[0].Resources = []string{"configmaps", "secrets"} }, "want only get and update"},
		{"plan ConfigMap with data", func(m *manifests) { m.configMaps["mm2cutover-plan"].Data = map[string]string{"plan.json": "{}"} }, "could replace a kept plan"},
		{"resume without -yes", func(m *manifests) {
			m.resumeJob().Spec.Template.Spec.InitContainers[0].Command = []string{cliBinary, "resume"}
		}, "want [\"/cutover\" \"resume\" \"-yes\"]"},
		{"plan optional", func(m *manifests) {
			for i := range m.resumeJob().Spec.Template.Spec.Volumes {
				if v := &m.resumeJob().Spec.Template.Spec.Volumes[i]; v.ConfigMap != nil && v.ConfigMap.Name == "mm2cutover-plan" {
					v.ConfigMap.Optional = new(true)
				}
			}
		}, "required volume"},
		{"verify retried", func(m *manifests) {
			m.resumeJob().Spec.PodFailurePolicy.Rules = m.resumeJob().Spec.PodFailurePolicy.Rules[:1]
		}, "a failed verify must fail the Job"},
		{"resume in the cutover kustomization", func(m *manifests) {
			m.kustomizations["cutover"].Resources = append(m.kustomizations["cutover"].Resources, "resume")
		}, "would resume without approval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := load(t)
			tc.mutate(m)
			p := strings.Join(planFlowProblems(m, t), "\n")
			if !strings.Contains(p, tc.want) {
				t.Errorf("got problems %q, want one containing %q", p, tc.want)
			}
		})
	}
}
