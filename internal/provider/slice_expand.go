package provider

import (
	"context"
	"fmt"

	"cloud.google.com/go/container/apiv1/containerpb"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/raytpu/terraform-provider-raytpu/internal/tpu"
)

// flattenNodePool copies what GKE reports into m and derives the outputs from it, so that an
// imported slice or one changed outside Terraform shows its real shape. A node pool that is no TPU
// slice raytpu can describe (a CPU pool, a shape of another tool) is read all the same, with what
// cannot be derived left null: reading describes whatever GKE holds, strictness is for what
// raytpu creates.
func flattenNodePool(ctx context.Context, pool *containerpb.NodePool, m *sliceResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	cfg := pool.GetConfig()
	// Every create and read records capacity_used; a slice without it has only been adopted
	// (sliceAdoptedAttributes): imported, moved or listed.
	adopted := m.CapacityUsed.IsNull()
	current, _ := resolveShape(m.shape())
	s, err := nodePoolSlice(pool, current)
	switch {
	case err != nil:
		diags.AddWarning("Not a TPU Slice", fmt.Sprintf("node pool %s is not a TPU slice raytpu can describe (%s): its TPU shape and "+
			"the outputs for Ray are unknown, and a configuration that gives it a TPU shape replaces it.", pool.GetName(), err))
		m.Generation, m.Topology, m.AcceleratorType, m.ChipsPerHost = types.StringNull(), types.StringNull(), types.StringNull(), types.Int64Null()
		m.setOutputsNull()
		m.MachineType = types.StringValue(cfg.GetMachineType())
		m.NumHosts = types.Int64Value(int64(pool.GetInitialNodeCount()) * int64(max(len(pool.GetLocations()), 1)))
	case current != s:
		// Keep the configuration's spelling when it names the same shape (an alias, or accelerator_type).
		m.Generation = types.StringValue(s.Generation.Name)
		m.Topology = types.StringValue(s.Topology.String())
		m.AcceleratorType = types.StringValue(s.AcceleratorType())
		m.ChipsPerHost = types.Int64Value(int64(s.ChipsPerHost()))
	}
	if s != nil {
		outputs, d := deriveSliceOutputs(ctx, s, pool.GetName(), m.rayVersion(), m.pythonVersion())
		diags.Append(d...)
		m.setOutputs(outputs)
	}
	m.Name = types.StringValue(pool.GetName())
	m.CurrentNodeVersion = types.StringValue(pool.GetVersion())
	diags.Append(m.readCapacity(ctx, pool)...)
	if name := pool.GetPlacementPolicy().GetPolicyName(); name != "" {
		m.PlacementPolicyName = types.StringValue(name)
	}
	if sa := cfg.GetServiceAccount(); sa != "" && sa != "default" {
		m.ServiceAccount = types.StringValue(sa)
	}
	m.DiskSizeGB = types.Int64Value(int64(cfg.GetDiskSizeGb()))
	m.DiskType = types.StringValue(cfg.GetDiskType())
	m.OAuthScopes = keepScopes(ctx, m.OAuthScopes, cfg.GetOauthScopes(), &diags)
	m.Labels = configuredLabels(ctx, cfg.GetLabels(), m.Labels, adopted, &diags)
	m.ResourceLabels = mapOrNull(ctx, userLabels(cfg.GetResourceLabels()), m.ResourceLabels, &diags)
	return diags
}

// nodePoolSlice is the slice a node pool holds. A pool placed by a workload policy may not report
// its topology (the policy holds it); then the known slice stands if the machine type and the
// node count agree with it.
func nodePoolSlice(pool *containerpb.NodePool, known *tpu.Slice) (*tpu.Slice, error) {
	machineType, topology := pool.GetConfig().GetMachineType(), pool.GetPlacementPolicy().GetTpuTopology()
	if topology == "" && pool.GetPlacementPolicy().GetPolicyName() != "" {
		if known != nil && known.MachineType.Name == machineType && int(pool.GetInitialNodeCount()) == known.Hosts {
			return known, nil
		}
		return nil, fmt.Errorf("it is placed by workload policy %s and reports no TPU topology", pool.GetPlacementPolicy().GetPolicyName())
	}
	s, err := tpu.SliceForNodePool(machineType, topology)
	if err != nil {
		return nil, err
	}
	if known != nil && *known == *s {
		return known, nil
	}
	return s, nil
}

