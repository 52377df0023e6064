package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/raytpu/terraform-provider-raytpu/internal/kube"
)

// What tells raytpu_ray_cluster and raytpu_ray_service alike that the live object is not what the
// configuration and the slices ask for.

// resolvedInSync tells whether the configuration resolved (diags are those of resolving it) and
// every slice carries the claim of its group: what a RayCluster and a RayService need alike.
func resolvedInSync(groups []resolvedGroup, diags diag.Diagnostics) (bool, string) {
	if diags.HasError() {
		var why []string
		for _, d := range diags.Errors() {
			why = append(why, d.Detail())
		}
		return false, strings.Join(why, " ")
	}
	for _, g := range groups {
		for _, s := range g.slices {
			if held, _ := kube.ClaimOf(s.labels); g.Claim != nil && held != *g.Claim {
				return false, fmt.Sprintf("slice %s is not labelled for worker group %q (a slice replaced or its labels changed)", s.id.Name, g.Name)
			}
		}
	}
	return true, ""
}

// specHash identifies the spec of a KubeRay object (a RayCluster's, a RayService's) as the API
// server stores it.
func specHash(spec any) string {
	data, _ := json.Marshal(spec)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
