package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
)

// The Ray History Server (KubeRay's historyserver) serves the logs and events that the collector
// sidecars of RayClusters wrote to a bucket, after the clusters are gone. Its objects are those of
// KubeRay's GCS setup (kuberay v1.7.0, historyserver/config/historyserver-gcs.yaml and
// service_account.yaml): a ServiceAccount, bound to a Google service account through Workload
// Identity (historyserver/pkg/storage/gcs/README.md: the cluster must have Workload Identity) and
// allowed to get and list RayClusters; a Deployment of one replica with GCS_BUCKET and
// STORAGE_BACKEND=gcs, serving on 8080; a ClusterIP Service on 30080.

// HistoryServer is what raytpu asks of a History Server.
type HistoryServer struct {
	Namespace, Name string
	// Bucket is the Cloud Storage bucket (its name) the collectors write to.
	Bucket string
	// GoogleServiceAccount is the email of the Google service account that may read the bucket.
	GoogleServiceAccount string
	Image                string
	// CPU and Memory are the server's requests; MemoryLimit its limit.
	CPU, Memory, MemoryLimit string
}

// HistoryServerPort is the Service's port, as KubeRay's manifests expose the server (30080 to the
// container's 8080).
const HistoryServerPort = 30080

const (
	historyServerContainerPort = 8080
	// workloadIdentityAnnotation binds a Kubernetes service account to a Google service account
	// (GKE, "Use Workload Identity Federation for GKE": iam.gke.io/gcp-service-account).
	workloadIdentityAnnotation = "iam.gke.io/gcp-service-account"
	historyServerAppLabel      = "app.kubernetes.io/name"
)

// ErrHistoryServerNotFound is returned (wrapped) when the History Server's Deployment is gone.
var ErrHistoryServerNotFound = errors.New("the History Server is not found")

// historyServerReaderRole is the ClusterRole (cluster-wide, so named after the namespace too)
// that lets the server read RayClusters.
func historyServerReaderRole(h HistoryServer) string {
	return "raytpu-" + h.Namespace + "-" + h.Name + "-raycluster-reader"
}

func historyServerLabels(h HistoryServer) map[string]string {
	return map[string]string{historyServerAppLabel: "historyserver", "app.kubernetes.io/instance": h.Name, "app.kubernetes.io/managed-by": FieldManager}
}

