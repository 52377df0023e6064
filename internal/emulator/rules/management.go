package rules

import (
	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/raytpu/terraform-provider-raytpu/internal/emulator/apierr"
)

// CreateChannel is the release channel a new cluster is enrolled in: the one it asks for, else
// REGULAR, GKE's default for a new cluster ("If you don't specify a release channel ... the
// cluster is enrolled in the Regular channel", GKE "About release channels").
func CreateChannel(pb *containerpb.Cluster) containerpb.ReleaseChannel_Channel {
	if pb.ReleaseChannel == nil {
		return containerpb.ReleaseChannel_REGULAR
	}
	return pb.ReleaseChannel.GetChannel()
}

// CheckManagement applies GKE's rule for the node pools of a cluster enrolled in a release
// channel, in GKE's words: "Auto_upgrade and auto_repair cannot be false when release_channel
// REGULAR is set." (a 400 badRequest quoted in
// kaiwaehner/hivemq-mqtt-tensorflow-kafka-realtime-iot-machine-learning-training-inference#47).
// An unset management counts as GKE's default, both true. Flex-start pools are exempt:
// cluster-toolkit's flex-start tpu7x example runs auto_repair false on the REGULAR channel, and
// requires it for flex-start ("enable_flex_start needs node auto_repair set to false",
// GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool) — INFERRED from a tool that
// is used against GKE, not from GKE's documentation.
func CheckManagement(channel containerpb.ReleaseChannel_Channel, np *containerpb.NodePool) *apierr.Error {
	m := np.GetManagement()
	if channel == containerpb.ReleaseChannel_UNSPECIFIED || m == nil || (m.AutoUpgrade && m.AutoRepair) || np.GetConfig().GetFlexStart() { //nolint:staticcheck // GKE's value for a cluster without a channel
		return nil
	}
	return apierr.Invalid("Auto_upgrade and auto_repair cannot be false when release_channel %s is set.", channel)
}
