package nodeagent

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// What the kubelet and the node lifecycle controller make of a Pod (agent.go says which parts),
// and the Pod addresses of each node's /24.

func podTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

func nodeIsReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// NodeInternalIP is the node's InternalIP address, the hostIP of its Pods; "" when it has none.
func NodeInternalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// setPodCondition sets a condition, keeping its transition time when the status is unchanged.
func setPodCondition(st *corev1.PodStatus, typ corev1.PodConditionType, status corev1.ConditionStatus, reason, message string) {
	now := metav1.Now()
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: now})
}

// startedPod is the Pod as a kubelet reports it once every container runs.
func (a *Agent) startedPod(pod *corev1.Pod, node *corev1.Node) (*corev1.Pod, error) {
	hostIP := NodeInternalIP(node)
	podIP := hostIP
	if !pod.Spec.HostNetwork {
		var err error
		if podIP, err = a.allocIP(node.Name, pod.UID); err != nil {
			return nil, err
		}
	}
	now := metav1.Now()
	p := pod.DeepCopy()
	st := &p.Status
	st.Phase = corev1.PodRunning
	st.HostIP, st.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	st.PodIP, st.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(st, c, corev1.ConditionTrue, "", "")
	}
	started := true
	st.InitContainerStatuses = nil
	for _, c := range p.Spec.InitContainers {
		cs := containerStatus(c, p.UID)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			// A sidecar keeps running.
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
			cs.Started = &started
		} else {
			cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: cs.ContainerID}
			notStarted := false
			cs.Started = &notStarted
		}
		cs.Ready = true
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	st.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		cs := containerStatus(c, p.UID)
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: now}
		cs.Ready, cs.Started = true, &started
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return p, nil
}

// containerStatus names a container as containerd would: an ID and an image digest.
func containerStatus(c corev1.Container, pod types.UID) corev1.ContainerStatus {
	id := sha256.Sum256([]byte(string(pod) + "/" + c.Name))
	img := sha256.Sum256([]byte(c.Image))
	return corev1.ContainerStatus{
		Name: c.Name, Image: c.Image, ImageID: c.Image + "@sha256:" + hex.EncodeToString(img[:]),
		ContainerID: "containerd://" + hex.EncodeToString(id[:]),
	}
}

// lostPod is the Pod of a failed host, as agent.go describes it.
func lostPod(pod *corev1.Pod) *corev1.Pod {
	p := pod.DeepCopy()
	st := &p.Status
	st.Phase = corev1.PodFailed
	st.Reason = "NodeLost"
	st.Message = fmt.Sprintf("Node %v which was running pod %v is unresponsive", p.Spec.NodeName, p.Name)
	setPodCondition(st, corev1.PodReady, corev1.ConditionFalse, "", "")
	setPodCondition(st, corev1.ContainersReady, corev1.ConditionFalse, "", "")
	now := metav1.Now()
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "ContainerStatusUnknown", Message: "The container could not be located when the pod was terminated",
			FinishedAt: now, ContainerID: cs.ContainerID,
		}}
		notStarted := false
		cs.Ready, cs.Started = false, &notStarted
	}
	return p
}

// allocIP gives a Pod the lowest free address of its node's /24 (.2 to .254).
func (a *Agent) allocIP(node string, pod types.UID) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	block := a.blockLocked(node)
	used := a.used[node]
	for host := uint32(2); host < 255; host++ {
		if uid, taken := used[host]; taken && uid != string(pod) {
			continue
		}
		used[host] = string(pod)
		return ipString(a.podCIDR + block<<8 + host), nil
	}
	return "", fmt.Errorf("node %s has no free Pod address", node)
}

func (a *Agent) blockLocked(node string) uint32 {
	if a.used[node] == nil {
		a.used[node] = map[uint32]string{}
	}
	b, ok := a.nodeBlock[node]
	if !ok {
		b = a.nextBlock
		a.nodeBlock[node] = b
		a.nextBlock++
	}
	return b
}

// noteIP records the address of a Pod already running (an agent started again after the
// kube-apiserver restarted), so that no address is handed out twice.
func (a *Agent) noteIP(p *corev1.Pod) {
	ip := net.ParseIP(p.Status.PodIP).To4()
	if ip == nil || p.Spec.NodeName == "" || p.Spec.HostNetwork {
		return
	}
	v := binary.BigEndian.Uint32(ip)
	if v < a.podCIDR {
		return
	}
	block, host := (v-a.podCIDR)>>8, v&0xff
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.used[p.Spec.NodeName] == nil {
		a.used[p.Spec.NodeName] = map[uint32]string{}
	}
	if _, ok := a.nodeBlock[p.Spec.NodeName]; !ok {
		a.nodeBlock[p.Spec.NodeName] = block
		a.nextBlock = max(a.nextBlock, block+1)
	}
	a.used[p.Spec.NodeName][host] = string(p.UID)
}

func ipString(v uint32) string {
	b := make(net.IP, 4)
	binary.BigEndian.PutUint32(b, v)
	return b.String()
}