// ApplyHistoryServer creates or updates the History Server's objects by server-side apply.
func (c *Client) ApplyHistoryServer(ctx context.Context, h HistoryServer) error {
	opts := metav1.ApplyOptions{FieldManager: FieldManager, Force: true}
	labels := historyServerLabels(h)
	if err := c.applyBoundServiceAccount(ctx, h.Namespace, h.Name, h.GoogleServiceAccount, labels); err != nil {
		return err
	}
	role := rbacv1ac.ClusterRole(historyServerReaderRole(h)).WithLabels(labels).WithRules(
		rbacv1ac.PolicyRule().WithAPIGroups(RayClusterGroup).WithResources(RayClusterResource).WithVerbs("get", "list"))
	if _, err := c.rbac.ClusterRoles().Apply(ctx, role, opts); err != nil {
		return c.explain(fmt.Errorf("kube: applying ClusterRole %s: %w", historyServerReaderRole(h), err))
	}
	binding := rbacv1ac.ClusterRoleBinding(historyServerReaderRole(h)).WithLabels(labels).
		WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName(h.Name).WithNamespace(h.Namespace)).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("ClusterRole").WithName(historyServerReaderRole(h)))
	if _, err := c.rbac.ClusterRoleBindings().Apply(ctx, binding, opts); err != nil {
		return c.explain(fmt.Errorf("kube: applying ClusterRoleBinding %s: %w", historyServerReaderRole(h), err))
	}
	requests, err := quantities(map[corev1.ResourceName]string{corev1.ResourceCPU: h.CPU, corev1.ResourceMemory: h.Memory})
	if err != nil {
		return fmt.Errorf("kube: the History Server's requests: %w", err)
	}
	limits, err := quantities(map[corev1.ResourceName]string{corev1.ResourceMemory: h.MemoryLimit})
	if err != nil {
		return fmt.Errorf("kube: the History Server's limits: %w", err)
	}
	container := corev1ac.Container().WithName("historyserver").WithImage(h.Image).
		WithEnv(corev1ac.EnvVar().WithName("GCS_BUCKET").WithValue(h.Bucket), corev1ac.EnvVar().WithName("STORAGE_BACKEND").WithValue("gcs")).
		WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(historyServerContainerPort)).
		WithResources(corev1ac.ResourceRequirements().WithRequests(requests))
	if len(limits) > 0 {
		container.Resources.WithLimits(limits)
	}
	// Recreate: the one Pod is replaced, not joined by a second during an update, which a system
	// pool sized for the Ray heads may have no room for.
	deploy := appsv1ac.Deployment(h.Name, h.Namespace).WithLabels(labels).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(1).WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType)).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithServiceAccountName(h.Name).WithContainers(container))))
	if _, err := c.apps.Deployments(h.Namespace).Apply(ctx, deploy, opts); err != nil {
		return c.explain(fmt.Errorf("kube: applying Deployment %s/%s: %w", h.Namespace, h.Name, err))
	}
	svc := corev1ac.Service(h.Name, h.Namespace).WithLabels(labels).WithSpec(corev1ac.ServiceSpec().
		WithType(corev1.ServiceTypeClusterIP).WithSelector(labels).
		WithPorts(corev1ac.ServicePort().WithName("http").WithProtocol(corev1.ProtocolTCP).WithPort(HistoryServerPort).
			WithTargetPort(intstr.FromInt32(historyServerContainerPort))))
	if _, err := c.core.Services(h.Namespace).Apply(ctx, svc, opts); err != nil {
		return c.explain(fmt.Errorf("kube: applying Service %s/%s: %w", h.Namespace, h.Name, err))
	}
	return nil
}

// HistoryServerStatus is the History Server as the cluster has it.
type HistoryServerStatus struct {
	HistoryServer
	// ReadyReplicas is how many of the Deployment's Pods are ready.
	ReadyReplicas int
	// RolledOut says the Deployment's controller has seen its latest spec and its one Pod is of
	// it and ready: a change has reached the server.
	RolledOut bool
	// Waiting says why the server is not ready yet: the newest condition of its Deployment, or a
	// Pod's unschedulable reason.
	Waiting string
}

// GetHistoryServer reads the History Server ns/name back from its Deployment and ServiceAccount.
func (c *Client) GetHistoryServer(ctx context.Context, ns, name string) (HistoryServerStatus, error) {
	d, err := c.apps.Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return HistoryServerStatus{}, fmt.Errorf("kube: Deployment %s/%s: %w", ns, name, ErrHistoryServerNotFound)
	}
	if err != nil {
		return HistoryServerStatus{}, c.explain(fmt.Errorf("kube: reading Deployment %s/%s: %w", ns, name, err))
	}
	st := HistoryServerStatus{HistoryServer: HistoryServer{Namespace: ns, Name: name}, ReadyReplicas: int(d.Status.ReadyReplicas),
		RolledOut: d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == 1 && d.Status.Replicas == 1 && d.Status.ReadyReplicas == 1}
	for _, ct := range d.Spec.Template.Spec.Containers {
		if ct.Name != "historyserver" {
			continue
		}
		st.Image = ct.Image
		for _, e := range ct.Env {
			if e.Name == "GCS_BUCKET" {
				st.Bucket = e.Value
			}
		}
		st.CPU, st.Memory = quantity(ct.Resources.Requests, corev1.ResourceCPU), quantity(ct.Resources.Requests, corev1.ResourceMemory)
		st.MemoryLimit = quantity(ct.Resources.Limits, corev1.ResourceMemory)
	}
	st.Waiting = deploymentWaiting(d)
	if !st.RolledOut {
		// A Pod that cannot be scheduled says more than the Deployment's conditions do.
		pods, err := c.core.Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
		if err != nil {
			return HistoryServerStatus{}, c.explain(fmt.Errorf("kube: listing the Pods of %s/%s: %w", ns, name, err))
		}
		for _, p := range pods.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
					st.Waiting = "its Pod " + p.Name + " cannot be scheduled: " + cond.Message
				}
			}
		}
	}
	sa, err := c.core.ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		st.GoogleServiceAccount = sa.Annotations[workloadIdentityAnnotation]
	case !apierrors.IsNotFound(err):
		return HistoryServerStatus{}, c.explain(fmt.Errorf("kube: reading ServiceAccount %s/%s: %w", ns, name, err))
	}
	return st, nil
}

