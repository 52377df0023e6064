# A node pool by its full id, by {project}/{location}/{cluster}/{name}, or by
# {location}/{cluster}/{name} with the provider's project. raytpu derives the generation and
# topology from the pool's machine type and placement policy.
terraform import raytpu_slice.trillium projects/my-project/locations/us-east5-b/clusters/ray-tpu/nodePools/trillium-4x4
terraform import raytpu_slice.trillium my-project/us-east5-b/ray-tpu/trillium-4x4
terraform import raytpu_slice.trillium us-east5-b/ray-tpu/trillium-4x4
