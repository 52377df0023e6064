package kube

import (
	"context"
	"crypto/sha1" //nolint:gosec // KubeRay's hash, compared with the one it writes, not a security measure
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strconv"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// How KubeRay v1.5.0's RayService controller meets a changed rayClusterConfig
// (ray-operator controllers/ray/rayservice_controller.go): it writes on each RayCluster it makes
// the hash of the rayClusterConfig with every worker group's replicas, minReplicas, maxReplicas
// and scaleStrategy.workersToDelete muted (generateHashWithoutReplicasAndWorkersToDelete,
// annotation ray.io/hash-without-replicas-and-workers-to-delete) and the number of worker groups
// (ray.io/num-worker-groups). Then (shouldUpdateCluster, isClusterSpecHashEqual,
// shouldPrepareNewCluster):
//   - the same hash: it leaves the RayCluster alone, its replicas included;
//   - groups appended at the end, the others the same hash: it updates the RayCluster in place
//     from the whole rayClusterConfig (constructRayClusterForRayService, modifyRayCluster);
//   - anything else: a new RayCluster with upgrade strategy NewCluster, nothing with None.
const (
	clusterHashAnnotation      = "ray.io/hash-without-replicas-and-workers-to-delete"
	clusterNumGroupsAnnotation = "ray.io/num-worker-groups"
)

// ConfigChange is what KubeRay does with a RayService's new rayClusterConfig for the RayCluster
// that runs.
type ConfigChange int

const (
	// ConfigSame: KubeRay leaves the RayCluster alone; a change of replicas or of the slices a
	// group's claim selects reaches it only if raytpu scales it (ScaleRayServiceCluster).
	ConfigSame ConfigChange = iota
	// ConfigAppended: worker groups appended at the end; KubeRay updates the RayCluster in place.
	ConfigAppended
	// ConfigNewCluster: KubeRay brings up a new RayCluster (upgrade strategy NewCluster).
	ConfigNewCluster
)

func (c ConfigChange) String() string {
	return [...]string{"same", "appended", "new cluster"}[c]
}

// RayClusterConfigHash is KubeRay's hash of a rayClusterConfig without the replicas of its groups
// (generateHashWithoutReplicasAndWorkersToDelete over utils.GenerateJsonHash: encoding/json, SHA-1,
// base32 hex). It is reproduced rather than imported: the package that exports GenerateJsonHash
// brings KubeRay's controller runtime and metrics into the provider; kube's tests hold the copy
// against the hash the operator itself writes.
func RayClusterConfigHash(spec rayv1.RayClusterSpec) (string, error) {
	muted := spec.DeepCopy()
	for i := range muted.WorkerGroupSpecs {
		g := &muted.WorkerGroupSpecs[i]
		g.Replicas, g.MinReplicas, g.MaxReplicas, g.ScaleStrategy.WorkersToDelete = nil, nil, nil, nil
	}
	data, err := json.Marshal(muted)
	if err != nil {
		return "", fmt.Errorf("kube: hashing a rayClusterConfig: %w", err)
	}
	sum := sha1.Sum(data) //nolint:gosec // see the import
	return base32.HexEncoding.EncodeToString(sum[:]), nil
}

// ClassifyConfig says what KubeRay does for a RayCluster made from running with next.
func ClassifyConfig(running, next rayv1.RayClusterSpec) (ConfigChange, error) {
	hash, err := RayClusterConfigHash(running)
	if err != nil {
		return 0, err
	}
	return classifyAgainst(hash, len(running.WorkerGroupSpecs), next)
}

// ClassifyAgainstCluster is ClassifyConfig against the RayCluster KubeRay made, by the hash and the
// number of groups it wrote on it; a RayCluster without them is one KubeRay would replace.
func ClassifyAgainstCluster(rc *rayv1.RayCluster, next rayv1.RayClusterSpec) (ConfigChange, error) {
	hash := rc.Annotations[clusterHashAnnotation]
	groups, ok := annotatedGroups(rc)
	if hash == "" || !ok {
		return ConfigNewCluster, nil // as isClusterSpecHashEqual meets them: not equal
	}
	return classifyAgainst(hash, groups, next)
}

// annotatedGroups is the number of worker groups KubeRay wrote on rc.
func annotatedGroups(rc *rayv1.RayCluster) (int, bool) {
	n, err := strconv.Atoi(rc.Annotations[clusterNumGroupsAnnotation])
	return n, err == nil
}

func classifyAgainst(hash string, groups int, next rayv1.RayClusterSpec) (ConfigChange, error) {
	nextHash, err := RayClusterConfigHash(next)
	if err != nil {
		return 0, err
	}
	if nextHash == hash {
		return ConfigSame, nil
	}
	if len(next.WorkerGroupSpecs) <= groups {
		return ConfigNewCluster, nil
	}
	head := *next.DeepCopy()
	head.WorkerGroupSpecs = head.WorkerGroupSpecs[:groups]
	if headHash, err := RayClusterConfigHash(head); err != nil || headHash != hash {
		return ConfigNewCluster, err
	}
	return ConfigAppended, nil
}

// GroupScale is what one worker group of a running RayCluster is set to.
type GroupScale struct {
	Name            string
	Replicas        int
	WorkersToDelete []string
}

// ScaleRayCluster sets the replicas (and minReplicas, maxReplicas) and workersToDelete of the
// named groups of a running RayCluster: for a RayService's, what KubeRay does not carry over
// from a rayClusterConfig whose hash stayed the same. A JSON patch that tests each group's name
// at its index changes nothing when the groups moved meanwhile.
func (c *Client) ScaleRayCluster(ctx context.Context, rc *rayv1.RayCluster, scales []GroupScale) error {
	var ops []map[string]any
	for _, s := range scales {
		i := groupIndex(rc, s.Name)
		if i < 0 {
			return fmt.Errorf("kube: RayCluster %s/%s has no worker group %q to scale", rc.Namespace, rc.Name, s.Name)
		}
		at := fmt.Sprintf("/spec/workerGroupSpecs/%d", i)
		toDelete := s.WorkersToDelete
		if toDelete == nil {
			toDelete = []string{}
		}
		ops = append(ops,
			map[string]any{"op": "test", "path": at + "/groupName", "value": s.Name},
			map[string]any{"op": "add", "path": at + "/replicas", "value": s.Replicas},
			map[string]any{"op": "add", "path": at + "/minReplicas", "value": s.Replicas},
			map[string]any{"op": "add", "path": at + "/maxReplicas", "value": s.Replicas},
			map[string]any{"op": "add", "path": at + "/scaleStrategy", "value": map[string]any{"workersToDelete": toDelete}},
		)
	}
	if len(ops) == 0 {
		return nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("kube: scaling RayCluster %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	_, err = c.dynamic.Resource(rayClusterGVR).Namespace(rc.Namespace).Patch(ctx, rc.Name, types.JSONPatchType, patch,
		metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return c.rayClusterError("scaling", rc.Namespace, rc.Name, err)
	}
	return nil
}

func groupIndex(rc *rayv1.RayCluster, name string) int {
	for i, g := range rc.Spec.WorkerGroupSpecs {
		if g.GroupName == name {
			return i
		}
	}
	return -1
}