// mapOrNull keeps an unset map unset when GKE reports it empty.
func mapOrNull(ctx context.Context, values map[string]string, current types.Map, diags *diag.Diagnostics) types.Map {
	if len(values) == 0 && current.IsNull() {
		return current
	}
	m, d := types.MapValueFrom(ctx, types.StringType, values)
	diags.Append(d...)
	return m
}

// expandNodePool is the CreateNodePool request body for the slice on capacity choice c.
func expandNodePool(ctx context.Context, m sliceResourceModel, s *tpu.Slice, c capacityChoice) (*containerpb.NodePool, diag.Diagnostics) {
	var diags diag.Diagnostics
	labels, resourceLabels := map[string]string{}, map[string]string{}
	diags.Append(m.Labels.ElementsAs(ctx, &labels, false)...)
	diags.Append(m.ResourceLabels.ElementsAs(ctx, &resourceLabels, false)...)
	var scopes []string
	if !m.OAuthScopes.IsUnknown() {
		diags.Append(m.OAuthScopes.ElementsAs(ctx, &scopes, false)...)
	}
	pool := &containerpb.NodePool{
		Name:    m.Name.ValueString(),
		Version: m.CurrentNodeVersion.ValueString(),
		Config: &containerpb.NodeConfig{
			MachineType:    s.MachineType.Name,
			Labels:         labels,
			ResourceLabels: resourceLabels,
			ServiceAccount: m.ServiceAccount.ValueString(),
			OauthScopes:    scopes,
			DiskSizeGb:     int32(m.DiskSizeGB.ValueInt64()),
			DiskType:       m.DiskType.ValueString(),
		},
	}
	if set := func(b types.Bool) bool { return !b.IsNull() && !b.IsUnknown() }; set(m.AutoRepair) || set(m.AutoUpgrade) {
		// GKE's default is true for both; one left unset keeps it.
		pool.Management = &containerpb.NodeManagement{
			AutoRepair:  !set(m.AutoRepair) || m.AutoRepair.ValueBool(),
			AutoUpgrade: !set(m.AutoUpgrade) || m.AutoUpgrade.ValueBool(),
		}
	}
	switch s.Placement {
	case tpu.PlacementCompact:
		pool.PlacementPolicy = &containerpb.NodePool_PlacementPolicy{Type: containerpb.NodePool_PlacementPolicy_COMPACT, TpuTopology: s.TPUTopology()}
	case tpu.PlacementWorkloadPolicy:
		pool.PlacementPolicy = &containerpb.NodePool_PlacementPolicy{PolicyName: m.PlacementPolicyName.ValueString()}
	}
	m.applyCapacity(pool, c, s.Hosts)
	markOwnPool(pool)
	return pool, diags
}

// configShape is the shape inputs as written in the configuration.
func (m sliceResourceModel) configShape() shapeInputs {
	return shapeInputs{Generation: m.Generation, Topology: m.Topology, AcceleratorType: m.AcceleratorType, ChipsPerHost: m.ChipsPerHost}
}

// shape is the shape of a planned or stored slice, where generation, topology and
// accelerator_type are all set and name the same shape: generation and topology are read.
func (m sliceResourceModel) shape() shapeInputs {
	if m.Generation.IsNull() {
		return shapeInputs{Generation: types.StringNull(), Topology: types.StringNull(), AcceleratorType: m.AcceleratorType, ChipsPerHost: m.ChipsPerHost}
	}
	return shapeInputs{Generation: m.Generation, Topology: m.Topology, AcceleratorType: types.StringNull(), ChipsPerHost: m.ChipsPerHost}
}

// setOutputs copies the derived outputs; accelerator_type, which may also be an input, is the
// caller's to set.
func (m *sliceResourceModel) setOutputs(o sliceOutputs) {
	m.GKEAccelerator, m.MachineType = o.GKEAccelerator, o.MachineType
	m.NumHosts, m.TotalChips, m.MultiHost, m.PlacementType = o.NumHosts, o.TotalChips, o.MultiHost, o.PlacementType
	m.NodeSelector, m.Tolerations, m.TPUResource = o.NodeSelector, o.Tolerations, o.TPUResource
	m.Ray, m.SlicePlacementGroup, m.KubeRayWorkerGroup = o.Ray, o.SlicePlacementGroup, o.KubeRayWorkerGroup
}

