package emulator

import (
	compute "google.golang.org/api/compute/v1"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/machines"
	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/rules"
)

// Compute Engine's machine types, every one of the emulator's table in every zone (INFERRED: where
// Google offers TPU VMs depends on the zone, which the emulator does not model). The fields are the
// ones of compute v1 MachineType that clients read: guestCpus, memoryMb, isSharedCpu.

func (e *Emulator) machineTypeView(rt computeRoute, m machines.MachineType) *compute.MachineType {
	path := rt.parent() + "/machineTypes/" + m.Name
	return &compute.MachineType{
		Kind: "compute#machineType", Id: stableID(m.Name), CreationTimestamp: "1969-12-31T16:00:00.000-08:00",
		Name: m.Name, Description: m.Name, GuestCpus: int64(m.VCPUs), MemoryMb: m.MemoryMiB, IsSharedCpu: m.SharedCore,
		MaximumPersistentDisks: 128, MaximumPersistentDisksSizeGb: 263168,
		Zone: rt.where, SelfLink: e.computeURL(path),
	}
}

func (e *Emulator) getMachineType(rt computeRoute) (*compute.MachineType, *apierr.Error) {
	m, ok := machines.Lookup(rt.name)
	if !ok || !rules.IsZone(rt.where) {
		return nil, errComputeNotFound(rt.parent() + "/machineTypes/" + rt.name)
	}
	return e.machineTypeView(rt, m), nil
}

func (e *Emulator) listMachineTypes(rt computeRoute) (*compute.MachineTypeList, *apierr.Error) {
	if !rules.IsZone(rt.where) {
		return nil, errComputeNotFound(rt.parent())
	}
	out := &compute.MachineTypeList{Kind: "compute#machineTypeList", Id: rt.parent() + "/machineTypes",
		SelfLink: e.computeURL(rt.parent() + "/machineTypes")}
	for _, m := range machines.All() {
		out.Items = append(out.Items, e.machineTypeView(rt, m))
	}
	return out, nil
}