// quantities parses the quantities given, leaving out empty ones.
func quantities(in map[corev1.ResourceName]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for name, text := range in {
		if text == "" {
			continue
		}
		q, err := resource.ParseQuantity(text)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", name, text, err)
		}
		out[name] = q
	}
	return out, nil
}

func quantity(l corev1.ResourceList, name corev1.ResourceName) string {
	if q, ok := l[name]; ok {
		return q.String()
	}
	return ""
}

// deploymentWaiting is why d has no ready replica of its latest spec.
func deploymentWaiting(d *appsv1.Deployment) string {
	for _, cond := range d.Status.Conditions {
		if cond.Status != corev1.ConditionTrue && cond.Message != "" {
			return cond.Message
		}
	}
	return "its Deployment has " + strconv.Itoa(int(d.Status.Replicas)) + " Pods and none is ready"
}

// DeleteHistoryServer deletes the History Server's objects; those already gone are skipped.
func (c *Client) DeleteHistoryServer(ctx context.Context, ns, name string) error {
	h := HistoryServer{Namespace: ns, Name: name}
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	// In the reverse of the order ApplyHistoryServer makes them in.
	steps := []struct {
		what string
		del  func() error
	}{
		{"Service", func() error { return c.core.Services(ns).Delete(ctx, name, opts) }},
		{"Deployment", func() error { return c.apps.Deployments(ns).Delete(ctx, name, opts) }},
		{"ClusterRoleBinding", func() error { return c.rbac.ClusterRoleBindings().Delete(ctx, historyServerReaderRole(h), opts) }},
		{"ClusterRole", func() error { return c.rbac.ClusterRoles().Delete(ctx, historyServerReaderRole(h), opts) }},
		{"ServiceAccount", func() error { return c.core.ServiceAccounts(ns).Delete(ctx, name, opts) }},
	}
	for _, s := range steps {
		if err := s.del(); err != nil && !apierrors.IsNotFound(err) {
			return c.explain(fmt.Errorf("kube: deleting the History Server's %s (%s/%s): %w", s.what, ns, name, err))
		}
	}
	return nil
}

// WaitHistoryServerReady waits until the History Server ns/name has rolled out: one ready Pod of
// its latest spec. A timeout says what the last read that completed found (the last read, cut short
// by the deadline, often does not).
func (c *Client) WaitHistoryServerReady(ctx context.Context, ns, name string, poll time.Duration) (HistoryServerStatus, error) {
	var (
		last HistoryServerStatus
		read bool
	)
	err := waitFor(ctx, poll, func(ctx context.Context) (bool, error) {
		st, err := c.GetHistoryServer(ctx, ns, name)
		if err != nil {
			return false, err
		}
		last, read = st, true
		return st.RolledOut, nil
	}, func(waited time.Duration) string {
		if !read {
			return fmt.Sprintf("the History Server %s/%s could not be read in %s", ns, name, waited)
		}
		return fmt.Sprintf("the History Server %s/%s has no ready Pod of its latest spec after %s (%s)", ns, name, waited, last.Waiting)
	})
	return last, err
}