// deriveOutputs sets the outputs derived from the slice s and its name; while the name is unknown
// (a name_prefix slice before it is created), those that hold it are unknown too.
func (m *sliceResourceModel) deriveOutputs(ctx context.Context, s *tpu.Slice) diag.Diagnostics {
	outputs, diags := deriveSliceOutputs(ctx, s, m.Name.ValueString(), m.rayVersion(), m.pythonVersion())
	m.setOutputs(outputs)
	if m.Name.IsUnknown() {
		m.NodeSelector, m.KubeRayWorkerGroup = types.MapUnknown(types.StringType), types.StringUnknown()
	}
	return diags
}

// setOutputsNull clears the derived outputs, for a node pool whose TPU shape is unknown.
func (m *sliceResourceModel) setOutputsNull() {
	m.GKEAccelerator, m.MachineType, m.PlacementType, m.KubeRayWorkerGroup = types.StringNull(), types.StringNull(), types.StringNull(), types.StringNull()
	m.NumHosts, m.TotalChips = types.Int64Null(), types.Int64Null()
	m.MultiHost = types.BoolNull()
	m.NodeSelector, m.TPUResource = types.MapNull(types.StringType), types.MapNull(types.StringType)
	m.Tolerations = types.ListNull(types.ObjectType{AttrTypes: tolerationAttrTypes})
	m.Ray = types.ObjectNull(sliceRayAttrTypes)
	m.SlicePlacementGroup = types.ObjectNull(placementGroupAttrTypes)
}

func (m *sliceResourceModel) setDerivedUnknown() {
	m.GKEAccelerator, m.MachineType, m.PlacementType, m.KubeRayWorkerGroup = types.StringUnknown(), types.StringUnknown(), types.StringUnknown(), types.StringUnknown()
	m.NumHosts, m.TotalChips = types.Int64Unknown(), types.Int64Unknown()
	m.MultiHost = types.BoolUnknown()
	m.NodeSelector, m.TPUResource = types.MapUnknown(types.StringType), types.MapUnknown(types.StringType)
	m.Tolerations = types.ListUnknown(types.ObjectType{AttrTypes: tolerationAttrTypes})
	m.Ray = types.ObjectUnknown(sliceRayAttrTypes)
	m.SlicePlacementGroup = types.ObjectUnknown(placementGroupAttrTypes)
}

// setLiveNull keeps unknown live values out of the state written before the pool is ready.
func (m *sliceResourceModel) setLiveNull() {
	if m.DiskSizeGB.IsUnknown() {
		m.DiskSizeGB = types.Int64Null()
	}
	if m.DiskType.IsUnknown() {
		m.DiskType = types.StringNull()
	}
	if m.OAuthScopes.IsUnknown() {
		m.OAuthScopes = types.ListNull(types.StringType)
	}
	if m.CurrentNodeVersion.IsUnknown() {
		m.CurrentNodeVersion = types.StringNull()
	}
	if m.AutoRepair.IsUnknown() {
		m.AutoRepair = types.BoolNull()
	}
	if m.AutoUpgrade.IsUnknown() {
		m.AutoUpgrade = types.BoolNull()
	}
	m.Hosts, m.FailedHosts = types.ListNull(types.StringType), types.ListNull(types.StringType)
	m.ReadyHosts, m.Status, m.Healthy = types.Int64Null(), types.StringNull(), types.BoolNull()
}

// The Ray image of a slice whose configuration names none.
const (
	defaultRayVersion    = "2.55.0"
	defaultPythonVersion = "3.10"
)

func (m sliceResourceModel) rayVersion() string { return valueOr(m.RayVersion, defaultRayVersion) }
func (m sliceResourceModel) pythonVersion() string {
	return valueOr(m.PythonVersion, defaultPythonVersion)
}

func valueOr(v types.String, fallback string) string {
	if v.IsNull() || v.IsUnknown() {
		return fallback
	}
	return v.ValueString()
}
