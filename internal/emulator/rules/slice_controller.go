package rules

import (
	"cloud.google.com/go/container/apiv1/containerpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// SliceControllerMinVersion is the lowest cluster version of GKE's dynamic slicing: "Use a
// Standard cluster in version 1.35.2-gke.1842000 or later, in the Rapid channel" (GKE, "Use
// dynamic slicing with a custom scheduler", Requirements,
// https://docs.cloud.google.com/kubernetes-engine/docs/how-to/create-dynamic-slices; the same on
// "Schedule dynamic slices with Kueue and TAS",
// https://docs.cloud.google.com/kubernetes-engine/docs/how-to/use-gke-dynamic-slicing). Sub-slicing
// needs 1.36.0-gke.3712000, a rule of the Slice objects, not of the add-on.
const SliceControllerMinVersion = "1.35.2-gke.1842000"

// CheckSliceController refuses the slice controller add-on (addonsConfig.sliceControllerConfig)
// on a cluster outside the Rapid channel or below SliceControllerMinVersion, the requirements of
// the pages above. GKE publishes no error text for either: the texts are INFERRED, in the form of
// the Ray Operator add-on's version error.
func CheckSliceController(addons *containerpb.AddonsConfig, version string, channel containerpb.ReleaseChannel_Channel) *apierr.Error {
	if !addons.GetSliceControllerConfig().GetEnabled() {
		return nil
	}
	if channel != containerpb.ReleaseChannel_RAPID {
		return apierr.Invalid("The Slice Controller add-on requires the RAPID release channel; the cluster's release channel is %s.", channel)
	}
	if VersionLess(version, SliceControllerMinVersion) {
		return apierr.Invalid("The Slice Controller add-on requires GKE version %s or later; the cluster version is %s.", SliceControllerMinVersion, version)
	}
	return nil
}

// MergeAddons sets on current each add-on desired configures and keeps the others: gcloud's
// `clusters update --update-addons` sends only the add-ons it names, and GKE leaves the rest as
// they are (INFERRED: the API reference of desiredAddonsConfig does not say).
func MergeAddons(current, desired *containerpb.AddonsConfig) *containerpb.AddonsConfig {
	out := &containerpb.AddonsConfig{}
	if current != nil {
		out = proto.CloneOf(current)
	}
	src := proto.CloneOf(desired).ProtoReflect()
	dst := out.ProtoReflect()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	return out
}
